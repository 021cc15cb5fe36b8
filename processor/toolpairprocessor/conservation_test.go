// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
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
	// again, when set, draws the redeliveries (TestRedeliveryProperty): after a batch, now
	// and then, a prefix of the window's batches is delivered again, copies of them as they
	// were first sent, as a sender does after a refusal. redelivered lists the records
	// delivered more than once; a record may leave once per delivery, with one outcome.
	again       *rand.Rand
	redelivered map[int64]bool
}

// sentBatch is a batch as it was first sent, kept for its redelivery.
type sentBatch struct {
	td          ptrace.Traces
	ld          plog.Logs
	tracesFirst bool
}

func consStart(t *testing.T, sc *consScenario) *consRun {
	return consStartDelivery(t, sc, 0)
}

// consStartDelivery is consStart with the delivery order drawn from salt: the same scenario
// delivered in another order (the records of each window shuffled and split otherwise).
func consStartDelivery(t *testing.T, sc *consScenario, salt uint64) *consRun {
	return consStartWith(t, sc, salt, nil)
}

// consStartWith is consStartDelivery with the configuration changed by mutate (nil: none).
func consStartWith(t *testing.T, sc *consScenario, salt uint64, mutate func(*Config)) *consRun {
	clock := newTestClock()
	f := newFactoryWithClock(clock)
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.OrphanGrace = consGrace
	cfg.PairingTimeout = consTimeout
	cfg.Orphans, cfg.Duplicates = DispositionMark, DispositionMark
	if mutate != nil {
		mutate(cfg)
	}
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
	tickNow(r.shared)
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
	for w, win := range r.sc.windows {
		recs := slices.Clone(win)
		r.rng.Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
		step := consGrace / time.Duration(2*len(recs)+2)
		var sent []sentBatch
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
			tracesFirst := r.rng.IntN(2) != 0
			if r.again != nil {
				sent = append(sent, sentBatch{td: ptrace.NewTraces(), ld: plog.NewLogs(), tracesFirst: tracesFirst})
				td.CopyTo(sent[len(sent)-1].td)
				ld.CopyTo(sent[len(sent)-1].ld)
			}
			if err := r.consumeBoth(td, ld, tracesFirst); err != nil {
				return fmt.Errorf("window %d: %w", w, err)
			}
			if r.again != nil && r.again.IntN(3) == 0 {
				// A prefix of the window's batches, delivered again.
				for _, b := range sent[:1+r.again.IntN(len(sent))] {
					td, ld := ptrace.NewTraces(), plog.NewLogs()
					b.td.CopyTo(td)
					b.ld.CopyTo(ld)
					r.noteRedelivered(td, ld)
					if err := r.consumeBoth(td, ld, b.tracesFirst); err != nil {
						return fmt.Errorf("window %d, delivered again: %w", w, err)
					}
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
		if err := engineStats(r.shared).CheckConservation(); err != nil {
			return fmt.Errorf("after window %d: %w", w, err)
		}
	}
	return nil
}

// consumeBoth delivers td to the traces pipeline and ld to the logs pipeline, in that order
// when tracesFirst is set, checking the conservation after each.
func (r *consRun) consumeBoth(td ptrace.Traces, ld plog.Logs, tracesFirst bool) error {
	ctx := context.Background()
	first, second := func() error { return r.logs.ConsumeLogs(ctx, ld) }, func() error { return r.traces.ConsumeTraces(ctx, td) }
	if tracesFirst {
		first, second = second, first
	}
	for _, consume := range []func() error{first, second} {
		if err := consume(); err != nil {
			return err
		}
		if err := engineStats(r.shared).CheckConservation(); err != nil {
			return err
		}
	}
	return nil
}

// noteRedelivered lists the records of td and ld as delivered again.
func (r *consRun) noteRedelivered(td ptrace.Traces, ld plog.Logs) {
	if r.redelivered == nil {
		r.redelivered = map[int64]bool{}
	}
	forEachSpan(td, func(_ pcommon.Resource, s ptrace.Span) {
		if v, ok := s.Attributes().Get(consRecAttr); ok {
			r.redelivered[v.Int()] = true
		}
	})
	forEachLog(ld, func(_ pcommon.Resource, lr plog.LogRecord) {
		if v, ok := lr.Attributes().Get(consRecAttr); ok {
			r.redelivered[v.Int()] = true
		}
	})
}

// observe reads what left the component and checks that every input record left exactly
// once (a record delivered again: at least once, every copy with the same outcome).
func (r *consRun) observe() (consOut, error) {
	out := consOut{results: map[int][]string{}, synthetic: map[int][]string{}, stats: engineStats(r.shared),
		records: map[int64]string{}, counted: map[string]int64{}}
	callOf := map[string]int{}
	for i, c := range r.sc.calls {
		callOf[c.id] = i
	}
	seen := map[int64]int{}
	var crossSignal []string
	// visit reads one output record; companion says it is a claude_code.tool.execution span.
	visit := func(a pcommon.Map, isTraces, companion bool) error {
		if rec, ok := a.Get(consRecAttr); ok && seen[rec.Int()] > 0 {
			// Another copy of a record delivered again: what the first copy got.
			if !r.redelivered[rec.Int()] {
				return fmt.Errorf("record %d left twice, never delivered twice", rec.Int())
			}
			if o := outcomeOf(a); o != out.records[rec.Int()] {
				return fmt.Errorf("record %d left as %q and as %q", rec.Int(), out.records[rec.Int()], o)
			}
			seen[rec.Int()]++
			return nil
		}
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
			if n := seen[int64(rec.id)]; n != 1 && (n < 1 || !r.redelivered[int64(rec.id)]) {
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
	defer onLastShutdown(r.shared, func() { tel, telErr = r.telemetryStats() })()
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

// TestConservationPropertyWithBounds: the conservation of section 7 holds, in the engine and
// in the metrics, when the bounds cut into the random sequences: few pending calls (in all and
// per tenant), few calls per record, few held bytes. (Outcomes then differ from the model,
// which knows no bound.)
func TestConservationPropertyWithBounds(t *testing.T) {
	n := 2_000
	if *toolpairLong {
		n = 100_000
	}
	bounded := func(c *Config) {
		c.MaxPendingCalls, c.MaxPendingCallsPerTenant = 4, 3
		c.MaxCallsPerRecord = 2
		c.MaxHeldBytes = 400
	}
	for i := range n {
		seed := consBase + uint64(i)
		sc := consGenerate(seed)
		r := consStartWith(t, sc, 0, bounded)
		err := r.deliver()
		if err == nil {
			var tel pairing.Stats
			telErr := errors.New("the component did not shut down")
			restore := onLastShutdown(r.shared, func() { tel, telErr = r.telemetryStats() })
			err = errors.Join(r.traces.Shutdown(context.Background()), r.logs.Shutdown(context.Background()))
			restore()
			if err == nil {
				err = telErr
			}
			if err == nil {
				err = tel.CheckConservation()
			}
			if err == nil {
				err = engineStats(r.shared).CheckConservation()
			}
			if err == nil && engineStats(r.shared).HeldBytes != 0 {
				err = fmt.Errorf("%d bytes still counted held after shutdown", engineStats(r.shared).HeldBytes)
			}
		}
		_ = r.tel.Shutdown(context.Background())
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, sc)
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

// TestRedeliveryProperty: each random sequence of the conservation property test is delivered
// once, and again with prefixes of its windows' batches delivered twice at random points (a
// sender sending again what was refused after the processor took it): every record leaves
// with the outcome, reason and duration it has when delivered once (each copy of it alike),
// the records count the same calls, the engine's counters end the same but for the uses seen
// again (repeated uses), and section 7 holds after every batch (specification section 2,
// delivered again).
func TestRedeliveryProperty(t *testing.T) {
	n := 2_000
	if *toolpairLong {
		n = 100_000
	}
	for i := range n {
		seed := consBase + uint64(i)
		sc := consGenerate(seed)
		var once consOut
		for _, again := range []bool{false, true} {
			r := consStartDelivery(t, sc, 0)
			if again {
				r.again = rand.New(rand.NewPCG(seed, 0xa9a1))
			}
			if err := r.deliver(); err != nil {
				t.Fatalf("seed %d: %v\n%s", seed, err, sc)
			}
			require.NoError(t, r.traces.Shutdown(context.Background()))
			require.NoError(t, r.logs.Shutdown(context.Background()))
			got, err := r.observe()
			_ = r.tel.Shutdown(context.Background())
			require.NoError(t, err, "seed %d\n%s", seed, sc)
			if !again {
				once = got
				continue
			}
			msg := fmt.Sprintf("seed %d, delivered again: %v\n%s", seed, r.redelivered, sc)
			require.Equal(t, once.records, got.records, msg)
			require.Equal(t, once.counted, got.counted, msg)
			require.Equal(t, once.synthetic, got.synthetic, msg)
			require.NoError(t, got.stats.CheckConservation(), msg)
			got.stats.EchoesIgnored, once.stats.EchoesIgnored = 0, 0
			got.stats.UsesRepeated, once.stats.UsesRepeated = 0, 0
			require.Equal(t, once.stats, got.stats, msg)
		}
	}
}
