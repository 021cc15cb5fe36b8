// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"flag"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/transcript"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/messages"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadata"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/readonly"
)

// The processor benchmarks run the traces and logs processors on a realistic mix and, in the
// same benchmark on the same batches, a floor: the least work any correct implementation must
// do (see floorTraces and floorLogs). They report, per record:
//
//   - ns/record and allocs/record: the toolpair processor;
//   - floor-ns/record: the floor;
//   - ratio: processor time over floor time (issue 7 target: at most 2.0);
//   - tool-share: the fraction of the batch's records that are tool records;
//   - minpair-ns/record and minpair-ratio: a minimalPairer on the same batches, and its time
//     over the floor's: the part of the ratio that pairing alone takes, before anything else
//     the processor does.
//
// A batch is benchBatch records: copies of real captures from testdata/ (the genai spans of
// the AI SDK scenarios, the Claude Code and Codex log events), each copy with call IDs, trace
// IDs and session IDs of its own so that its calls pair as they did in the capture, until 30%
// of the batch are tool records; the other records are the captures' own other records
// (agent steps, Claude Code api_request and plugin events, Codex SSE events) and, for traces,
// the non-GenAI spans Codex exports (file system and session spans). Message content is
// captured: the chat spans carry gen_ai.input.messages and gen_ai.output.messages.
const (
	benchBatch     = 1000
	benchToolShare = 0.30
)

// The floor: what any correct implementation must do for a batch. It visits every record,
// looks up every attribute the dialects inspect (resource service.name and scope attributes,
// the record's scope attributes, operation name, call ID and tool name, Claude Code and Codex
// event fields, the log event name and body), and passes once over the bytes of every message
// attribute and string body (counting quotes, which every JSON reader must find) without
// parsing them.
var (
	floorResourceKeys = []string{"service.name", "gen_ai.conversation.id", "session.id", "conversation.id"}
	floorSpanKeys     = []string{"gen_ai.operation.name", "gen_ai.tool.call.id", "gen_ai.tool.name", "gen_ai.conversation.id", "session.id", "conversation.id"}
	floorMessageKeys  = []string{"gen_ai.input.messages", "gen_ai.output.messages"}
	floorLogKeys      = []string{"event.name", "tool_use_id", "call_id", "decision", "tool_name", "event.timestamp", "gen_ai.conversation.id", "session.id", "conversation.id", "log.file.path"}
)

func floorResource(res pcommon.Resource) int {
	n := 0
	for _, k := range floorResourceKeys {
		if _, ok := res.Attributes().Get(k); ok {
			n++
		}
	}
	return n
}

func floorTraces(td ptrace.Traces) int {
	n := 0
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		n += floorResource(rss.At(i).Resource())
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				s := spans.At(k)
				attrs := s.Attributes()
				n += len(s.Name())
				for _, key := range floorSpanKeys {
					if _, ok := attrs.Get(key); ok {
						n++
					}
				}
				for _, key := range floorMessageKeys {
					if v, ok := attrs.Get(key); ok {
						n += strings.Count(v.Str(), `"`)
					}
				}
			}
		}
	}
	return n
}

func floorLogs(ld plog.Logs) int {
	n := 0
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		n += floorResource(rls.At(i).Resource())
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				lr := lrs.At(k)
				attrs := lr.Attributes()
				n += len(lr.EventName())
				for _, key := range floorLogKeys {
					if _, ok := attrs.Get(key); ok {
						n++
					}
				}
				if b := lr.Body(); b.Type() == pcommon.ValueTypeStr {
					n += strings.Count(b.Str(), `"`)
				}
			}
		}
	}
	return n
}

// benchComponent is one toolpair component with the defaults, in a traces and a logs
// pipeline whose next consumers discard, and the function that shuts it down.
func benchComponent(b *testing.B, classifyTimeouts bool) (processor.Traces, processor.Logs, func()) {
	c := newBenchInstance(b, classifyTimeouts)
	return c.tp, c.lp, c.stop
}

// benchInstance is what benchComponent makes, with the component's shared state.
type benchInstance struct {
	tp   processor.Traces
	lp   processor.Logs
	s    *shared
	stop func()
}

func newBenchInstance(b *testing.B, classifyTimeouts bool) *benchInstance {
	b.Helper()
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.TimeoutClassification.Enabled = classifyTimeouts
	set := processortest.NewNopSettings(metadata.Type)
	tp, err := f.CreateTraces(context.Background(), set, cfg, consumertest.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	lp, err := f.CreateLogs(context.Background(), set, cfg, consumertest.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	if err := tp.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		b.Fatal(err)
	}
	if err := lp.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		b.Fatal(err)
	}
	s := sharedOf(cfg)
	return &benchInstance{tp: tp, lp: lp, s: s, stop: func() {
		_ = tp.Shutdown(context.Background())
		_ = lp.Shutdown(context.Background())
	}}
}

var floorSink int

// benchWarmup is the number of batches warmUp feeds the floor and the processor
// before it measures. Every batch brings new calls and scopes, so the engine's and the
// tracker's FIFOs and maps grow towards their default bounds (100,000 entries) first: in the
// traces workload (about 200 queued closings a batch) the closings queue fills at batch 500,
// and the engine's scopes and the queue's backing array stop growing at about batch 1,000. A
// component in production has done that long ago; warming up makes the benchmarks measure
// that steady state rather than the growth and the GC it triggers. Run with
// -toolpair.benchwarmup=0 for the cold figures.
var benchWarmup = flag.Int("toolpair.benchwarmup", 1000, "batches fed to the floor and the processor before a processor benchmark measures")

// warmUp feeds benchWarmup batches through the floor, the reference and the processor,
// unmeasured.
func warmUp[T any](b *testing.B, run *benchRun[T], floor func(T) int) {
	for range *benchWarmup {
		batch, _ := run.next()
		floorSink += floor(batch)
		if run.reference != nil {
			if err := run.reference(batch); err != nil {
				b.Fatal(err)
			}
		}
		if err := run.process(batch); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
}

// benchRun is what a processor benchmark's setup makes: its workload's next batch (and the
// number of tool records in it), the processor, an optional reference to time next to it
// (a minimalPairer's method, nil for none; it must not modify the batch), and the function
// that shuts the processor down.
type benchRun[T any] struct {
	next      func() (T, int)
	process   func(T) error
	reference func(T) error
	stop      func()
}

// floorBench runs the sub-benchmark name of one processor against the floor. setup makes its
// benchRun on the first run of the sub-benchmark; it is kept for the later runs and shut
// down when the sub-benchmark ends. It is warmed up (warmUp, with the timer stopped) before
// the first run with b.N > 1: the testing package runs every benchmark function with b.N = 1
// first, whose figures are only reported with -benchtime=1x, and `make test` runs the
// benchmarks that way as a smoke test, which needs no warm-up.
func floorBench[T any](b *testing.B, name string, setup func(*testing.B) benchRun[T], count, floor func(T) int) {
	var run *benchRun[T]
	warm := false
	b.Run(name, func(b *testing.B) {
		b.StopTimer()
		if run == nil {
			r := setup(b)
			run = &r
		}
		if !warm && b.N > 1 {
			warmUp(b, run, floor)
			warm = true
		}
		runAgainstFloor(b, run, count, floor)
	})
	if run != nil {
		run.stop()
	}
}

// runAgainstFloor runs b.N batches through the floor, the reference (if any) and then the
// processor, timing each, and reports the per-record metrics described above. Only the
// processor runs with the benchmark timer on, so ns/op and allocs/op are the processor's per
// batch. All three see the same batches in the same state of the heap, which is what makes
// their ratios steadier than their times.
func runAgainstFloor[T any](b *testing.B, run *benchRun[T], count func(T) int, floor func(T) int) {
	var ms runtime.MemStats
	var procNs, floorNs, refNs time.Duration
	var allocs uint64
	records, tools := 0, 0
	b.ReportAllocs()
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		batch, t := run.next()
		records += count(batch)
		tools += t
		t0 := time.Now()
		floorSink += floor(batch)
		floorNs += time.Since(t0)
		if run.reference != nil {
			t0 = time.Now()
			if err := run.reference(batch); err != nil {
				b.Fatal(err)
			}
			refNs += time.Since(t0)
		}
		runtime.ReadMemStats(&ms)
		a0 := ms.Mallocs
		b.StartTimer()
		t1 := time.Now()
		err := run.process(batch)
		procNs += time.Since(t1)
		b.StopTimer()
		runtime.ReadMemStats(&ms)
		allocs += ms.Mallocs - a0
		if err != nil {
			b.Fatal(err)
		}
	}
	r := float64(records)
	b.ReportMetric(float64(procNs.Nanoseconds())/r, "ns/record")
	b.ReportMetric(float64(allocs)/r, "allocs/record")
	b.ReportMetric(float64(floorNs.Nanoseconds())/r, "floor-ns/record")
	b.ReportMetric(float64(procNs)/float64(floorNs), "ratio")
	b.ReportMetric(float64(tools)/r, "tool-share")
	if run.reference != nil {
		b.ReportMetric(float64(refNs.Nanoseconds())/r, "minpair-ns/record")
		b.ReportMetric(float64(refNs)/float64(floorNs), "minpair-ratio")
	}
}

// benchConfigs are the configurations each processor benchmark runs: the defaults, and the
// defaults without timeout classification (specification section 4), to show its share.
var benchConfigs = []struct {
	name             string
	classifyTimeouts bool
}{
	{"defaults", true},
	{"no_timeout_classification", false},
}

// BenchmarkTracesAgainstFloor: GenAI spans of the AI SDK captures with message content, 30%
// tool spans, among Codex's other spans.
func BenchmarkTracesAgainstFloor(b *testing.B) {
	for _, c := range benchConfigs {
		floorBench(b, c.name, func(b *testing.B) benchRun[ptrace.Traces] {
			w := newSpanWorkload(b)
			tp, _, stop := benchComponent(b, c.classifyTimeouts)
			ctx := context.Background()
			return benchRun[ptrace.Traces]{
				next:      w.batch,
				process:   func(td ptrace.Traces) error { return tp.ConsumeTraces(ctx, td) },
				reference: newMinimalPairer().traces,
				stop:      stop,
			}
		}, ptrace.Traces.SpanCount, floorTraces)
	}
}

// BenchmarkLogsAgainstFloor: Claude Code and Codex log events, 30% tool events.
func BenchmarkLogsAgainstFloor(b *testing.B) {
	for _, c := range benchConfigs {
		floorBench(b, c.name, func(b *testing.B) benchRun[plog.Logs] {
			w := newLogWorkload(b)
			_, lp, stop := benchComponent(b, c.classifyTimeouts)
			ctx := context.Background()
			return benchRun[plog.Logs]{
				next:      w.batch,
				process:   func(ld plog.Logs) error { return lp.ConsumeLogs(ctx, ld) },
				reference: newMinimalPairer().logs,
				stop:      stop,
			}
		}, plog.Logs.LogRecordCount, floorLogs)
	}
}

// BenchmarkTranscriptAgainstFloor: real Claude Code transcript lines as string bodies, in
// file order (the transcripts' own share of tool lines).
func BenchmarkTranscriptAgainstFloor(b *testing.B) {
	for _, c := range benchConfigs {
		floorBench(b, c.name, func(b *testing.B) benchRun[plog.Logs] {
			w := newTranscriptWorkload(b)
			_, lp, stop := benchComponent(b, c.classifyTimeouts)
			ctx := context.Background()
			return benchRun[plog.Logs]{
				next:      w.batch,
				process:   func(ld plog.Logs) error { return lp.ConsumeLogs(ctx, ld) },
				reference: newMinimalPairer().transcripts,
				stop:      stop,
			}
		}, plog.Logs.LogRecordCount, floorLogs)
	}
}

// minimalPairer is a reference timed in the processor benchmarks (minpair-*), not a
// processor: the least that pairing adds to the floor, to show how much of the ratio target
// any implementation has left for the rest. On top of visiting the records as the floor does, it finds the tool call parts
// of the message attributes (with this package's scanner, the fastest we have:
// messages.BenchmarkScan), and keeps the calls announced and not yet resolved in one Go map
// from trace or session ID and call ID, which outlives the batch, as any pairing must. It
// leaves out everything else the processor does: step boundaries and session ends, held
// results and orphans, duplicates, timeouts and the in-flight state, outcome and duration
// attributes, synthetic records, telemetry, and a bound (the map is cleared when it reaches
// minimalPairerBound calls).
type minimalPairer struct {
	pending map[string]struct{}
	key     []byte
}

const minimalPairerBound = 100_000

func newMinimalPairer() *minimalPairer {
	return &minimalPairer{pending: make(map[string]struct{})}
}

// use records the call id of the trace or session scope.
func (m *minimalPairer) use(scope []byte, id string) {
	if len(m.pending) >= minimalPairerBound {
		clear(m.pending)
	}
	m.key = append(append(m.key[:0], scope...), id...)
	m.pending[string(m.key)] = struct{}{}
}

// result resolves the call id of the scope, if it is pending.
func (m *minimalPairer) result(scope []byte, id string) {
	m.key = append(append(m.key[:0], scope...), id...)
	delete(m.pending, string(m.key))
}

func (m *minimalPairer) traces(td ptrace.Traces) error {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		floorResource(rss.At(i).Resource())
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				s := spans.At(k)
				attrs := s.Attributes()
				tid := s.TraceID()
				if op, ok := attrs.Get("gen_ai.operation.name"); ok && op.Str() == "execute_tool" {
					if id, ok := attrs.Get("gen_ai.tool.call.id"); ok {
						m.result(tid[:], id.Str())
					}
					continue
				}
				if v, ok := attrs.Get("gen_ai.output.messages"); ok {
					_ = messages.ScanValue(v, func(p messages.Part) {
						if p.Type == messages.ToolCall && p.IDState == messages.IDPresent {
							m.use(tid[:], p.ID)
						}
					})
				}
				if v, ok := attrs.Get("gen_ai.input.messages"); ok {
					_ = messages.ScanValue(v, func(p messages.Part) {
						if p.Type == messages.ToolCallResponse && p.IDState == messages.IDPresent {
							m.result(tid[:], p.ID)
						}
					})
				}
			}
		}
	}
	return nil
}

// transcripts pairs the tool_use and tool_result blocks of transcript lines. A line is JSON
// whose blocks can be told apart only by walking it, which the floor does not: the
// transcript dialect's own reader (one pass of this package's JSON scanner) finds them, and
// their scope, the line's sessionId. That reader also reads what the processor needs
// besides (times, tool names, interruption markers, what the timeout classifier needs to
// know), so on transcripts this reference is an upper bound of what pairing alone takes.
func (m *minimalPairer) transcripts(ld plog.Logs) error {
	var f dialect.Found
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		floorResource(rls.At(i).Resource())
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				f.Reset()
				transcript.ExtractLog(lrs.At(k), &f)
				for _, it := range f.Items {
					scope := readonly.Bytes(it.Conversation)
					switch it.Kind {
					case pairing.KindUse:
						m.use(scope, it.CallID)
					case pairing.KindResult:
						m.result(scope, it.CallID)
					}
				}
			}
		}
	}
	return nil
}

func (m *minimalPairer) logs(ld plog.Logs) error {
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		floorResource(rls.At(i).Resource())
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				attrs := lrs.At(k).Attributes()
				name, ok := attrs.Get("event.name")
				if !ok {
					continue
				}
				var use bool
				switch name.Str() {
				case "tool_decision", "codex.tool_decision":
					use = true
				case "tool_result", "codex.tool_result":
				default:
					continue
				}
				scope, ok := attrs.Get("session.id")
				if !ok {
					scope, ok = attrs.Get("conversation.id")
				}
				id, ok2 := attrs.Get("tool_use_id")
				if !ok2 {
					id, ok2 = attrs.Get("call_id")
				}
				if !ok || !ok2 {
					continue
				}
				sid := readonly.Bytes(scope.Str())
				if use {
					m.use(sid, id.Str())
				} else {
					m.result(sid, id.Str())
				}
			}
		}
	}
	return nil
}
