// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package custom

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
)

// Wildcard is the calls_path segment that stands for every entry of a list: "*.parts" reads
// the parts of every message of a list of messages.
const Wildcard = "*"

// callsPaths are the dotted paths of a Calls value, split into segments: to the lists of
// calls (list may hold Wildcard segments), to the ID and the tool name in each of their
// entries, and the conditions of CallsMatch an entry must meet.
type callsPaths struct {
	list, id, name []string
	match          []entryMatch
}

// entryMatch is one condition of CallsMatch: the entry holds the string value at path.
type entryMatch struct {
	path  []string
	value string
}

// parsePaths splits the paths of cfg (with its defaults applied); an empty segment (two dots
// in a row, a leading or trailing dot) is refused, and so is a Wildcard outside calls_path,
// naming the key.
func parsePaths(cfg Config) (callsPaths, error) {
	var p callsPaths
	var errs []error
	split := func(key, path string, allowEmpty, allowWildcard bool) []string {
		if path == "" {
			if !allowEmpty {
				errs = append(errs, keyError(key, errors.New("must not be empty")))
			}
			return nil
		}
		segs := strings.Split(path, ".")
		for _, s := range segs {
			switch {
			case s == "":
				errs = append(errs, keyError(key, fmt.Errorf("%q has an empty segment", path)))
				return nil
			case s == Wildcard && !allowWildcard:
				errs = append(errs, keyError(key, fmt.Errorf("%q: the wildcard %q is allowed only in calls_path", path, Wildcard)))
				return nil
			}
		}
		return segs
	}
	p.list = split("calls_path", cfg.CallsPath, true, true)
	p.id = split("call_id_path", cfg.CallIDPath, false, false)
	p.name = split("tool_name_path", cfg.ToolNamePath, false, false)
	for _, path := range slices.Sorted(maps.Keys(cfg.CallsMatch)) {
		value := cfg.CallsMatch[path]
		if value == "" {
			errs = append(errs, keyError("calls_match", fmt.Errorf("the value of %q must not be empty", path)))
			continue
		}
		if segs := split("calls_match", path, false, false); segs != nil {
			p.match = append(p.match, entryMatch{path: segs, value: value})
		}
	}
	return p, errors.Join(errs...)
}

// matches reports whether the call entry e meets every condition of CallsMatch: a string
// equal to the condition's value at its path.
func (p *callsPaths) matches(e any) bool {
	for _, m := range p.match {
		v, _ := walk(e, m.path)
		if s, ok := v.(string); !ok || s != m.value {
			return false
		}
	}
	return true
}

// errWrongType: the value is not a JSON document, a list or a map.
var errWrongType = errors.New("calls value of a wrong type")

// each calls fn with the call ID and tool name of every entry of the lists of calls in v, the
// value of a Calls expression: a JSON string, or a structured list or map (pcommon or Go).
// The list path leads to one list, or to one per entry of the lists its Wildcard segments
// pass through; their entries are read in order. Nothing (nil, an empty string, no list at
// the path) announces no call. An entry that does not meet CallsMatch is passed over: no call
// and nothing malformed. Malformed input is skipped into f: JSON that does not parse
// (invalid_json), a list path that leads to something other than a list or a value of
// another type (invalid_type), an entry whose ID is missing, null or not a string (as
// dialect.Found.CallID). A tool name that is not a string is left empty.
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
	reach(doc, p.list, func(list any) {
		if list == nil {
			return
		}
		entries, ok := list.([]any)
		if !ok {
			f.Skip(dialect.ReasonInvalidType)
			return
		}
		for _, e := range entries {
			if !p.matches(e) {
				continue
			}
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
	})
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

// reach calls fn with each value a list path leads to in v: a Wildcard segment goes on into
// every entry of a list, in order (into nothing when the value there is not a list), every
// other segment as walk does. A path that does not exist leads to nothing; a null at its end
// is a value (nil).
func reach(v any, path []string, fn func(any)) {
	for i, seg := range path {
		if seg == Wildcard {
			list, _ := v.([]any)
			for _, e := range list {
				reach(e, path[i+1:], fn)
			}
			return
		}
		next, ok := step(v, seg)
		if !ok {
			return
		}
		v = next
	}
	fn(v)
}

// walk follows a dotted path's segments into Go values: a segment is a map key, or the index
// of a list entry. It reports whether the path exists (a null at its end exists).
func walk(v any, path []string) (any, bool) {
	for _, seg := range path {
		next, ok := step(v, seg)
		if !ok {
			return nil, false
		}
		v = next
	}
	return v, true
}

// step follows one segment: a map key, or the index of a list entry.
func step(v any, seg string) (any, bool) {
	switch c := v.(type) {
	case map[string]any:
		next, ok := c[seg]
		return next, ok
	case []any:
		i, err := strconv.Atoi(seg)
		if err != nil || i < 0 || i >= len(c) {
			return nil, false
		}
		return c[i], true
	}
	return nil, false
}
