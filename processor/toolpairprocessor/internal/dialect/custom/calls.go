package custom

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
)

// callsPaths are the dotted paths of a Calls value, split into segments: to the list of
// calls, and to the ID and the tool name in each of its entries.
type callsPaths struct {
	list, id, name []string
}

// parsePaths splits the paths of cfg (with its defaults applied); an empty segment (two dots
// in a row, a leading or trailing dot) is refused, naming the key.
func parsePaths(cfg Config) (callsPaths, error) {
	var p callsPaths
	var errs []error
	split := func(key, path string, allowEmpty bool) []string {
		if path == "" {
			if !allowEmpty {
				errs = append(errs, keyError(key, errors.New("must not be empty")))
			}
			return nil
		}
		segs := strings.Split(path, ".")
		for _, s := range segs {
			if s == "" {
				errs = append(errs, keyError(key, fmt.Errorf("%q has an empty segment", path)))
				return nil
			}
		}
		return segs
	}
	p.list = split("calls_path", cfg.CallsPath, true)
	p.id = split("call_id_path", cfg.CallIDPath, false)
	p.name = split("tool_name_path", cfg.ToolNamePath, false)
	return p, errors.Join(errs...)
}

// errWrongType: the value is not a JSON document, a list or a map.
var errWrongType = errors.New("calls value of a wrong type")

// each calls fn with the call ID and tool name of every entry of the list of calls in v, the
// value of a Calls expression: a JSON string, or a structured list or map (pcommon or Go).
// Nothing (nil, an empty string, no list at the path) announces no call. Malformed input is
// skipped into f: JSON that does not parse (invalid_json), a list path that leads to
// something other than a list or a value of another type (invalid_type), an entry whose ID
// is missing, null or not a string (as dialect.Found.CallID). A tool name that is not a
// string is left empty.
func (p *callsPaths) each(v any, f *dialect.Found, fn func(id, tool string)) {
	doc, err := document(v)
	switch {
	case errors.Is(err, errWrongType):
		f.Skip(dialect.ReasonInvalidType)
		return
	case err != nil:
		f.Skip(dialect.ReasonInvalidJSON)
		return
	case doc == nil:
		return
	}
	list, found := walk(doc, p.list)
	if !found || list == nil {
		return
	}
	entries, ok := list.([]any)
	if !ok {
		f.Skip(dialect.ReasonInvalidType)
		return
	}
	for _, e := range entries {
		idv, found := walk(e, p.id)
		if found && idv == nil {
			f.Skip(dialect.ReasonNullCallID)
			continue
		}
		id, ok := idValue(idv, f)
		if !ok {
			continue
		}
		name, _ := walk(e, p.name)
		tool, _ := name.(string)
		fn(id, tool)
	}
}

// document turns a Calls value into Go values (map[string]any, []any, string, float64, bool,
// nil): a string is read as JSON.
func document(v any) (any, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		if strings.TrimSpace(v) == "" {
			return nil, nil
		}
		var doc any
		if err := json.Unmarshal([]byte(v), &doc); err != nil {
			return nil, err
		}
		return doc, nil
	case []byte:
		return document(string(v))
	case pcommon.Value:
		if v.Type() == pcommon.ValueTypeStr {
			return document(v.Str())
		}
		if v.Type() == pcommon.ValueTypeEmpty {
			return nil, nil
		}
		return document(v.AsRaw())
	case pcommon.Slice:
		return v.AsRaw(), nil
	case pcommon.Map:
		return v.AsRaw(), nil
	case []any, map[string]any:
		return v, nil
	}
	return nil, errWrongType
}

// walk follows a dotted path's segments into Go values: a segment is a map key, or the index
// of a list entry. It reports whether the path exists (a null at its end exists).
func walk(v any, path []string) (any, bool) {
	for _, seg := range path {
		switch c := v.(type) {
		case map[string]any:
			next, ok := c[seg]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}
