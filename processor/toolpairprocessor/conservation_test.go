package toolpairprocessor

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadata"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// The conservation property test runs seeded random sequences of tool records through the
// traces and logs pipelines of one toolpair component and checks, for each sequence:
//
//   - specification section 7 holds exactly in the engine's counters after every batch, and in the
//     component's own metrics at the end;
//   - every input record leaves exactly once (orphans and duplicates are marked, not dropped),
//     and every synthetic record is one the reference model expects;
//   - the outcomes of every call ID (the outcome written on each of its result records, and
//     the reason of each synthetic record in the signal that announced it) and the counters
//     equal those of a simple reference model (consModel).
//
// A sequence is a few windows of records. Within a window the records are shuffled, split
// into random batches, each batch's spans and log records delivered in random order, with
// small clock advances (under orphan_grace in all) between batches: the order of arrival
// within orphan_grace must not change any outcome, which is what lets the model ignore it.
// Between windows the clock passes orphan_grace, so held results and queued step boundaries
// and session ends of the window fall due; some gaps also pass twice pairing_timeout (a
// "timeout"), so every call still pending expires and every older resolved call is
// forgotten.
//
// The records, with their real shapes (see the dialect packages):
//
//   - a GenAI chat span (traces) announcing 0-3 new calls in gen_ai.output.messages, under the
//     scope's invoke_agent span: its start is a step boundary of its agent;
//   - a GenAI execute_tool span, a Claude Code claude_code.tool span or tool_result log
//     event: a result;
//   - a Claude Code claude_code.tool.execution span: a companion result
//     (pairing.KindCompanion), which pairs only when no other result of its call comes within
//     orphan_grace, and is a duplicate otherwise, whatever the order;
//   - a Claude Code tool_decision log event: a use (accept) or a rejection (reject);
//   - the end of the scope's invoke_agent span (session end of the chat spans' calls) or of a
//     claude_code.interaction span in the scope's trace (session end of the log events'
//     calls);
//   - export retries of chat spans and decisions, results of calls already resolved,
//     results of calls never announced (orphans, or standalone in a scope without uses).
//
// A rejection and a result of the same call may share a window: the result is a kept
// duplicate in either order.

var (
	toolpairLong = flag.Bool("toolpair.long", false, "run 1,000,000 conservation sequences instead of 10,000")
	toolpairSeed = flag.Uint64("toolpair.seed", 0, "run only the conservation sequence with this seed")
)

const (
	consGrace   = time.Second
	consTimeout = time.Hour
	consBase    = 0x70a1_c0de_0000_0001
)

type consKind uint8

const (
	consChat        consKind = iota + 1 // span: boundary and uses
	consExec                            // span: result
	consInvokeEnd                       // span: session end of the chat spans' calls
	consInteraction                     // span: session end of the log events' calls
	consToolSpan                        // span: claude_code.tool, a result
	consExecution                       // span: claude_code.tool.execution, a companion result
	consDecision                        // log: use or rejection
	consLogResult                       // log: result
)

// consRecord is one input record.
type consRecord struct {
	id     int // written as prop.rec
	kind   consKind
	scope  int
	calls  []int // call indexes: the uses of a chat span, else the one call
	reject bool
	time   int64 // record time, Unix ns; a chat span's start (its uses are at time+5ms)
	spanID pcommon.SpanID
}

func (r *consRecord) traces() bool { return r.kind < consDecision }

// consResultKind draws the kind of a result record: an execute_tool span, a claude_code.tool
// span or a tool_result log event (one in four each), or a claude_code.tool.execution span.
func consResultKind(rng *rand.Rand) consKind {
	return [...]consKind{consExec, consToolSpan, consLogResult, consExecution}[rng.IntN(4)]
}

// consCall is one call ID.
type consCall struct {
	id     string
	scope  int
	viaLog bool // announced by a log event (else a chat span)
}

type consScenario struct {
	seed    uint64
	scopes  int
	calls   []consCall
	windows [][]consRecord
	timeout []bool // after window i, a timeout gap
}

func consTraceID(seed uint64, scope int) pcommon.TraceID {
	var id pcommon.TraceID
	binary.BigEndian.PutUint64(id[:8], seed)
	binary.BigEndian.PutUint64(id[8:], uint64(scope)+1)
	return id
}

func consAgentSpan(scope int) pcommon.SpanID {
	var id pcommon.SpanID
	binary.BigEndian.PutUint64(id[:], 0xa9e0_0000_0000_0000|uint64(scope)+1)
	return id
}

// consGenerate makes the sequence of a seed.
func consGenerate(seed uint64) *consScenario {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	sc := &consScenario{seed: seed, scopes: 1 + rng.IntN(3)}
	t := int64(1_900_000_000) * int64(time.Second)
	nextSpan := uint64(1)
	rec := 0
	newRecord := func(kind consKind, scope int) consRecord {
		t += int64(10 * time.Millisecond)
		rec++
		r := consRecord{id: rec, kind: kind, scope: scope, time: t}
		binary.BigEndian.PutUint64(r.spanID[:], nextSpan)
		nextSpan++
		return r
	}
	newCall := func(scope int, viaLog bool) int {
		sc.calls = append(sc.calls, consCall{id: "call_" + strconv.Itoa(len(sc.calls)), scope: scope, viaLog: viaLog})
		return len(sc.calls) - 1
	}
	var sent []consRecord // uses sent so far, for retries
	nWindows := 1 + rng.IntN(5)
	for w := 0; w < nWindows; w++ {
		var win []consRecord
		for range 1 + rng.IntN(7) {
			s := rng.IntN(sc.scopes)
			switch p := rng.IntN(100); {
			case p < 22: // chat span announcing new calls
				r := newRecord(consChat, s)
				for range rng.IntN(4) {
					r.calls = append(r.calls, newCall(s, false))
				}
				win = append(win, r)
				sent = append(sent, r)
			case p < 40: // tool_decision of a new call
				r := newRecord(consDecision, s)
				r.calls = []int{newCall(s, true)}
				r.reject = rng.IntN(6) == 0
				win = append(win, r)
				sent = append(sent, r)
			case p < 72: // a result of a call announced so far
				if len(sc.calls) == 0 {
					continue
				}
				c := rng.IntN(len(sc.calls))
				r := newRecord(consResultKind(rng), sc.calls[c].scope)
				r.calls = []int{c}
				win = append(win, r)
			case p < 78: // a result of a call never announced
				kind := consResultKind(rng)
				r := newRecord(kind, s)
				r.calls = []int{newCall(s, kind == consLogResult)}
				win = append(win, r)
			case p < 86: // an export retry of a use
				if len(sent) == 0 {
					continue
				}
				o := sent[rng.IntN(len(sent))]
				rec++
				o.id = rec
				win = append(win, o)
			case p < 93:
				r := newRecord(consInvokeEnd, s)
				r.spanID = consAgentSpan(s)
				win = append(win, r)
			default:
				win = append(win, newRecord(consInteraction, s))
			}
		}
		sc.windows = append(sc.windows, win)
		sc.timeout = append(sc.timeout, rng.IntN(5) == 0)
	}
	return sc
}

// consOut is what the model expects, and what a run observed.
type consOut struct {
	// results: per call, the outcomes of its result records, sorted; the outcome of a
	// companion record (claude_code.tool.execution) has the suffix "/companion".
	results map[int][]string
	// synthetic: per call, the reasons of its synthetic records in the signal that
	// announced it, sorted.
	synthetic map[int][]string
	stats     pairing.Stats
	// records: what each input record left with (outcome, reason and duration), by its id;
	// counted: the calls the records count (toolpair.call.counted), by outcome. Filled by
	// observe only.
	records map[int64]string
	counted map[string]int64
}

// consModel is the reference model: windows applied as sets. In a window, uses and
// rejections are applied first, then results, then companion results (each settles as a
// result would after every other result of the window); step boundaries and session ends wait for the
// window's end. At a window's end, the scope's boundaries and session ends apply in record
// time order, then held results are released (orphan when the scope saw a use, else
// standalone). A timeout gap then expires every pending call and forgets every resolved call;
// a scope that saw a use is remembered as such (the engine keeps a bounded memory of them,
// far larger than these scenarios).
func consModel(sc *consScenario) consOut {
	type callState struct {
		st      uint8 // 0 none, 1 pending, 2 waiting, 3 resolved
		useTime int64
		step    int // chat span record id for chat calls
		// heldCompanion: the result held (st 2) is a companion record.
		heldCompanion bool
		// reported: the kinds of result record (sources) that reported the call; answered:
		// the outcome of the report that resolved it ("" when closed without one); extra:
		// the marks of further sources' records held with the held result (specification
		// section 2: each source's first record of a call gets its own outcome).
		reported map[consKind]bool
		answered string
		extra    []string
	}
	// suffix marks the outcome of a held companion record.
	suffix := func(cs *callState) string {
		if cs.heldCompanion {
			return "/companion"
		}
		return ""
	}
	out := consOut{results: map[int][]string{}, synthetic: map[int][]string{}}
	st := make([]callState, len(sc.calls))
	usesSeen := make([]bool, sc.scopes)
	s := &out.stats
	for w, win := range sc.windows {
		var uses, results, companions, closings []consRecord
		for _, r := range win {
			switch r.kind {
			case consChat:
				uses = append(uses, r)
				closings = append(closings, r)
			case consDecision:
				uses = append(uses, r)
			case consExec, consToolSpan, consLogResult:
				results = append(results, r)
			case consExecution:
				companions = append(companions, r)
			default:
				closings = append(closings, r)
			}
		}
		for _, r := range uses {
			if len(r.calls) > 0 {
				usesSeen[r.scope] = true
			}
			for _, c := range r.calls {
				cs := &st[c]
				useTime := r.time
				if r.kind == consChat {
					useTime += int64(5 * time.Millisecond)
				}
				switch {
				case r.reject && (cs.st == 0 || cs.st == 2):
					s.UsesSeen++
					s.Rejected++
					if cs.st == 2 { // its held results: duplicates, as if they came after
						out.results[c] = append(out.results[c], "duplicate"+suffix(cs))
						s.Duplicate++
						for _, m := range cs.extra {
							out.results[c] = append(out.results[c], "duplicate"+m)
							s.ResultsSeen++
							s.Duplicate++
						}
						cs.extra = nil
					}
					cs.st = 3
				case r.reject && cs.st == 1:
					s.Rejected++
					cs.st = 3
				case cs.st == 1 || cs.st == 3:
					s.UsesRepeated++
				case cs.st == 2:
					s.UsesSeen++
					s.Paired++
					out.results[c] = append(out.results[c], "paired"+suffix(cs))
					for _, m := range cs.extra {
						out.results[c] = append(out.results[c], "paired"+m)
						s.Reports++
					}
					cs.extra = nil
					cs.st, cs.answered = 3, "paired"
				default:
					s.UsesSeen++
					*cs = callState{st: 1, useTime: useTime, step: r.id, reported: map[consKind]bool{}}
					if r.kind == consChat {
						cs.step = int(binary.BigEndian.Uint64(r.spanID[:]))
					}
				}
			}
		}
		for _, r := range append(results, companions...) {
			c := r.calls[0]
			cs := &st[c]
			if cs.reported == nil {
				cs.reported = map[consKind]bool{}
			}
			mark := ""
			if r.kind == consExecution {
				mark = "/companion"
			}
			first := !cs.reported[r.kind]
			cs.reported[r.kind] = true
			switch {
			case cs.st == 1:
				s.ResultsSeen++
				s.Paired++
				out.results[c] = append(out.results[c], "paired"+mark)
				cs.st, cs.answered = 3, "paired"
			case cs.st == 2 && first:
				cs.extra = append(cs.extra, mark) // held with the held result
			case cs.st == 3 && first && cs.answered != "":
				s.Reports++
				out.results[c] = append(out.results[c], cs.answered+mark)
			case cs.st == 2, cs.st == 3:
				s.ResultsSeen++
				s.Duplicate++
				out.results[c] = append(out.results[c], "duplicate"+mark)
			default:
				s.ResultsSeen++
				cs.st = 2
				cs.heldCompanion = r.kind == consExecution
			}
		}
		// Window end: closings in record time order.
		sort.SliceStable(closings, func(i, j int) bool { return closings[i].time < closings[j].time })
		for _, cl := range closings {
			for c := range st {
				cs := &st[c]
				call := sc.calls[c]
				if cs.st != 1 || call.scope != cl.scope || cs.useTime > cl.time {
					continue
				}
				var reason string
				switch {
				case cl.kind == consChat && !call.viaLog && cs.step != int(binary.BigEndian.Uint64(cl.spanID[:])):
					reason = "next_step"
				case cl.kind == consInvokeEnd && !call.viaLog, cl.kind == consInteraction && call.viaLog:
					reason = "session_end"
				default:
					continue
				}
				cs.st = 3
				out.synthetic[c] = append(out.synthetic[c], reason)
				if reason == "next_step" {
					s.Interrupted[pairing.ReasonNextStep]++
				} else {
					s.Interrupted[pairing.ReasonSessionEnd]++
				}
			}
		}
		release := func() {
			for c := range st {
				if st[c].st == 2 {
					st[c].st = 3
					outcome := "standalone"
					if usesSeen[sc.calls[c].scope] {
						outcome = "orphan"
						s.Orphan++
					} else {
						s.Standalone++
					}
					out.results[c] = append(out.results[c], outcome+suffix(&st[c]))
					for _, m := range st[c].extra {
						out.results[c] = append(out.results[c], outcome+m)
						s.Reports++
					}
					st[c].extra, st[c].answered = nil, outcome
				}
			}
		}
		release()
		if sc.timeout[w] {
			for c := range st {
				switch st[c].st {
				case 1:
					st[c].st = 3
					out.synthetic[c] = append(out.synthetic[c], "expired")
					s.Interrupted[pairing.ReasonExpired]++
				case 3:
					st[c] = callState{} // forgotten
				}
			}
		}
	}
	for c := range st {
		if st[c].st == 1 {
			out.synthetic[c] = append(out.synthetic[c], "shutdown")
			s.Interrupted[pairing.ReasonShutdown]++
		}
	}
	for _, m := range []map[int][]string{out.results, out.synthetic} {
		for _, v := range m {
			slices.Sort(v)
		}
	}
	return out
}

// consRun is one sequence through one component.
type consRun struct {
	sc     *consScenario
	rng    *rand.Rand
	clock  *testClock
	traces processor.Traces
	logs   processor.Logs
	tsink  *consumertest.TracesSink
	lsink  *consumertest.LogsSink
	shared *shared
	tel    *componenttest.Telemetry
	// between, when set, runs after every batch (the restart property test restarts the
	// component there).
	between func() error
}

func consStart(t *testing.T, sc *consScenario) *consRun {
	return consStartDelivery(t, sc, 0)
}

// consStartDelivery is consStart with the delivery order drawn from salt: the same scenario
// delivered in another order (the records of each window shuffled and split otherwise).
func consStartDelivery(t *testing.T, sc *consScenario, salt uint64) *consRun {
	clock := newTestClock()
	f := newFactoryWithClock(clock)
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.OrphanGrace = consGrace
	cfg.PairingTimeout = consTimeout
	cfg.Orphans, cfg.Duplicates = DispositionMark, DispositionMark
	r := &consRun{
		sc: sc, rng: rand.New(rand.NewPCG(sc.seed, 0xde11^salt)), clock: clock,
		tsink: new(consumertest.TracesSink), lsink: new(consumertest.LogsSink),
		tel: componenttest.NewTelemetry(),
	}
	set := processortest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = r.tel.NewTelemetrySettings()
	var err error
	r.traces, err = f.CreateTraces(context.Background(), set, cfg, r.tsink)
	require.NoError(t, err)
	r.logs, err = f.CreateLogs(context.Background(), set, cfg, r.lsink)
	require.NoError(t, err)
	require.NoError(t, r.traces.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, r.logs.Start(context.Background(), componenttest.NewNopHost()))
	r.shared = sharedOf(cfg)
	return r
}

func (r *consRun) advance(d time.Duration) {
	r.clock.Advance(d)
	r.shared.tick(context.Background())
}

const (
	consSession = "session.id"
	consRecAttr = "prop.rec"
)

func (r *consRun) appendSpan(td ptrace.Traces, rec *consRecord) {
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "agent")
	s := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	s.SetTraceID(consTraceID(r.sc.seed, rec.scope))
	s.SetSpanID(rec.spanID)
	a := s.Attributes()
	a.PutInt(consRecAttr, int64(rec.id))
	a.PutStr(consSession, "s"+strconv.Itoa(rec.scope))
	ts := pcommon.Timestamp(rec.time)
	s.SetStartTimestamp(ts)
	s.SetEndTimestamp(ts)
	switch rec.kind {
	case consChat:
		s.SetName("chat model")
		s.SetParentSpanID(consAgentSpan(rec.scope))
		s.SetEndTimestamp(ts + pcommon.Timestamp(5*time.Millisecond))
		a.PutStr("gen_ai.operation.name", "chat")
		var b strings.Builder
		b.WriteString(`[{"role":"assistant","parts":[{"type":"text","content":"calling \"tools\""}`)
		for _, c := range rec.calls {
			fmt.Fprintf(&b, `,{"type":"tool_call","id":%q,"name":"run_shell","arguments":{"command":"ls"}}`, r.sc.calls[c].id)
		}
		b.WriteString(`]}]`)
		a.PutStr("gen_ai.output.messages", b.String())
	case consExec:
		s.SetName("execute_tool run_shell")
		a.PutStr("gen_ai.operation.name", "execute_tool")
		a.PutStr("gen_ai.tool.name", "run_shell")
		a.PutStr("gen_ai.tool.call.id", r.sc.calls[rec.calls[0]].id)
	case consToolSpan, consExecution:
		s.SetName("claude_code.tool")
		if rec.kind == consExecution {
			s.SetName("claude_code.tool.execution")
		}
		s.SetStartTimestamp(ts - pcommon.Timestamp(3*time.Millisecond))
		a.PutStr("tool_use_id", r.sc.calls[rec.calls[0]].id)
		a.PutStr("tool_name", "Bash")
	case consInvokeEnd:
		s.SetName("invoke_agent agent")
		s.SetStartTimestamp(0)
		a.PutStr("gen_ai.operation.name", "invoke_agent")
	case consInteraction:
		s.SetName("claude_code.interaction")
	}
}

func (r *consRun) appendLog(ld plog.Logs, rec *consRecord) {
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "agent")
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetTimestamp(pcommon.Timestamp(rec.time))
	lr.SetTraceID(consTraceID(r.sc.seed, rec.scope))
	a := lr.Attributes()
	a.PutInt(consRecAttr, int64(rec.id))
	a.PutStr(consSession, "s"+strconv.Itoa(rec.scope))
	a.PutStr("tool_use_id", r.sc.calls[rec.calls[0]].id)
	a.PutStr("tool_name", "Bash")
	if rec.kind == consDecision {
		lr.SetEventName("claude_code.tool_decision")
		if rec.reject {
			a.PutStr("decision", "reject")
		} else {
			a.PutStr("decision", "accept")
		}
	} else {
		lr.SetEventName("claude_code.tool_result")
		a.PutStr("success", "true")
		a.PutStr("duration_ms", "3")
	}
}

// deliver runs the sequence: each window shuffled, in random batches, with small clock
// advances; orphan_grace between windows; twice pairing_timeout after a timeout window.
func (r *consRun) deliver() error {
	ctx := context.Background()
	for w, win := range r.sc.windows {
		recs := slices.Clone(win)
		r.rng.Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
		step := consGrace / time.Duration(2*len(recs)+2)
		for len(recs) > 0 {
			n := 1 + r.rng.IntN(len(recs))
			td, ld := ptrace.NewTraces(), plog.NewLogs()
			for i := range recs[:n] {
				if recs[i].traces() {
					r.appendSpan(td, &recs[i])
				} else {
					r.appendLog(ld, &recs[i])
				}
			}
			recs = recs[n:]
			first, second := func() error { return r.traces.ConsumeTraces(ctx, td) }, func() error { return r.logs.ConsumeLogs(ctx, ld) }
			if r.rng.IntN(2) == 0 {
				first, second = second, first
			}
			for _, consume := range []func() error{first, second} {
				if err := consume(); err != nil {
					return err
				}
				if err := r.shared.engine.Stats().CheckConservation(); err != nil {
					return fmt.Errorf("window %d: %w", w, err)
				}
			}
			r.advance(time.Duration(r.rng.Int64N(int64(step) + 1)))
			if r.between != nil {
				if err := r.between(); err != nil {
					return fmt.Errorf("window %d: %w", w, err)
				}
			}
		}
		r.advance(consGrace)
		if r.sc.timeout[w] {
			r.advance(2*consTimeout + consGrace)
		}
		if err := r.shared.engine.Stats().CheckConservation(); err != nil {
			return fmt.Errorf("after window %d: %w", w, err)
		}
	}
	return nil
}

// observe reads what left the component and checks that every input record left exactly
// once.
func (r *consRun) observe() (consOut, error) {
	out := consOut{results: map[int][]string{}, synthetic: map[int][]string{}, stats: r.shared.engine.Stats(),
		records: map[int64]string{}, counted: map[string]int64{}}
	callOf := map[string]int{}
	for i, c := range r.sc.calls {
		callOf[c.id] = i
	}
	seen := map[int64]int{}
	var crossSignal []string
	// visit reads one output record; companion says it is a claude_code.tool.execution span.
	visit := func(a pcommon.Map, isTraces, companion bool) error {
		if n, ok := a.Get(synth.AttrCallCounted); ok {
			out.counted[attrString(a, synth.AttrOutcome)+"/"+attrString(a, synth.AttrInterruptReason)] += n.Int()
		}
		if v, ok := a.Get(synth.AttrSynthetic); ok && v.Bool() {
			id, _ := a.Get("gen_ai.tool.call.id")
			c, ok := callOf[id.Str()]
			if !ok {
				return fmt.Errorf("synthetic record of unknown call %q", id.Str())
			}
			reason, _ := a.Get(synth.AttrInterruptReason)
			if r.sc.calls[c].viaLog != isTraces {
				out.synthetic[c] = append(out.synthetic[c], reason.Str())
			} else {
				// A call announced in logs also gets a span in its turn's trace.
				crossSignal = append(crossSignal, strconv.Itoa(c)+"/"+reason.Str())
			}
			return nil
		}
		rec, ok := a.Get(consRecAttr)
		if !ok {
			return fmt.Errorf("a record without %s", consRecAttr)
		}
		seen[rec.Int()]++
		out.records[rec.Int()] = outcomeOf(a)
		if o, ok := a.Get(synth.AttrOutcome); ok {
			id, ok1 := a.Get("gen_ai.tool.call.id")
			if !ok1 {
				id, ok1 = a.Get("tool_use_id")
			}
			c, ok2 := callOf[id.Str()]
			if !ok1 || !ok2 {
				return fmt.Errorf("outcome on record %d of no known call", rec.Int())
			}
			outcome := o.Str()
			if companion {
				outcome += "/companion"
			}
			out.results[c] = append(out.results[c], outcome)
		}
		return nil
	}
	for _, td := range r.tsink.AllTraces() {
		var err error
		forEachSpan(td, func(_ pcommon.Resource, s ptrace.Span) {
			if e := visit(s.Attributes(), true, s.Name() == "claude_code.tool.execution"); e != nil && err == nil {
				err = e
			}
		})
		if err != nil {
			return out, err
		}
	}
	for _, ld := range r.lsink.AllLogs() {
		var err error
		forEachLog(ld, func(_ pcommon.Resource, lr plog.LogRecord) {
			if e := visit(lr.Attributes(), false, false); e != nil && err == nil {
				err = e
			}
		})
		if err != nil {
			return out, err
		}
	}
	for _, win := range r.sc.windows {
		for _, rec := range win {
			if n := seen[int64(rec.id)]; n != 1 {
				return out, fmt.Errorf("record %d left %d times", rec.id, n)
			}
		}
	}
	if total := r.sc.records(); len(seen) != total {
		return out, fmt.Errorf("%d distinct records left, %d went in", len(seen), total)
	}
	for _, m := range []map[int][]string{out.results, out.synthetic} {
		for _, v := range m {
			slices.Sort(v)
		}
	}
	// A cross-signal span repeats a synthetic log record of the same call and reason.
	for _, x := range crossSignal {
		c, _ := strconv.Atoi(x[:strings.IndexByte(x, '/')])
		if !slices.Contains(out.synthetic[c], x[strings.IndexByte(x, '/')+1:]) {
			return out, fmt.Errorf("synthetic span %s repeats no synthetic log record", x)
		}
	}
	return out, nil
}

func (sc *consScenario) records() int {
	n := 0
	for _, w := range sc.windows {
		n += len(w)
	}
	return n
}

// telemetryStats reads the component's own metrics (specification section 7) into Stats.
func (r *consRun) telemetryStats() (pairing.Stats, error) {
	var rm metricdata.ResourceMetrics
	if err := r.tel.Reader.Collect(context.Background(), &rm); err != nil {
		return pairing.Stats{}, err
	}
	return statsFrom(&rm)
}

// consCheck runs one sequence and compares it with the model.
func consCheck(t *testing.T, sc *consScenario) error {
	r := consStart(t, sc)
	defer func() {
		_ = r.traces.Shutdown(context.Background())
		_ = r.logs.Shutdown(context.Background())
		_ = r.tel.Shutdown(context.Background())
	}()
	if err := r.deliver(); err != nil {
		return err
	}
	want := consModel(sc)
	// The last pipeline's shutdown flushes the engine; the metrics are read then, before the
	// telemetry shuts down.
	var tel pairing.Stats
	telErr := errors.New("the component did not shut down")
	prev := atLastShutdown
	atLastShutdown = func(s *shared) {
		if s == r.shared {
			tel, telErr = r.telemetryStats()
		}
	}
	defer func() { atLastShutdown = prev }()
	if err := r.traces.Shutdown(context.Background()); err != nil {
		return err
	}
	if err := r.logs.Shutdown(context.Background()); err != nil {
		return err
	}
	if telErr != nil {
		return telErr
	}
	if err := tel.CheckConservation(); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	got, err := r.observe()
	if err != nil {
		return err
	}
	if err := got.stats.CheckConservation(); err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	got.stats.EchoesIgnored = 0
	if got.stats != want.stats {
		return fmt.Errorf("engine counters\n got  %+v\n want %+v", got.stats, want.stats)
	}
	if tel != want.stats {
		return fmt.Errorf("metrics\n got  %+v\n want %+v", tel, want.stats)
	}
	for c := range sc.calls {
		if !slices.Equal(got.results[c], want.results[c]) {
			return fmt.Errorf("call %d: result outcomes %v, model %v", c, got.results[c], want.results[c])
		}
		if !slices.Equal(got.synthetic[c], want.synthetic[c]) {
			return fmt.Errorf("call %d: synthetic records %v, model %v", c, got.synthetic[c], want.synthetic[c])
		}
	}
	return nil
}

func (sc *consScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d, %d scopes\n", sc.seed, sc.scopes)
	for c, call := range sc.calls {
		fmt.Fprintf(&b, "  call %d: %s scope %d viaLog=%v\n", c, call.id, call.scope, call.viaLog)
	}
	names := map[consKind]string{consChat: "chat", consExec: "execute_tool", consInvokeEnd: "invoke_agent end", consInteraction: "interaction end", consDecision: "tool_decision", consLogResult: "tool_result"}
	for w, win := range sc.windows {
		fmt.Fprintf(&b, "  window %d (timeout after: %v)\n", w, sc.timeout[w])
		for _, r := range win {
			fmt.Fprintf(&b, "    rec %d %s scope %d t=%d calls=%v reject=%v span=%s\n", r.id, names[r.kind], r.scope, r.time%1e12/1e6, r.calls, r.reject, r.spanID)
		}
	}
	return b.String()
}

// TestConservationProperty runs 10,000 sequences (1,000,000 with -toolpair.long, one with
// -toolpair.seed).
func TestConservationProperty(t *testing.T) {
	seeds := []uint64{*toolpairSeed}
	if *toolpairSeed == 0 {
		n := 10_000
		if *toolpairLong {
			n = 1_000_000
		}
		seeds = make([]uint64, n)
		for i := range seeds {
			seeds[i] = consBase + uint64(i)
		}
	}
	for _, seed := range seeds {
		sc := consGenerate(seed)
		if err := consCheck(t, sc); err != nil {
			t.Fatalf("%v\nrerun alone with: go test -run '^TestConservationProperty$' . -toolpair.seed=%d\n%s", err, seed, sc)
		}
	}
}

// orderView returns what the order property compares of the records' outcomes: each record's
// own, except for several distinct result records of one kind for one call (the generator's
// late copies with another time, which a real source does not send: an export retry repeats the
// record): which of them is its source's first, paired, and which are duplicates depends on
// arrival order, so only their outcome names are compared, as a sorted list per call and kind.
func (sc *consScenario) orderView(records map[int64]string) map[string]string {
	type group struct {
		kind consKind
		call int
	}
	members := map[group][]int64{}
	for _, win := range sc.windows {
		for _, rec := range win {
			switch rec.kind {
			case consExec, consToolSpan, consLogResult, consExecution:
			default:
				continue
			}
			g := group{rec.kind, rec.calls[0]}
			members[g] = append(members[g], int64(rec.id))
		}
	}
	view := map[string]string{}
	for id, o := range records {
		view[strconv.FormatInt(id, 10)] = o
	}
	for g, ids := range members {
		if len(ids) < 2 {
			continue
		}
		var names []string
		for _, id := range ids {
			name, _, _ := strings.Cut(records[id], " ")
			names = append(names, name)
			delete(view, strconv.FormatInt(id, 10))
		}
		slices.Sort(names)
		view[fmt.Sprintf("call %d kind %d", g.call, g.kind)] = strings.Join(names, ",")
	}
	return view
}

// TestOrderPropertyRandomSequences: each random sequence of the conservation property test is
// delivered in three orders (its windows' records shuffled and split into batches differently,
// spans and log records interleaved otherwise): every record leaves with the same outcome,
// reason and duration, the records count the same calls (toolpair.call.counted), and the
// counters end the same (specification section 2, arrival order).
func TestOrderPropertyRandomSequences(t *testing.T) {
	n := 2_000
	if *toolpairLong {
		n = 100_000
	}
	for i := range n {
		seed := consBase + uint64(i)
		sc := consGenerate(seed)
		var first consOut
		for salt := range uint64(3) {
			r := consStartDelivery(t, sc, salt)
			if err := r.deliver(); err != nil {
				t.Fatal(err)
			}
			require.NoError(t, r.traces.Shutdown(context.Background()))
			require.NoError(t, r.logs.Shutdown(context.Background()))
			got, err := r.observe()
			require.NoError(t, err)
			_ = r.tel.Shutdown(context.Background())
			if salt == 0 {
				first = got
				continue
			}
			msg := fmt.Sprintf("seed %d, delivery %d\n%s", seed, salt, sc)
			require.Equal(t, sc.orderView(first.records), sc.orderView(got.records), msg)
			require.Equal(t, first.counted, got.counted, msg)
			got.stats.EchoesIgnored, first.stats.EchoesIgnored = 0, 0
			require.Equal(t, first.stats, got.stats, msg)
		}
	}
}
