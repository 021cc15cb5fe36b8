// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The tests of this file are the windows the two-tier crash test of examples/scale-out
// (test/distribution/scaleout_crash_test.go, TestScaleOutSurvivesABackCrash) found: a back
// collector killed (kill -9) between two checkpoints, its batches' resolution records the only
// trace of what it did since the last one, restarted on its storage. Each test runs the same
// records through a collector that is not killed (the reference) and through one killed at the
// instant under test, and requires the same marks (specification section 9: a crash loses no
// call whose use left the processor and contradicts nothing that left, and pairing carries on
// as though the collector had never stopped). No checkpoint is written in any of them
// (checkpoint_interval is longer than the tests).

// crashWindowCapture reads a capture of testdata/ (<agent>/<scenario>).
func crashWindowCapture(t *testing.T, capture string) (plog.Logs, ptrace.Traces) {
	t.Helper()
	dir := filepath.Join("..", "..", "testdata", filepath.FromSlash(capture))
	ld, err := golden.ReadLogs(filepath.Join(dir, "logs.json"))
	require.NoError(t, err)
	td, err := golden.ReadTraces(filepath.Join(dir, "traces.json"))
	require.NoError(t, err)
	return ld, td
}

// crashWindowRuns runs before and then through one run of the component with storage (the
// reference), and through a run that does before, is killed (rig.crash: nothing more is
// written), and a second run on the same storage that does then. It returns the marks of each
// (rig.marks; for the killed collector, both runs' together) once after has run on the last
// run of each (expiries: advance).
func crashWindowRuns(t *testing.T, before, then, after func(r *rig)) (reference, crashed map[string][]string) {
	t.Helper()
	noCheckpoint := func(c *Config) { c.CheckpointInterval = time.Hour }
	ref := startRun(t, newTestClock(), newMemStorage(), noCheckpoint)
	before(ref)
	then(ref)
	if after != nil {
		after(ref)
	}
	reference = ref.marks(nil)
	ref.shutdown()

	e, clock := newMemStorage(), newTestClock()
	run1 := startRun(t, clock, e, noCheckpoint)
	before(run1)
	first := run1.marks(nil)
	run1.crash()
	run2 := startRun(t, clock, e, noCheckpoint)
	then(run2)
	if after != nil {
		after(run2)
	}
	crashed = run2.marks(nil)
	for call, m := range first {
		crashed[call] = append(m, crashed[call]...)
	}
	run2.shutdown()
	return reference, crashed
}

// TestCrashWindowReplayedResolutionKeepsItsReports: window "a resolved call replayed from a
// resolution record comes back closed". Codex reports a call's result in a log event
// (codex.tool_result) and in its tool dispatch span (exec_command), two sources: each source's
// first record gets the outcome its content shows (specification section 2). The log events
// (the decision and the result) pair the call before the crash; the spans come after the
// restart. The resolution record holds only the call's key (statefile.Record.Resolved), and
// Restore makes such a call resolved through markResolved (internal/pairing/persist_added.go), a bare
// entry: not answered (flagAnswered), no source, no reporters, no orphan or standalone flag. A
// result for a resolved call that is not answered is a duplicate (transitions.go, result: "closed
// without a result"), so the exec_command span, paired on the reference, is a duplicate (dropped
// under the default duplicates: drop) after the crash. In the crash test: the exec_command spans
// of codex/llm_timeout (the "tool_timeout" capture), codex/normal and codex/parallel, and
// the aborted exec_command span of codex/interrupt_sigterm, absent from the back tier.
//
// Fix: a resolution record carries, per resolved call, what a checkpoint keeps of a resolved call
// (CallSnapshot with State CallResolved: Source, Reporters, Flags with answered, orphan and
// standalone, UseTime, SignalUseTimes, Match), as Engine.Added does for pending calls (a
// Resolved snapshot per resolved call, taken in finishBatch with Added, under the engine's
// lock), and Restore rebuilds a replayed resolution from it (markResolved taking a CallSnapshot,
// not a Key), so that the call is answered by the same source, with the same outcome, after the
// restart.
func TestCrashWindowReplayedResolutionKeepsItsReports(t *testing.T) {
	ld, td := crashWindowCapture(t, "codex/llm_timeout")
	reference, crashed := crashWindowRuns(t,
		func(r *rig) { r.consumeLogs(ld) },
		func(r *rig) { r.consume(td) },
		nil)
	const call = "call_mock_llm_timeout_01"
	require.Equal(t, []string{"log:paired", "span:paired"}, reference[call], "the reference: each source's first record paired")
	assert.Equal(t, reference[call], crashed[call], "the exec_command span after the restart is its source's first record of the call, not a duplicate")

	// The same for a call whose result was settled orphan before the crash (its use never
	// came): another source's first record of it is orphan too (section 2), not a duplicate.
	t.Run("orphan", func(t *testing.T) {
		reference, crashed := crashWindowRuns(t,
			func(r *rig) {
				r.logRecords(ctCodexDecision("c0", "approved", 100)) // the scope saw a use
				r.logRecords(ctCodexResult("c1", 1000))
				r.advance(r.cfg.OrphanGrace + time.Second)
			},
			func(r *rig) { r.spans(ctCodexToolSpan("c1", 900, 1000, false)) },
			nil)
		require.Equal(t, []string{"log:orphan", "span:orphan"}, reference["c1"])
		assert.Equal(t, reference["c1"], crashed["c1"])
	})
}

// TestCrashWindowAnchorsOfABatchWithoutCallsAreRecorded: window "a batch without tool records
// does not write the anchor spans it brought". Codex announces the call of
// codex/interrupt_sigterm in its logs only (codex.tool_decision); its spans bring no tool record
// of the call, only the turn's model-request span, the anchor a synthetic span of a call
// announced only in logs goes under (specification section 3). The logs come first: the call is
// pending, and its batch's record holds it. The spans come next, before the crash: pairBatch
// (batchflow.go) hands their activity to the engine (Engine.Observe: the anchor is in memory), but
// processTraces returns before finishBatch when the batch has no tool events (traces.go: `if
// len(b.Events) == 0 { return td, nil }`; logs.go likewise for log records), and finishBatch is
// where Engine.Added copies a batch's anchor spans into its record. No record holds the anchor:
// after the restart the call expires with its synthetic log record and no synthetic span (the
// reference has both), against specification section 9 ("the turn and model-request spans a
// call announced only in logs is put under are part of the stored state, written with the batch
// that brought them"). In the crash test: the synthetic span of codex/interrupt_sigterm's
// call_mock_interrupt_01 (trace 027dc9aff3becbb3446c9fd492329f4d, span 78455fea46a8fcbb),
// absent from the back tier whenever the back collector was killed after the Codex spans and
// before the next checkpoint.
//
// Fix: processTraces and processLogs write the record of a batch without tool events whose
// activity holds anchor spans (with storage: s.record(ctx, nil, s.engine.Added(nil, b.Acts))
// before returning), or run finishBatch whenever len(b.Acts) > 0.
func TestCrashWindowAnchorsOfABatchWithoutCallsAreRecorded(t *testing.T) {
	ld, td := crashWindowCapture(t, "codex/interrupt_sigterm")
	reference, crashed := crashWindowRuns(t,
		func(r *rig) {
			r.consumeLogs(ld)
			r.consume(td)
		},
		func(*rig) {},
		func(r *rig) { r.advance(r.cfg.PairingTimeout + time.Minute) })
	const call = "call_mock_interrupt_01"
	require.Equal(t, []string{"log:interrupted/expired+synthetic", "span:interrupted/expired+synthetic"}, reference[call],
		"the reference: the synthetic log record, and the synthetic span under the model-request span")
	assert.Equal(t, reference[call], crashed[call], "after the restart the call still has its anchor")
}

// TestCrashWindowCallAnnouncedInBothSignals: a call announced in both signals before the crash
// (Gemini CLI's details log record and llm_call span of gemini/interrupt_sigterm, logs first,
// so that the span's announcement is a repeated use, which Engine.Added does not copy) still
// gets its synthetic record in each signal after the restart. It passes today (the synthetic
// span is made under the llm_call span, an anchor its batch's record holds): a guard for the fix
// of the window above, should it copy the repeated announcements' origins.
func TestCrashWindowCallAnnouncedInBothSignals(t *testing.T) {
	td, ld := readGemini(t, "interrupt_sigterm")
	reference, crashed := crashWindowRuns(t,
		func(r *rig) {
			r.consumeLogs(ld)
			r.consume(td)
		},
		func(*rig) {},
		func(r *rig) { r.advance(r.cfg.PairingTimeout + time.Minute) })
	const call = "run_shell_command__run_shell_command_1795323400327_0" // as Gemini CLI writes it
	require.Contains(t, reference[call], "span:interrupted/expired+synthetic")
	require.Contains(t, reference[call], "log:interrupted/expired+synthetic")
	assert.Equal(t, reference[call], crashed[call])
}

// TestCrashWindowRestoredScopeKeepsItsUses: window "a restored scope forgets its uses". A
// batch whose use and result pair in the batch itself (Claude Code's tool_decision and
// tool_result in one export, as a front's exporter batches them) adds nothing (Engine.Added
// returns nil: no event is left VerdictPending), so its resolution record holds the call's key
// alone. After the crash Restore makes the call's scope from that key (markResolved,
// restoreConversation in internal/pairing/persist_snapshot.go), with usesSeen false: the scope forgot it
// saw a use. A result of that scope whose use never came (lost, or routed to another collector)
// is then standalone after orphan_grace, where the reference says orphan (section 2: orphan "in a
// scope where uses are visible"). That is the issue's "standalone on both records": once the
// first record of a call settles standalone, the call's further reports are standalone too.
//
// Fix: a resolution record carries the scopes of the calls it resolved as Added carries those of
// the calls it left pending (ConversationSnapshot with UsesSeen, LastSeen, LastRecord), for every
// batch that resolved anything in a scope, and Restore applies them before the resolutions
// (Merge); or the record carries the hashes of the scopes that saw a use (UsedConversations).
func TestCrashWindowRestoredScopeKeepsItsUses(t *testing.T) {
	reference, crashed := crashWindowRuns(t,
		func(r *rig) {
			r.logRecords(ctClaudeDecision("toolu_1", "accept", 1000), ctClaudeResult("toolu_1", 1500))
		},
		func(r *rig) { r.logRecords(ctClaudeResult("toolu_2", 2500)) },
		func(r *rig) { r.advance(r.cfg.OrphanGrace + time.Second) })
	require.Equal(t, []string{"log:paired"}, reference["toolu_1"])
	require.Equal(t, []string{"log:orphan"}, reference["toolu_2"], "the reference: the scope saw a use")
	assert.Equal(t, reference["toolu_2"], crashed["toolu_2"], "the restored scope still saw a use")
}

// TestCrashWindowHeldResultSurvives: window "a held result is acknowledged but not stored". Two
// front collectors deliver one scope's records to its back collector in any order: a result
// often comes before its use, and waits for it (held). Its batch returns with the record held
// and none left to forward (ErrSkipProcessingData), so the receiver answers the front, which
// forgets the record; the batch's resolution record does not hold it (Engine.Added copies no
// waiting call: "A held result (the record itself) is not part of it: it waits for the next
// checkpoint", docs/state.md). A crash before the next checkpoint loses it, and nothing sends it
// again: its use, after the restart, is pending, and expires (or is closed by its next step)
// with a synthetic record, where the reference pairs it. Specification section 9 allows this
// loss ("what a crash may still lose is limited to what never left the processor: a result held
// for its use since the last checkpoint"), written for a collector fed by an agent that sends a
// result again; a back collector's sender does not, so in a two-tier deployment the loss is the
// acknowledgement's and the specification's sentence has to go with the fix.
//
// Fix: Engine.Added also copies the results the batch held (VerdictHeld: CallWaiting with the
// held record, converted under the engine's lock as Snapshot does, statestore.MarshalHeld, and
// the reports held with a waiting result), finishBatch passing the converter; statefile encodes
// them in the record's added State as a checkpoint does; Restore takes them as it takes a
// checkpoint's waiting calls. Its cost is the held record's bytes per batch that holds one.
func TestCrashWindowHeldResultSurvives(t *testing.T) {
	reference, crashed := crashWindowRuns(t,
		func(r *rig) { r.logRecords(ctClaudeResult("toolu_1", 1500)) },
		func(r *rig) { r.logRecords(ctClaudeDecision("toolu_1", "accept", 1000)) },
		func(r *rig) { r.advance(r.cfg.PairingTimeout + time.Minute) })
	require.Equal(t, []string{"log:paired"}, reference["toolu_1"])
	assert.Equal(t, reference["toolu_1"], crashed["toolu_1"], "the result held before the crash pairs with its use after it")
}
