package toolpairprocessor

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/claudecode"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/codex"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/genai"
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

// loadTraces reads a testdata traces capture.
func loadTraces(tb testing.TB, parts ...string) ptrace.Traces {
	tb.Helper()
	td, err := golden.ReadTraces(filepath.Join(append([]string{"..", "..", "testdata"}, parts...)...))
	if err != nil {
		tb.Fatal(err)
	}
	return td
}

func loadLogs(tb testing.TB, parts ...string) plog.Logs {
	tb.Helper()
	ld, err := golden.ReadLogs(filepath.Join(append([]string{"..", "..", "testdata"}, parts...)...))
	if err != nil {
		tb.Fatal(err)
	}
	return ld
}

// renamer gives the copy n of a capture IDs of its own: every call ID and session ID in ids
// gets the suffix "-n" wherever it occurs in a string attribute or body, and trace IDs get n
// in their last 8 bytes.
type renamer struct {
	r *strings.Replacer
	n uint64
}

func newRenamer(ids []string, n uint64) renamer {
	if slices.Contains(ids, "") {
		panic("renaming the empty string")
	}
	suffix := "-" + strconv.FormatUint(n, 10)
	var pairs []string
	for _, id := range ids {
		pairs = append(pairs, id, id+suffix)
	}
	return renamer{r: strings.NewReplacer(pairs...), n: n}
}

func (r renamer) attrs(m pcommon.Map) {
	m.Range(func(_ string, v pcommon.Value) bool {
		if v.Type() == pcommon.ValueTypeStr {
			if s := v.Str(); s != "" {
				if t := r.r.Replace(s); t != s {
					v.SetStr(t)
				}
			}
		}
		return true
	})
}

func (r renamer) traceID(id pcommon.TraceID) pcommon.TraceID {
	if id.IsEmpty() {
		return id
	}
	binary.BigEndian.PutUint64(id[8:], binary.BigEndian.Uint64(id[8:])^(r.n+1))
	return id
}

// thinner decides which of the other records of a batch to keep, so that they number exactly
// want out of have, spread evenly.
type thinner struct{ want, have, seen int }

func (t *thinner) keep() bool {
	j := t.seen
	t.seen++
	if t.have <= t.want {
		return true
	}
	return (j+1)*t.want/t.have > j*t.want/t.have
}

// spanWorkload makes trace batches.
type spanWorkload struct {
	scenarios []ptrace.Traces // captures whose calls pair: copied whole
	callIDs   [][]string
	others    []ptrace.Traces // captures of other spans, used to fill
	n         uint64
}

// hasCall reports whether a record announces or resolves a call (step boundaries and
// session ends alone do not make a tool record).
func hasCall(f *dialect.Found) bool {
	for _, it := range f.Items {
		if it.Kind != pairing.KindBoundary && it.Kind != pairing.KindSessionEnd {
			return true
		}
	}
	return false
}

func isToolSpan(s ptrace.Span) bool {
	var f dialect.Found
	genai.ExtractSpan(s, &f)
	return hasCall(&f)
}

func newSpanWorkload(tb testing.TB) *spanWorkload {
	w := &spanWorkload{}
	for _, sc := range []string{"normal", "parallel"} {
		td := loadTraces(tb, "aisdk", sc, "traces.json")
		var ids []string
		forEachSpan(td, func(_ pcommon.Resource, s ptrace.Span) {
			var f dialect.Found
			genai.ExtractSpan(s, &f)
			for _, it := range f.Items {
				if it.CallID != "" && !slices.Contains(ids, it.CallID) {
					ids = append(ids, it.CallID)
				}
			}
		})
		w.scenarios = append(w.scenarios, td)
		w.callIDs = append(w.callIDs, ids)
	}
	for _, p := range [][]string{{"codex", "interrupt_sigterm", "traces.json"}, {"claude", "normal", "traces.json"}} {
		w.others = append(w.others, loadTraces(tb, p...))
	}
	return w
}

func forEachSpan(td ptrace.Traces, fn func(pcommon.Resource, ptrace.Span)) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				fn(rss.At(i).Resource(), spans.At(k))
			}
		}
	}
}

// batch returns the next batch: copies of the scenarios until benchToolShare of the batch
// are tool spans, their other spans thinned or topped up with the other captures' spans.
func (w *spanWorkload) batch() (ptrace.Traces, int) {
	td := ptrace.NewTraces()
	tools, others := 0, 0
	for k := 0; tools < int(benchToolShare*benchBatch); k++ {
		if k > benchBatch {
			panic("the scenarios hold no tool records")
		}
		i := k % len(w.scenarios)
		w.n++
		rn := newRenamer(w.callIDs[i], w.n)
		start := td.ResourceSpans().Len()
		src := w.scenarios[i].ResourceSpans()
		for r := 0; r < src.Len(); r++ {
			src.At(r).CopyTo(td.ResourceSpans().AppendEmpty())
		}
		rss := td.ResourceSpans()
		for r := start; r < rss.Len(); r++ {
			sss := rss.At(r).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				spans := sss.At(j).Spans()
				for s := 0; s < spans.Len(); s++ {
					span := spans.At(s)
					span.SetTraceID(rn.traceID(span.TraceID()))
					rn.attrs(span.Attributes())
					if isToolSpan(span) {
						tools++
					} else {
						others++
					}
				}
			}
		}
	}
	// Thin the scenarios' other spans, or top them up, to fill the batch.
	want := benchBatch - tools
	th := thinner{want: want, have: others}
	rss := td.ResourceSpans()
	for r := 0; r < rss.Len(); r++ {
		sss := rss.At(r).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			sss.At(j).Spans().RemoveIf(func(s ptrace.Span) bool { return !isToolSpan(s) && !th.keep() })
		}
	}
	for fill := want - min(want, others); fill > 0; {
		for _, o := range w.others {
			ors := o.ResourceSpans()
			for r := 0; r < ors.Len() && fill > 0; r++ {
				dst := td.ResourceSpans().AppendEmpty()
				ors.At(r).Resource().CopyTo(dst.Resource())
				osss := ors.At(r).ScopeSpans()
				for j := 0; j < osss.Len() && fill > 0; j++ {
					dss := dst.ScopeSpans().AppendEmpty()
					osss.At(j).Scope().CopyTo(dss.Scope())
					spans := osss.At(j).Spans()
					for s := 0; s < spans.Len() && fill > 0; s++ {
						spans.At(s).CopyTo(dss.Spans().AppendEmpty())
						fill--
					}
				}
			}
		}
	}
	return td, tools
}

// logWorkload makes log batches from agent log captures.
type logWorkload struct {
	scenarios []plog.Logs
	ids       [][]string
	n         uint64
}

func isToolLog(lr plog.LogRecord) bool {
	var f dialect.Found
	_ = claudecode.ExtractLog(lr, &f) || codex.ExtractLog(lr, &f)
	return hasCall(&f)
}

func newLogWorkload(tb testing.TB) *logWorkload {
	w := &logWorkload{}
	for _, p := range [][]string{{"claude", "parallel"}, {"codex", "parallel"}, {"claude", "normal"}, {"codex", "normal"}} {
		ld := loadLogs(tb, p[0], p[1], "logs.json")
		seen := map[string]bool{}
		var ids []string
		forEachLog(ld, func(_ pcommon.Resource, lr plog.LogRecord) {
			for _, k := range []string{"tool_use_id", "call_id", "session.id", "conversation.id"} {
				if v, ok := lr.Attributes().Get(k); ok && v.Str() != "" && !seen[v.Str()] {
					seen[v.Str()] = true
					ids = append(ids, v.Str())
				}
			}
		})
		w.scenarios = append(w.scenarios, ld)
		w.ids = append(w.ids, ids)
	}
	return w
}

func forEachLog(ld plog.Logs, fn func(pcommon.Resource, plog.LogRecord)) {
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				fn(rls.At(i).Resource(), lrs.At(k))
			}
		}
	}
}

// batch returns the next batch: copies of the scenarios until benchToolShare of the batch
// are tool records, with their other records thinned evenly to fill the rest.
func (w *logWorkload) batch() (plog.Logs, int) {
	ld := plog.NewLogs()
	tools, others := 0, 0
	for k := 0; tools < int(benchToolShare*benchBatch); k++ {
		if k > benchBatch {
			panic("the scenarios hold no tool records")
		}
		i := k % len(w.scenarios)
		w.n++
		rn := newRenamer(w.ids[i], w.n)
		start := ld.ResourceLogs().Len()
		src := w.scenarios[i].ResourceLogs()
		for r := 0; r < src.Len(); r++ {
			src.At(r).CopyTo(ld.ResourceLogs().AppendEmpty())
		}
		rls := ld.ResourceLogs()
		for r := start; r < rls.Len(); r++ {
			rn.attrs(rls.At(r).Resource().Attributes())
			sls := rls.At(r).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				lrs := sls.At(j).LogRecords()
				for s := 0; s < lrs.Len(); s++ {
					lr := lrs.At(s)
					lr.SetTraceID(rn.traceID(lr.TraceID()))
					rn.attrs(lr.Attributes())
					if isToolLog(lr) {
						tools++
					} else {
						others++
					}
				}
			}
		}
	}
	want := benchBatch - tools
	th := thinner{want: want, have: others}
	forEachScopeLogs(ld, func(sl plog.ScopeLogs) {
		sl.LogRecords().RemoveIf(func(lr plog.LogRecord) bool { return !isToolLog(lr) && !th.keep() })
	})
	// The captures' other records are at least 70% of a copy, so no top-up is needed; check it.
	if n := ld.LogRecordCount(); n != benchBatch {
		panic("log batch of " + strconv.Itoa(n) + " records")
	}
	return ld, tools
}

func forEachScopeLogs(ld plog.Logs, fn func(plog.ScopeLogs)) {
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			fn(sls.At(j))
		}
	}
}

// transcriptWorkload makes log batches of real Claude Code transcript lines, as the filelog
// receiver reads them: one resource, string bodies, log.file.path. Batches take the lines of
// the testdata transcripts in file order; each pass over them gets session IDs and call IDs
// of its own. The tool share is the transcripts' own.
type transcriptWorkload struct {
	lines []benchLine
	ids   []string // session IDs
	next  int
	pass  uint64
	r     *strings.Replacer
}

type benchLine struct {
	path, body string
}

func newTranscriptWorkload(tb testing.TB) *transcriptWorkload {
	w := &transcriptWorkload{}
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "transcripts", "claude-code", "*.jsonl"))
	if err != nil || len(files) == 0 {
		tb.Fatal("no transcripts", err)
	}
	sub, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "transcripts", "claude-code", "*", "subagents", "*.jsonl"))
	sessions := map[string]bool{}
	for _, f := range append(files, sub...) {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			l := sc.Text()
			var h struct {
				SessionID string `json:"sessionId"`
			}
			if json.Unmarshal([]byte(l), &h) == nil && h.SessionID != "" {
				sessions[h.SessionID] = true
			}
			w.lines = append(w.lines, benchLine{path: f, body: l})
		}
	}
	// Call IDs all start with toolu_: a prefix of its own per pass renames them all.
	for s := range sessions {
		w.ids = append(w.ids, s)
	}
	w.rename()
	return w
}

func (w *transcriptWorkload) rename() {
	p := []string{"toolu_", "toolu_" + strconv.FormatUint(w.pass, 36) + "x"}
	for _, id := range w.ids {
		p = append(p, id, id+"-"+strconv.FormatUint(w.pass, 10))
	}
	w.r = strings.NewReplacer(p...)
}

func (w *transcriptWorkload) batch() (plog.Logs, int) {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "claude-transcripts")
	lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
	lrs.EnsureCapacity(benchBatch)
	tools := 0
	now := pcommon.NewTimestampFromTime(time.Now())
	for range benchBatch {
		if w.next == len(w.lines) {
			w.next = 0
			w.pass++
			w.rename()
		}
		l := w.lines[w.next]
		w.next++
		lr := lrs.AppendEmpty()
		lr.SetObservedTimestamp(now)
		lr.Body().SetStr(w.r.Replace(l.body))
		lr.Attributes().PutStr("log.file.path", l.path)
		var f dialect.Found
		transcript.ExtractLog(lr, &f)
		if hasCall(&f) {
			tools++
		}
	}
	return ld, tools
}

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
					scope := readonly.Bytes(it.Scope)
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
