// Package normalize makes the duration fields of tool_result records agree (specification
// section 5, after OpenClaw's rules): when a record has the canonical duration field, every
// mirror field it already has is set to the same value, as an int of milliseconds.
//
// A path is dotted ("details.durationMs"). In an attribute map it names either a flat key
// with that exact name (the OTel convention for attribute names) or, when there is none,
// nested maps ("details" holding "durationMs"); in a map body, nested maps.
//
// Rules:
//   - the canonical value may be an int, a double (rounded to the nearest ms) or a numeric
//     string; anything else counts as missing;
//   - a missing canonical field writes nothing: a mirror-only record is never promoted;
//   - a mirror is written only where it already exists; it is never created.
package normalize

import (
	"math"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Normalizer applies one canonical field and its mirrors.
type Normalizer struct {
	canonical string
	mirrors   []string
}

// New returns a Normalizer for the canonical path and mirror paths (dotted).
func New(canonical string, mirrors []string) *Normalizer {
	return &Normalizer{canonical: canonical, mirrors: mirrors}
}

// Apply normalizes m and reports whether it changed anything.
func (n *Normalizer) Apply(m pcommon.Map) bool {
	v, ok := lookup(m, n.canonical)
	if !ok {
		return false
	}
	ms, ok := millis(v)
	if !ok {
		return false
	}
	changed := false
	for _, p := range n.mirrors {
		if mv, ok := lookup(m, p); ok {
			if mv.Type() != pcommon.ValueTypeInt || mv.Int() != ms {
				mv.SetInt(ms)
				changed = true
			}
		}
	}
	return changed
}

// lookup finds path in m: the flat key first, then nested maps.
func lookup(m pcommon.Map, path string) (pcommon.Value, bool) {
	if v, ok := m.Get(path); ok {
		return v, true
	}
	cur := m
	for {
		head, rest, nested := strings.Cut(path, ".")
		v, ok := cur.Get(head)
		if !ok {
			return pcommon.Value{}, false
		}
		if !nested {
			return v, true
		}
		if v.Type() != pcommon.ValueTypeMap {
			return pcommon.Value{}, false
		}
		if fv, ok := v.Map().Get(rest); ok { // a flat dotted key inside the nested map
			return fv, true
		}
		cur, path = v.Map(), rest
	}
}

// millis reads a duration in milliseconds from an int, a double or a numeric string.
func millis(v pcommon.Value) (int64, bool) {
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return v.Int(), true
	case pcommon.ValueTypeDouble:
		return round(v.Double())
	case pcommon.ValueTypeStr:
		s := strings.TrimSpace(v.Str())
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, true
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return round(f)
		}
	}
	return 0, false
}

func round(f float64) (int64, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > math.MaxInt64/2 {
		return 0, false
	}
	return int64(math.Round(f)), true
}
