// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package fields reads the fields of records as the processor must (specification section 2): of a
// key repeated within one attribute map or map body, the last occurrence. OTLP can carry the
// same key twice in one record (an agent records a span field when the span starts and again
// when it changes, and exports both); pcommon.Map keeps every occurrence and its Get returns
// the first, where an SDK's attribute collection would have kept the last.
//
// Every field the processor reads from a pcommon.Map (record and resource attributes, map
// bodies, nested maps) goes through Get, or through a Record, which reads the registered
// keys of a record's attributes the same way in one pass shared by the record's readers. It costs what pcommon.Map.Get costs for a key that
// is absent, and one more scan of the whole map for a key that is present.
package fields

import "go.opentelemetry.io/collector/pdata/pcommon"

// Get returns the value of the last occurrence of key in m, and whether key occurs. The value
// refers into m, as pcommon.Map.Get's does.
func Get(m pcommon.Map, key string) (pcommon.Value, bool) {
	// pcommon.Map.Get tells an absent key (the most frequent case: most lookups try keys a
	// record may not have) at the cost of one scan that builds no value per entry; only a
	// present key needs the scan for a later occurrence.
	if _, ok := m.Get(key); !ok {
		return pcommon.Value{}, false
	}
	var last pcommon.Value
	for k, v := range m.All() {
		if k == key {
			last = v
		}
	}
	return last, true
}

// Str returns the value of the last occurrence of key in m when it is a string, else "".
func Str(m pcommon.Map, key string) string {
	if v, ok := Get(m, key); ok && v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return ""
}

// Get2 and Get3 read two and three fields of m in one pass over its entries, each as Get
// would: the value of the key's last occurrence, and whether it occurs. A dialect reads the
// fields of one record with them, where a Get per field would pass over the map once per
// field (twice for a field that is present).

// Get2 returns the fields k0 and k1 of m (see Get).
func Get2(m pcommon.Map, k0, k1 string) (v0 pcommon.Value, ok0 bool, v1 pcommon.Value, ok1 bool) {
	for k, v := range m.All() {
		switch k {
		case k0:
			v0, ok0 = v, true
		case k1:
			v1, ok1 = v, true
		}
	}
	return v0, ok0, v1, ok1
}

// Get3 returns the fields k0, k1 and k2 of m (see Get).
func Get3(m pcommon.Map, k0, k1, k2 string) (v0 pcommon.Value, ok0 bool, v1 pcommon.Value, ok1 bool, v2 pcommon.Value, ok2 bool) {
	for k, v := range m.All() {
		switch k {
		case k0:
			v0, ok0 = v, true
		case k1:
			v1, ok1 = v, true
		case k2:
			v2, ok2 = v, true
		}
	}
	return v0, ok0, v1, ok1, v2, ok2
}
