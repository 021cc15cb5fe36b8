package toolpairprocessor

import (
	"context"
	"runtime"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/internal/benchload"
)

// BenchmarkHeldResultMemory reports the heap each held result costs: 10^5 result records
// whose use never comes (the benchmark workloads' batches without their announcing records),
// each held for orphan_grace as a one-record batch of its own, with the default configuration.
// Metric B/held: the heap in use after the results are held, over a fresh component's, per
// result, after a GC; it includes the call's engine entry and the copied record with its
// resource and scope.
func BenchmarkHeldResultMemory(b *testing.B) {
	const batches, perBatch = 200, 500
	for _, w := range []struct {
		name string
		feed func(b *testing.B, gen *benchload.Generator, s *benchInstance)
	}{
		{"claude_code_tool_result", func(b *testing.B, gen *benchload.Generator, c *benchInstance) {
			ld := gen.ClaudeCodeLogs(perBatch)
			n := 0
			// Each call is a tool_decision followed by its tool_result: keep the results.
			ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().RemoveIf(func(plog.LogRecord) bool {
				n++
				return n%2 == 1
			})
			if err := c.lp.ConsumeLogs(context.Background(), ld); err != nil {
				b.Fatal(err)
			}
		}},
		{"genai_execute_tool", func(b *testing.B, gen *benchload.Generator, c *benchInstance) {
			td := gen.GenAISpans(perBatch)
			n := 0
			// Each call is a chat span followed by its execute_tool span: keep the latter.
			td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().RemoveIf(func(ptrace.Span) bool {
				n++
				return n%2 == 1
			})
			if err := c.tp.ConsumeTraces(context.Background(), td); err != nil {
				b.Fatal(err)
			}
		}},
	} {
		b.Run(w.name, func(b *testing.B) {
			for b.Loop() {
				c := newBenchInstance(b, true)
				gen := benchload.NewGenerator("held", time.Now())
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for range batches {
					w.feed(b, gen, c)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				if got := engineStats(c.s).Waiting; got != batches*perBatch {
					b.Fatalf("%d results held, want %d", got, batches*perBatch)
				}
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(batches*perBatch), "B/held")
				c.stop()
			}
		})
	}
}
