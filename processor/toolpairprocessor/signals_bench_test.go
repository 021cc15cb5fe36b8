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
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for _, s := range spans {
				r := names.Span(s)
				signalsSink += int(r.Kind)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(spans)), "ns/record")
	})
	b.Run("logs", func(b *testing.B) {
		ld, _ := newLogWorkload(b).batch()
		var lrs []plog.LogRecord
		forEachLog(ld, func(_ pcommon.Resource, lr plog.LogRecord) { lrs = append(lrs, lr) })
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for _, lr := range lrs {
				r := names.LogLine(lr, dialect.LineUnread)
				signalsSink += int(r.Kind)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(lrs)), "ns/record")
	})
}
