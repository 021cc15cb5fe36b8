// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package delivery

import (
	"runtime"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// BenchmarkRememberedDeliveryMemory reports the heap one remembered delivery takes (a paired
// result's: outcome, duration, count), with 100,000 remembered, the memory's bound at the
// default max_pending_calls, and the time of Reserve plus Remember per record at that size.
func BenchmarkRememberedDeliveryMemory(b *testing.B) {
	const n = 100_000
	marks := []Mark{
		{Key: "toolpair.outcome", Str: "paired", Type: pcommon.ValueTypeStr},
		{Key: "toolpair.call.duration_ms", Num: 1234, Type: pcommon.ValueTypeInt},
		{Key: "toolpair.call.counted", Num: 1, Type: pcommon.ValueTypeInt},
	}
	var perRecord float64
	for range b.N {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m := New(1<<62, n, "toolpair.outcome")
		es := make([]Entry, 1)
		for i := range n {
			id := ID(mix(uint64(i)) | 1)
			_, _, place := m.Reserve(0, id)
			es[0] = Entry{ID: id, Place: place, Decision: Decision{Fate: FatePassed, Marks: marks}}
			m.Remember(0, es)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perRecord = float64(after.HeapAlloc-before.HeapAlloc) / n
		runtime.KeepAlive(m)
	}
	b.ReportMetric(perRecord, "B/delivery")
}
