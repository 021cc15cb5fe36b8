// Package fields reads the fields of records as the processor must (CONTRACT section 2): of a
// key repeated within one attribute map or map body, the last occurrence. OTLP can carry the
// same key twice in one record (an agent records a span field when the span starts and again
// when it changes, and exports both); pcommon.Map keeps every occurrence and its Get returns
// the first, where an SDK's attribute collection would have kept the last.
//
// Every field the processor reads from a pcommon.Map (record and resource attributes, map
// bodies, nested maps) goes through Get. It scans the whole map, where pcommon.Map.Get stops
// at the first match: the same cost for a key that is absent, at most the rest of the map for
// one that is present.
package fields

import "go.opentelemetry.io/collector/pdata/pcommon"

// Get returns the value of the last occurrence of key in m, and whether key occurs. The value
// refers into m, as pcommon.Map.Get's does.
func Get(m pcommon.Map, key string) (pcommon.Value, bool) {
	var last pcommon.Value
	found := false
	for k, v := range m.All() {
		if k == key {
			last, found = v, true
		}
	}
	return last, found
}

// Str returns the value of the last occurrence of key in m when it is a string, else "".
func Str(m pcommon.Map, key string) string {
	if v, ok := Get(m, key); ok && v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return ""
}
