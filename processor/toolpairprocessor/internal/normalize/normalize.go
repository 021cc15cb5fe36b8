// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

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

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
)

// The default paths (OpenClaw's fields; the processor's default configuration): their flat
// keys and first segments are registered with package fields, so that ApplyIn reads them from
// a record's one pass over its attributes instead of scanning the attributes for each.
const DefaultCanonical = "durationMs"

// DefaultMirrors are the default mirror paths (see DefaultCanonical).
var DefaultMirrors = []string{"metadata.durationMs", "details.durationMs", "details.metadata.durationMs"}

func init() {
	for _, p := range append([]string{DefaultCanonical}, DefaultMirrors...) {
		fields.Register(p)
		head, _, _ := strings.Cut(p, ".")
		fields.Register(head)
	}
}

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
	return n.apply(mapGetter{m})
}

// ApplyIn is Apply on the attribute map a reads (dialect.Found.Attrs): the registered keys
// of the paths come from a's one pass, the others from fields.Get as in Apply. Only values are
// set, so a stays valid.
func (n *Normalizer) ApplyIn(a *fields.Record) bool {
	return n.apply(a)
}

// getter reads the top-level keys of a map: fields.Record or mapGetter.
type getter interface {
	Get(key string) (pcommon.Value, bool)
}

// mapGetter reads a map with fields.Get.
type mapGetter struct{ m pcommon.Map }

func (g mapGetter) Get(key string) (pcommon.Value, bool) { return fields.Get(g.m, key) }

func (n *Normalizer) apply(top getter) bool {
	v, ok := lookup(top, n.canonical)
	if !ok {
		return false
	}
	ms, ok := millis(v)
	if !ok {
		return false
	}
	changed := false
	for _, p := range n.mirrors {
		if mv, ok := lookup(top, p); ok {
			if mv.Type() != pcommon.ValueTypeInt || mv.Int() != ms {
				mv.SetInt(ms)
				changed = true
			}
		}
	}
	return changed
}

// lookup finds path in the map top reads: the flat key first, then nested maps.
func lookup(top getter, path string) (pcommon.Value, bool) {
	if v, ok := top.Get(path); ok {
		return v, true
	}
	head, rest, nested := strings.Cut(path, ".")
	if !nested {
		return pcommon.Value{}, false // the flat key was the whole path
	}
	v, ok := top.Get(head)
	for {
		if !ok {
			return pcommon.Value{}, false
		}
		if v.Type() != pcommon.ValueTypeMap {
			return pcommon.Value{}, false
		}
		cur := v.Map()
		if fv, ok := fields.Get(cur, rest); ok { // a flat dotted key inside the nested map
			return fv, true
		}
		head, rest, nested = strings.Cut(rest, ".")
		v, ok = fields.Get(cur, head)
		if !nested {
			return v, ok
		}
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

// ReadIn returns the duration in milliseconds that the attribute map a reads states (see
// ApplyIn): the canonical field's value, else the first mirror present, each read as the
// canonical field is (an int, a double rounded to the nearest ms, or a numeric string); ok is
// false when none is present and valid. After Apply the two agree: ReadIn gives the value
// every normalized field holds.
func (n *Normalizer) ReadIn(a *fields.Record) (ms int64, ok bool) { return n.read(a) }

// ReadMap is ReadIn on the map m (a map body).
func (n *Normalizer) ReadMap(m pcommon.Map) (ms int64, ok bool) { return n.read(mapGetter{m}) }

func (n *Normalizer) read(top getter) (int64, bool) {
	if v, ok := lookup(top, n.canonical); ok {
		if ms, ok := millis(v); ok {
			return ms, true
		}
	}
	for _, p := range n.mirrors {
		if v, ok := lookup(top, p); ok {
			if ms, ok := millis(v); ok {
				return ms, true
			}
		}
	}
	return 0, false
}

// Millis reads a duration in milliseconds from an int, a double (rounded to the nearest ms) or
// a numeric string, as the canonical field is read; ok is false for any other value.
func Millis(v pcommon.Value) (int64, bool) { return millis(v) }
