// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

// Specification section 9: with storage, what a result record's delivery got, and what the
// processor could not send yet, survive a restart and a crash.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startGatedRun is startRun with g before the sinks and quick ticks.
func startGatedRun(t *testing.T, clock *testClock, ext *memStorage, g *gate) *rig {
	t.Helper()
	return newRig(t, withClock(clock), withHost(storageHost{memStorageID: ext}), withGate(g), withConfig(func(c *Config) {
		id := memStorageID
		c.Storage = &id
		quickTicks(c)
	}))
}

// TestRedeliveryAfterRestart: a tool_result refused downstream after the processor took it,
// the collector then stopping (gracefully or by a crash), is sent again to the restarted
// collector: it gets what its first delivery got, paired with its duration, not duplicate,
// whether its batch's resolution record or a checkpoint holds the delivery.
func TestRedeliveryAfterRestart(t *testing.T) {
	for _, stop := range []string{"shutdown", "crash"} {
		t.Run(stop, func(t *testing.T) {
			e, clock, g := newMemStorage(), newTestClock(), new(gate)
			run1 := startGatedRun(t, clock, e, g)
			run1.logRecords(ctClaudeDecision("toolu_1", "accept", 100))
			g.down()
			require.ErrorIs(t, run1.logs.ConsumeLogs(t.Context(), ctLogs(ctClaudeResult("toolu_1", 350))), errNextHopDown)
			if stop == "crash" {
				run1.crash()
			} else {
				run1.shutdown()
			}

			run2 := startGatedRun(t, clock, e, new(gate))
			run2.logRecords(ctClaudeResult("toolu_1", 350))
			assert.Equal(t, map[string][]string{"toolu_1": {"log:paired/250ms"}}, timedMarks(run2))
			assert.Zero(t, run2.stats().Duplicate)
			assert.Equal(t, int64(1), run2.sum("otelcol_processor_toolpair_redeliveries", nil))
		})
	}
	t.Run("held, then released while the next hop was down", func(t *testing.T) {
		e, clock, g := newMemStorage(), newTestClock(), new(gate)
		run1 := startGatedRun(t, clock, e, g)
		run1.spans(ctTool(1, 2, 0, "c1", 110, 150)) // held
		g.down()
		require.ErrorIs(t, run1.traces.ConsumeTraces(t.Context(), ctTraces(ctChat(1, 1, 0, 0, 100, "c1"))), errNextHopDown)
		run1.crash() // the released result was refused and never sent

		run2 := startGatedRun(t, clock, e, new(gate))
		// The restarted collector sends the kept result (its resolution record stored the
		// refusal's item), and the sender both of its batches again.
		run2.spans(ctChat(1, 1, 0, 0, 100, "c1"))
		run2.spans(ctTool(1, 2, 0, "c1", 110, 150))
		require.Eventually(t, func() bool { return len(timedMarks(run2)["c1"]) == 2 }, 5*time.Second, 5*time.Millisecond)
		assert.Equal(t, []string{"span:paired/50ms", "span:paired/50ms"}, timedMarks(run2)["c1"],
			"the kept release and the sender's copy, the same")
		assert.Zero(t, run2.stats().Duplicate)
	})
}

// TestUnsentSurvivesRestart: a synthetic span refused while the next hop is down is kept in
// storage over a restart and sent by the restarted collector once the next hop is back.
func TestUnsentSurvivesRestart(t *testing.T) {
	e, clock, g := newMemStorage(), newTestClock(), new(gate)
	run1 := startGatedRun(t, clock, e, g)
	run1.spans(ctChat(1, 1, 0, 0, 100, "c1"))
	g.down()
	clock.Advance(run1.cfg.PairingTimeout + time.Second)
	require.Eventually(t, func() bool { return run1.sum("otelcol_processor_toolpair_unsent", nil) == 1 }, 5*time.Second, 5*time.Millisecond)
	run1.shutdown()
	assert.Zero(t, run1.sum("otelcol_processor_toolpair_given_up", nil), "with storage nothing is given up at shutdown")

	run2 := startGatedRun(t, clock, e, new(gate))
	require.Eventually(t, func() bool { return len(timedMarks(run2)["c1"]) > 0 }, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, map[string][]string{"c1": {"span:interrupted/expired+synthetic"}}, timedMarks(run2))
	assert.Equal(t, int64(1), run2.sum("otelcol_processor_toolpair_resent", nil))
	require.Eventually(t, func() bool {
		for k := range e.snapshot() {
			if len(k) > len("toolpair.unsent.") && k[:len("toolpair.unsent.")] == "toolpair.unsent." {
				return false
			}
		}
		return true
	}, 5*time.Second, 5*time.Millisecond, "sent, it is deleted from storage")
}
