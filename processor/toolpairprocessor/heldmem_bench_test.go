// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-agent/otelcol-agent/internal/benchload"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadata"
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

// BenchmarkHeldBytesBound: results of 1 KB to 4 MB whose use never comes, 96 MiB of them in
// all, held by a component with max_held_bytes of 16 MiB. Metrics: heap-MiB, the heap in use
// after a GC over a fresh component's; bound-MiB, the bound; held, the results still held;
// held-MiB, their bytes as the component counts them. The heap stays near the bound however
// large the records.
func BenchmarkHeldBytesBound(b *testing.B) {
	const bound = 16 << 20
	sizes := []int{1 << 10, 16 << 10, 256 << 10, 1 << 20, 4 << 20}
	for b.Loop() {
		f := NewFactory()
		cfg := f.CreateDefaultConfig().(*Config)
		cfg.MaxHeldBytes = bound
		tp, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
		if err != nil {
			b.Fatal(err)
		}
		if err := tp.Start(context.Background(), componenttest.NewNopHost()); err != nil {
			b.Fatal(err)
		}
		if err := tp.ConsumeTraces(context.Background(), spanBatchOf(chatSpan(1, 100, "seen"))); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		fed := 0
		for i := 0; fed < 96<<20; i++ {
			size := sizes[i%len(sizes)]
			s := toolSpan(1, fmt.Sprintf("call_%d", i), int64(200+i))
			s.attrs["gen_ai.tool.call.result"] = strings.Repeat("x", size)
			if err := tp.ConsumeTraces(context.Background(), spanBatchOf(s)); err != nil {
				b.Fatal(err)
			}
			fed += size
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		st := engineStats(sharedOf(cfg))
		if st.HeldBytes > bound {
			b.Fatalf("%d bytes held over the bound %d", st.HeldBytes, bound)
		}
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/(1<<20), "heap-MiB")
		b.ReportMetric(bound/(1<<20), "bound-MiB")
		b.ReportMetric(float64(st.Waiting), "held")
		b.ReportMetric(float64(st.HeldBytes)/(1<<20), "held-MiB")
		_ = tp.Shutdown(context.Background())
	}
}
