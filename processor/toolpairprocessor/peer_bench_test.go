// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/connector/servicegraphconnector"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"golang.org/x/sys/unix"

	"github.com/otelcol-agent/otelcol-agent/internal/benchload"
)

// The peer benchmark puts the cost of pairing a tool call next to that of the closest
// component in contrib: the servicegraph connector (v0.158.0, default configuration), which
// also pairs two records by an ID (a client span with the server span whose parent it is) and
// keeps the unmatched side in a store until its partner arrives. Both see the same volume:
// peerCallsPerBatch pairs a batch, use and result in the same batch, benchload.CallsPerSession
// calls a session, IDs never seen before in every batch. toolpair runs with its default
// configuration on two workloads (Claude Code log events, GenAI chat and execute_tool spans);
// servicegraph gets client/server span pairs of the same count. Reported per pair (one use
// and its result, two records):
//
//   - toolpair-ns/pair and servicegraph-ns/pair: the time of each component's Consume call;
//   - ratio: toolpair time over servicegraph time;
//   - toolpair-cpu-ns/pair, servicegraph-cpu-ns/pair and cpu-ratio: the same with the CPU
//     time of the benchmark's thread (CLOCK_THREAD_CPUTIME_ID, the goroutine locked to its
//     thread) instead of the wall clock. On a machine shared with other work the wall clock
//     also counts the time the thread waited for a core; the thread's CPU time does not. It
//     leaves out what other threads do for the component (the background part of garbage
//     collection), which favours the component that allocates more.
//
//   - floor-cpu-ns/pair: the thread CPU time of the floor (floorPairer), the least any
//     implementation must do on the same records: read the fields, find and forget the call,
//     remember it resolved, write the outcome; floor-cpu-ratio: the floor over servicegraph,
//     the least cpu-ratio any implementation can reach; over-floor: toolpair over the floor;
//   - spec-floor-cpu-ns/pair, spec-floor-cpu-ratio and over-spec-floor: the same of the
//     specification's floor (specFloor: the floor's work plus the least more the
//     specification requires of these records).
//
// The four run side by side in one loop, each going first in turn, each on a batch built
// with the timer stopped just before its turn, after the same warm-up (benchWarmup batches
// each).

// peerCallsPerBatch is the number of calls (use and result pairs) in each batch.
const peerCallsPerBatch = 500

// newServiceGraph starts a servicegraph connector with its default configuration (or the one
// mutate makes of it) whose metrics go to next.
func newServiceGraph(tb testing.TB, next consumer.Metrics, mutate func(*servicegraphconnector.Config)) connector.Traces {
	tb.Helper()
	f := servicegraphconnector.NewFactory()
	cfg := f.CreateDefaultConfig().(*servicegraphconnector.Config)
	if mutate != nil {
		mutate(cfg)
	}
	c, err := f.CreateTracesToMetrics(context.Background(), connectortest.NewNopSettings(f.Type()), cfg, next)
	require.NoError(tb, err)
	require.NoError(tb, c.Start(context.Background(), componenttest.NewNopHost()))
	tb.Cleanup(func() { assert.NoError(tb, c.Shutdown(context.Background())) })
	return c
}

// peerRun is one side of the peer benchmark: the next batch and the call that consumes it.
type peerRun struct {
	next    func() any
	consume func(any) error
}

// BenchmarkPeerPerPair: toolpair against the servicegraph connector, per pair, on the two
// toolpair workloads.
func BenchmarkPeerPerPair(b *testing.B) {
	workloads := []struct {
		name  string
		run   func(b *testing.B, gen *benchload.Generator) peerRun
		floor func(f *floorPairer, gen *benchload.Generator) peerRun
		spec  func(f *specFloor, gen *benchload.Generator) peerRun
	}{
		{"claude_code_logs", func(b *testing.B, gen *benchload.Generator) peerRun {
			_, lp, stop := benchComponent(b, true)
			b.Cleanup(stop)
			return peerRun{
				next:    func() any { return gen.ClaudeCodeLogs(peerCallsPerBatch) },
				consume: func(v any) error { return lp.ConsumeLogs(context.Background(), v.(plog.Logs)) },
			}
		}, func(f *floorPairer, gen *benchload.Generator) peerRun {
			return peerRun{
				next:    func() any { return gen.ClaudeCodeLogs(peerCallsPerBatch) },
				consume: func(v any) error { f.consumeLogs(v.(plog.Logs)); return nil },
			}
		}, func(f *specFloor, gen *benchload.Generator) peerRun {
			return peerRun{
				next:    func() any { return gen.ClaudeCodeLogs(peerCallsPerBatch) },
				consume: func(v any) error { f.consumeLogs(v.(plog.Logs)); return nil },
			}
		}},
		{"genai_spans", func(b *testing.B, gen *benchload.Generator) peerRun {
			tp, _, stop := benchComponent(b, true)
			b.Cleanup(stop)
			return peerRun{
				next:    func() any { return gen.GenAISpans(peerCallsPerBatch) },
				consume: func(v any) error { return tp.ConsumeTraces(context.Background(), v.(ptrace.Traces)) },
			}
		}, func(f *floorPairer, gen *benchload.Generator) peerRun {
			return peerRun{
				next:    func() any { return gen.GenAISpans(peerCallsPerBatch) },
				consume: func(v any) error { f.consumeTraces(v.(ptrace.Traces)); return nil },
			}
		}, func(f *specFloor, gen *benchload.Generator) peerRun {
			return peerRun{
				next:    func() any { return gen.GenAISpans(peerCallsPerBatch) },
				consume: func(v any) error { f.consumeTraces(v.(ptrace.Traces)); return nil },
			}
		}},
	}
	for _, w := range workloads {
		b.Run(w.name, func(b *testing.B) {
			b.StopTimer()
			start := time.Now()
			tool := w.run(b, benchload.NewGenerator("tp", start))
			sgGen := benchload.NewGenerator("sg", start)
			sg := newServiceGraph(b, consumertest.NewNop(), nil)
			peer := peerRun{
				next:    func() any { return sgGen.ClientServerSpans(peerCallsPerBatch) },
				consume: func(v any) error { return sg.ConsumeTraces(context.Background(), v.(ptrace.Traces)) },
			}
			floor := w.floor(newFloorPairer(), benchload.NewGenerator("fl", start))
			spec := w.spec(newSpecFloor(), benchload.NewGenerator("sf", start))
			runs := [4]*peerRun{&tool, &peer, &floor, &spec} // [toolpair, servicegraph, floor, spec floor]
			// b.N = 1 is the testing package's probe run (and `make test`'s smoke run):
			// no warm-up for it.
			if b.N > 1 {
				for range *benchWarmup {
					for _, r := range runs {
						require.NoError(b, r.consume(r.next()))
					}
				}
				runtime.GC()
			}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var wall, cpu [4]time.Duration
			for i := 0; i < b.N; i++ {
				for n := range runs {
					k := (i + n) % len(runs) // each goes first in turn
					// Each batch is made just before it is consumed, as a receiver hands
					// over the batch it has just decoded: made all at once, the first made
					// would always reach its component after the others' had pushed it out
					// of the caches.
					batch := runs[k].next()
					b.StartTimer()
					c0, t0 := threadCPU(b), time.Now()
					err := runs[k].consume(batch)
					wall[k] += time.Since(t0)
					cpu[k] += threadCPU(b) - c0
					b.StopTimer()
					require.NoError(b, err)
				}
			}
			pairs := float64(b.N * peerCallsPerBatch)
			b.ReportMetric(float64(wall[0].Nanoseconds())/pairs, "toolpair-ns/pair")
			b.ReportMetric(float64(wall[1].Nanoseconds())/pairs, "servicegraph-ns/pair")
			b.ReportMetric(float64(wall[0])/float64(wall[1]), "ratio")
			b.ReportMetric(float64(cpu[0].Nanoseconds())/pairs, "toolpair-cpu-ns/pair")
			b.ReportMetric(float64(cpu[1].Nanoseconds())/pairs, "servicegraph-cpu-ns/pair")
			b.ReportMetric(float64(cpu[0])/float64(cpu[1]), "cpu-ratio")
			b.ReportMetric(float64(cpu[2].Nanoseconds())/pairs, "floor-cpu-ns/pair")
			b.ReportMetric(float64(cpu[2])/float64(cpu[1]), "floor-cpu-ratio")
			b.ReportMetric(float64(cpu[0])/float64(cpu[2]), "over-floor")
			b.ReportMetric(float64(cpu[3].Nanoseconds())/pairs, "spec-floor-cpu-ns/pair")
			b.ReportMetric(float64(cpu[3])/float64(cpu[1]), "spec-floor-cpu-ratio")
			b.ReportMetric(float64(cpu[0])/float64(cpu[3]), "over-spec-floor")
		})
	}
}

// threadCPU returns the CPU time the calling thread has used.
func threadCPU(tb testing.TB) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ts.Nano())
}

// TestPeerWorkloadsPair: the peer benchmark's batches do what it claims. Through toolpair
// (defaults), every result of a Claude Code or GenAI batch is paired, with a duration, and no
// synthetic record is made; through servicegraph (defaults, but flushing its metrics after
// every batch so the test can read them), every client/server pair of a batch is one request
// of the genai-agent -> tool-server edge. Two batches each, so that the second's fresh IDs
// are checked too.
func TestPeerWorkloadsPair(t *testing.T) {
	outcomes := func(attrs []pcommon.Map) map[string]int {
		got := map[string]int{}
		for _, a := range attrs {
			if v, ok := a.Get("toolpair.outcome"); ok {
				got[v.Str()]++
				if v.Str() == "paired" {
					_, ok := a.Get("toolpair.call.duration_ms")
					assert.True(t, ok, "a paired result has a duration")
				}
			}
		}
		return got
	}
	t.Run("claude_code_logs", func(t *testing.T) {
		pl := newRig(t)
		lp, sink := pl.logs, pl.lsink
		gen := benchload.NewGenerator("", time.Now())
		for batch := 1; batch <= 2; batch++ {
			sink.Reset()
			ld := gen.ClaudeCodeLogs(peerCallsPerBatch)
			require.Equal(t, 2*peerCallsPerBatch, ld.LogRecordCount())
			require.NoError(t, lp.ConsumeLogs(context.Background(), ld))
			var attrs []pcommon.Map
			for _, out := range sink.AllLogs() {
				forEachLog(out, func(_ pcommon.Resource, lr plog.LogRecord) { attrs = append(attrs, lr.Attributes()) })
			}
			assert.Len(t, attrs, 2*peerCallsPerBatch, "batch %d: every record leaves", batch)
			assert.Equal(t, map[string]int{"paired": peerCallsPerBatch}, outcomes(attrs), "batch %d", batch)
		}
	})
	t.Run("genai_spans", func(t *testing.T) {
		pl := newRig(t)
		tp, sink := pl.traces, pl.tsink
		gen := benchload.NewGenerator("", time.Now())
		for batch := 1; batch <= 2; batch++ {
			sink.Reset()
			td := gen.GenAISpans(peerCallsPerBatch)
			require.Equal(t, 2*peerCallsPerBatch, td.SpanCount())
			require.NoError(t, tp.ConsumeTraces(context.Background(), td))
			var attrs []pcommon.Map
			for _, out := range sink.AllTraces() {
				forEachSpan(out, func(_ pcommon.Resource, s ptrace.Span) { attrs = append(attrs, s.Attributes()) })
			}
			assert.Len(t, attrs, 2*peerCallsPerBatch, "batch %d: every span leaves, none is synthetic", batch)
			assert.Equal(t, map[string]int{"paired": peerCallsPerBatch}, outcomes(attrs), "batch %d", batch)
		}
	})
	t.Run("servicegraph", func(t *testing.T) {
		sink := new(consumertest.MetricsSink)
		sg := newServiceGraph(t, sink, func(cfg *servicegraphconnector.Config) {
			cfg.MetricsFlushInterval = new(time.Duration) // 0: flush after every batch
		})
		gen := benchload.NewGenerator("", time.Now())
		for batch := 1; batch <= 2; batch++ {
			td := gen.ClientServerSpans(peerCallsPerBatch)
			require.Equal(t, 2*peerCallsPerBatch, td.SpanCount())
			require.NoError(t, sg.ConsumeTraces(context.Background(), td))
			all := sink.AllMetrics()
			require.NotEmpty(t, all)
			assert.Equal(t, int64(batch*peerCallsPerBatch), requestTotal(all[len(all)-1]), "batch %d", batch)
		}
	})
}

// requestTotal returns the value of the servicegraph's traces_service_graph_request_total
// series of the genai-agent -> tool-server edge in md (cumulative), or -1 when it is missing.
func requestTotal(md pmetric.Metrics) int64 {
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				if m.Name() != "traces_service_graph_request_total" {
					continue
				}
				dps := m.Sum().DataPoints()
				for d := 0; d < dps.Len(); d++ {
					a := dps.At(d).Attributes()
					c, _ := a.Get("client")
					s, _ := a.Get("server")
					if c.Str() == "genai-agent" && s.Str() == "tool-server" {
						return dps.At(d).IntValue()
					}
				}
			}
		}
	}
	return -1
}
