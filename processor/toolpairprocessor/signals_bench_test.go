// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/timeout"
)

// signalsSink keeps the benchmarked reads from being optimised away.
var signalsSink int

// BenchmarkTimeoutSignals: reading each record's timeout signals and kind (timeout.Names.Span
// and LogLine, default compaction names) over one batch of the processor benchmarks'
// workloads, the part of timeout classification that runs on every record. Metric:
// ns/record.
func BenchmarkTimeoutSignals(b *testing.B) {
	names, err := timeout.NewNames(defaultCompactionSpanNames, defaultCompactionEventNames)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("spans", func(b *testing.B) {
		td, _ := newSpanWorkload(b).batch()
		var spans []ptrace.Span
		forEachSpan(td, func(_ pcommon.Resource, s ptrace.Span) { spans = append(spans, s) })
		benchPerRecord(b, spans, names.Span)
	})
	b.Run("logs", func(b *testing.B) {
		ld, _ := newLogWorkload(b).batch()
		var lrs []plog.LogRecord
		forEachLog(ld, func(_ pcommon.Resource, lr plog.LogRecord) { lrs = append(lrs, lr) })
		benchPerRecord(b, lrs, func(lr plog.LogRecord) timeout.Record { return names.LogLine(lr, dialect.LineUnread) })
	})
}

// benchPerRecord runs read over every record b.N times and reports the time per record.
func benchPerRecord[T any](b *testing.B, records []T, read func(T) timeout.Record) {
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, r := range records {
			signalsSink += int(read(r).Kind)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(records)), "ns/record")
}
