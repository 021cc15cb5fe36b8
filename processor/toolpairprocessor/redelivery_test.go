// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

// Specification section 2 (a record delivered again gets what its first delivery got) and 9
// (what the processor sends on its own and is refused is kept and sent again): the component
// before a next consumer that refuses for a while (gate), and a sender that sends every
// refused batch again (rig.deliver), as the OTLP receiver's callers do.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// errNextHopDown is what a gate answers while it is down: a retryable error, as an exporter
// with no queue returns it while its next hop is unreachable.
var errNextHopDown = errors.New("next hop down")

// gate stands between the component and its sinks: while down it refuses every delivery.
type gate struct{ closed atomic.Bool }

func (g *gate) down() { g.closed.Store(true) }
func (g *gate) up()   { g.closed.Store(false) }

func (g *gate) traces(next consumer.Traces) consumer.Traces {
	f, _ := consumer.NewTraces(func(ctx context.Context, td ptrace.Traces) error {
		if g.closed.Load() {
			return errNextHopDown
		}
		return next.ConsumeTraces(ctx, td)
	})
	return f
}

func (g *gate) logs(next consumer.Logs) consumer.Logs {
	f, _ := consumer.NewLogs(func(ctx context.Context, ld plog.Logs) error {
		if g.closed.Load() {
			return errNextHopDown
		}
		return next.ConsumeLogs(ctx, ld)
	})
	return f
}

// withGate puts g before every sink of the rig.
func withGate(g *gate) rigOption { return func(s *rigSetup) { s.gate = g } }

// quickTicks makes the component's ticker (and so the outbox's tries) run every 10 ms of wall
// time: orphan_grace, in the rig's clock, 100 ms.
func quickTicks(c *Config) { c.OrphanGrace = 100 * time.Millisecond }

// sendAgainTraces delivers td as a sender does: a copy of it each time, until the component
// takes it. It reports how many deliveries were refused.
func sendAgainTraces(t *testing.T, r *rig, td ptrace.Traces) int {
	t.Helper()
	refused := 0
	for range 50 {
		c := ptrace.NewTraces()
		td.CopyTo(c)
		if err := r.traces.ConsumeTraces(context.Background(), c); err == nil {
			return refused
		}
		refused++
		time.Sleep(time.Millisecond)
	}
	t.Fatal("never taken")
	return refused
}

// sendAgainLogs is sendAgainTraces for log records.
func sendAgainLogs(t *testing.T, r *rig, ld plog.Logs) int {
	t.Helper()
	refused := 0
	for range 50 {
		c := plog.NewLogs()
		ld.CopyTo(c)
		if err := r.logs.ConsumeLogs(context.Background(), c); err == nil {
			return refused
		}
		refused++
		time.Sleep(time.Millisecond)
	}
	t.Fatal("never taken")
	return refused
}

// refusedOnceTraces delivers a copy of td while g is down (refused), then opens g and sends
// it again.
func refusedOnceTraces(t *testing.T, r *rig, g *gate, td ptrace.Traces) {
	t.Helper()
	g.down()
	c := ptrace.NewTraces()
	td.CopyTo(c)
	require.ErrorIs(t, r.traces.ConsumeTraces(context.Background(), c), errNextHopDown)
	g.up()
	sendAgainTraces(t, r, td)
}

// refusedOnceLogs is refusedOnceTraces for log records.
func refusedOnceLogs(t *testing.T, r *rig, g *gate, ld plog.Logs) {
	t.Helper()
	g.down()
	c := plog.NewLogs()
	ld.CopyTo(c)
	require.ErrorIs(t, r.logs.ConsumeLogs(context.Background(), c), errNextHopDown)
	g.up()
	sendAgainLogs(t, r, ld)
}

// timedMarks is rig.marks with each paired record's elapsed time ("/250ms": elapsed_ms, else
// duration_ms where they agree).
func timedMarks(r *rig) map[string][]string {
	out := map[string][]string{}
	add := func(signal string, attrs pcommon.Map) {
		if _, ok := attrs.Get("toolpair.outcome"); !ok {
			return
		}
		m := ctMark(signal, attrs)
		if d, ok := attrs.Get("toolpair.call.elapsed_ms"); ok {
			m += fmt.Sprintf("/%dms", d.Int())
		} else if d, ok := attrs.Get("toolpair.call.duration_ms"); ok {
			m += fmt.Sprintf("/%dms", d.Int())
		}
		id := ctCallIDOf(attrs)
		out[id] = append(out[id], m)
	}
	for _, s := range r.outSpans() {
		add("span", s.Attributes())
	}
	for _, lr := range r.outLogs() {
		add("log", lr.Attributes())
	}
	for _, ms := range out {
		sort.Strings(ms)
	}
	return out
}

// TestRedeliveryGetsTheFirstOutcome: a result refused after the processor took it, and sent
// again, reaches the next hop with the outcome and duration it would have had without the
// refusal; nothing is a duplicate and the balances hold, the redelivery outside them.
func TestRedeliveryGetsTheFirstOutcome(t *testing.T) {
	t.Run("claude code tool_result", func(t *testing.T) {
		g := new(gate)
		r := newRig(t, withGate(g))
		r.logRecords(ctClaudeDecision("toolu_1", "accept", 100))
		refusedOnceLogs(t, r, g, ctLogs(ctClaudeResult("toolu_1", 350)))
		assert.Equal(t, map[string][]string{"toolu_1": {"log:paired/250ms"}}, timedMarks(r))
		assert.Equal(t, int64(1), r.sum("otelcol_processor_toolpair_redeliveries", map[string]string{"otel.signal": "logs"}))
		assert.Zero(t, r.stats().Duplicate)
		r.checkConservation()
	})
	t.Run("genai execute_tool span", func(t *testing.T) {
		g := new(gate)
		r := newRig(t, withGate(g))
		r.spans(ctChat(1, 1, 0, 0, 100, "c1"))
		refusedOnceTraces(t, r, g, ctTraces(ctTool(1, 2, 0, "c1", 110, 150)))
		assert.Equal(t, map[string][]string{"c1": {"span:paired/50ms"}}, timedMarks(r))
		r.checkConservation()
	})
	t.Run("one batch holding the use and the result", func(t *testing.T) {
		g := new(gate)
		r := newRig(t, withGate(g))
		refusedOnceTraces(t, r, g, ctTraces(ctChat(1, 1, 0, 0, 100, "c1"), ctTool(1, 2, 0, "c1", 110, 150)))
		assert.Equal(t, map[string][]string{"c1": {"span:paired/50ms"}}, timedMarks(r))
		assert.Equal(t, int64(1), r.sum("otelcol_processor_toolpair_uses_repeated", nil), "the use sent again is a repeat")
		r.checkConservation()
	})
	t.Run("a different second record is still a duplicate", func(t *testing.T) {
		g := new(gate)
		r := newRig(t, withGate(g))
		r.logRecords(ctClaudeDecision("toolu_1", "accept", 100))
		refusedOnceLogs(t, r, g, ctLogs(ctClaudeResult("toolu_1", 350)))
		r.logRecords(ctClaudeResult("toolu_1", 360)) // another record: dropped by default
		assert.Equal(t, map[string][]string{"toolu_1": {"log:paired/250ms"}}, timedMarks(r))
		assert.Equal(t, uint64(1), r.stats().Duplicate)
		r.checkConservation()
	})
}

// TestRefusedAdditionsAreSentAgain: what the processor adds to the pipelines on its own (a
// held result its use released, a synthetic span due while the next hop is down) and is
// refused reaches the next hop once it is back, sent by the processor itself: the sender of
// the refused batch sends only its own records again.
func TestRefusedAdditionsAreSentAgain(t *testing.T) {
	t.Run("a held result released by a refused use batch", func(t *testing.T) {
		g := new(gate)
		r := newRig(t, withGate(g), withConfig(quickTicks))
		r.spans(ctTool(1, 2, 0, "c1", 110, 150)) // held: its use is missing
		assert.Empty(t, timedMarks(r))
		refusedOnceTraces(t, r, g, ctTraces(ctChat(1, 1, 0, 0, 100, "c1")))
		require.Eventually(t, func() bool { return len(timedMarks(r)["c1"]) > 0 }, 5*time.Second, 5*time.Millisecond)
		assert.Equal(t, map[string][]string{"c1": {"span:paired/50ms"}}, timedMarks(r))
		assert.Equal(t, int64(1), r.sum("otelcol_processor_toolpair_resent", map[string]string{"otel.signal": "traces"}))
		assert.Zero(t, r.sum("otelcol_processor_toolpair_unsent", nil))
		r.checkConservation()
	})
	t.Run("a synthetic span due during the outage", func(t *testing.T) {
		g := new(gate)
		r := newRig(t, withGate(g), withConfig(quickTicks))
		r.spans(ctChat(1, 1, 0, 0, 100, "c1"))
		g.down()
		r.clock.Advance(r.cfg.PairingTimeout + time.Second)
		require.Eventually(t, func() bool { return r.sum("otelcol_processor_toolpair_unsent", nil) == 1 }, 5*time.Second, 5*time.Millisecond,
			"expired while the next hop is down: kept")
		assert.Empty(t, r.outSpans()[1:], "nothing but the chat span reached the next hop")
		g.up()
		require.Eventually(t, func() bool { return len(timedMarks(r)["c1"]) > 0 }, 5*time.Second, 5*time.Millisecond)
		assert.Equal(t, map[string][]string{"c1": {"span:interrupted/expired+synthetic"}}, timedMarks(r))
		r.checkConservation()
	})
}

// TestRedeliveryThroughOutages: calls sent through a sequence of outages by a sender that
// sends every refused batch again, in batches of random sizes, uses and results mixed, some
// results before their uses: every result reaches the next hop paired, once per delivery
// taken, none duplicate, and the balances hold.
func TestRedeliveryThroughOutages(t *testing.T) {
	g := new(gate)
	r := newRig(t, withGate(g), withConfig(quickTicks), tracesOnly())
	rng := rand.New(rand.NewPCG(1, 2))
	const calls = 400
	var specs []ctSpan
	for i := range calls {
		call := "call_" + string(rune('a'+i%26)) + string(rune('a'+i/26%26))
		trace := byte(1 + i%200)
		use, res := ctChat(trace, byte(2*(i/200)+1), 0, int64(i), int64(i)+10, call), ctTool(trace, byte(2*(i/200)+2), 0, call, int64(i)+20, int64(i)+40)
		if rng.IntN(4) == 0 {
			use, res = res, use // the result first: held until its use
		}
		specs = append(specs, use, res)
	}
	for len(specs) > 0 {
		n := min(len(specs), 1+rng.IntN(8))
		batch := ctTraces(specs[:n]...)
		specs = specs[n:]
		if rng.IntN(3) == 0 {
			g.down()
			c := ptrace.NewTraces()
			batch.CopyTo(c)
			_ = r.traces.ConsumeTraces(context.Background(), c)
			if rng.IntN(2) == 0 {
				g.up()
			}
		}
		g.up()
		sendAgainTraces(t, r, batch)
	}
	require.Eventually(t, func() bool { return r.sum("otelcol_processor_toolpair_unsent", nil) == 0 }, 5*time.Second, 5*time.Millisecond)
	for id, ms := range timedMarks(r) {
		for _, m := range ms {
			assert.Equal(t, "span:paired/30ms", m, id)
		}
	}
	assert.Equal(t, calls, len(timedMarks(r)), "every call's result reached the next hop")
	assert.Zero(t, r.stats().Duplicate)
	assert.Equal(t, uint64(calls), r.stats().Paired)
	r.checkConservation()
}
