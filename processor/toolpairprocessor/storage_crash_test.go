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
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The tests of this file kill a run (crash: nothing more is written) right after a use
// arrived, with no checkpoint written since, and check that the call is not lost
// (specification section 9): its batch's record holds it, with what its synthetic records
// need.

// TestStorageCrashRightAfterUse: a call announced in a span or in a log record, its run
// killed before any checkpoint covers it (none at all, or one from before the use): after the
// restart its result pairs, with its true duration, or its session's end closes it with its
// synthetic record.
func TestStorageCrashRightAfterUse(t *testing.T) {
	for _, tc := range []struct {
		name   string
		use    func(r *rig)
		result func(r *rig)
		end    func(r *rig)
		call   string
		signal string
		closed []string // the call's marks once its session ended
	}{
		{
			name: "span", call: "c1", signal: "span", closed: []string{"span:interrupted/session_end+synthetic"},
			use:    func(r *rig) { r.spans(ctChat(1, 1, 7, 0, 1000, "c1")) },
			result: func(r *rig) { r.spans(ctTool(1, 2, 7, "c1", 1200, 1500)) },
			// The agent span the model request ran under ends: its session ends.
			end: func(r *rig) { r.spans(ctAgent(1, 7, 0, 0, 2000)) },
		},
		{
			// The synthetic span goes under the turn span, the session's end.
			name: "log", call: "toolu_1", signal: "log", closed: []string{"log:interrupted/session_end+synthetic", "span:interrupted/session_end+synthetic"},
			use: func(r *rig) {
				d := ctClaudeDecision("toolu_1", "accept", 1000)
				d.trace = 4
				r.logRecords(d)
			},
			result: func(r *rig) { r.logRecords(ctClaudeResult("toolu_1", 1500)) },
			end: func(r *rig) {
				r.spans(ctSpan{service: "claude-code", trace: 4, id: 1, name: "claude_code.interaction", start: 0, end: 2000,
					attrs: map[string]any{"session.id": "sess-1"}})
			},
		},
	} {
		for _, checkpoint := range []bool{false, true} {
			name := tc.name + "/no_checkpoint"
			if checkpoint {
				name = tc.name + "/checkpoint_before_the_use"
			}
			t.Run(name+"/result", func(t *testing.T) {
				e, clock := newMemStorage(), newTestClock()
				run1 := startRun(t, clock, e, nil)
				if checkpoint {
					run1.checkpointNow()
				}
				tc.use(run1)
				run1.crash()

				run2 := startRun(t, clock, e, nil)
				tc.result(run2)
				assert.Equal(t, map[string][]string{tc.call: {tc.signal + ":paired"}}, run2.marks(nil))
				var attrs pcommon.Map
				for _, s := range run2.outSpans() {
					attrs = s.Attributes()
				}
				for _, lr := range run2.outLogs() {
					attrs = lr.Attributes()
				}
				assert.EqualValues(t, 500, elapsedMsOf(attrs), "the true time from the use before the crash")
			})
			t.Run(name+"/session_end", func(t *testing.T) {
				e, clock := newMemStorage(), newTestClock()
				run1 := startRun(t, clock, e, nil)
				if checkpoint {
					run1.checkpointNow()
				}
				tc.use(run1)
				run1.crash()

				run2 := startRun(t, clock, e, nil)
				tc.end(run2)
				run2.advance(run2.cfg.OrphanGrace + time.Second)
				assert.EventuallyWithT(t, func(c *assert.CollectT) {
					assert.Equal(c, tc.closed, run2.marks(nil)[tc.call])
				}, 5*time.Second, 10*time.Millisecond)
			})
		}
	}
}

// TestStorageCrashLogCallInItsTurn: the real capture of Claude Code killed while its Bash tool
// ran (testdata/claude/interrupt_sigterm): the call is announced only by a tool_decision log
// event, its turn span (claude_code.interaction) ends the session. The collector is killed
// before any checkpoint, either right after the use (the turn's spans arrive after the
// restart) or once the session's end is queued and the turn span seen (the call's synthetic
// records were not out yet). After the restart the call gets both synthetic records: the log
// record, and the span in the turn's trace, under the turn span.
func TestStorageCrashLogCallInItsTurn(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "claude", "interrupt_sigterm")
	for _, spansBeforeCrash := range []bool{false, true} {
		name := "spans_after_the_restart"
		if spansBeforeCrash {
			name = "session_end_queued_before_the_crash"
		}
		t.Run(name, func(t *testing.T) {
			td, err := golden.ReadTraces(filepath.Join(dir, "traces.json"))
			require.NoError(t, err)
			ld, err := golden.ReadLogs(filepath.Join(dir, "logs.json"))
			require.NoError(t, err)
			e, clock := newMemStorage(), newTestClock()
			run1 := startRun(t, clock, e, nil)
			run1.consumeLogs(ld)
			if spansBeforeCrash {
				run1.consume(td)
			}
			assert.Empty(t, syntheticLogs(run1), "nothing is closed before the crash")
			run1.crash()

			run2 := startRun(t, clock, e, nil)
			if !spansBeforeCrash {
				run2.consume(td)
			}
			run2.advance(run2.cfg.OrphanGrace + time.Second)
			var logs []plog.LogRecord
			var spans []ptrace.Span
			require.Eventually(t, func() bool {
				logs, spans = syntheticLogs(run2), syntheticSpans(run2)
				return len(logs) == 1 && len(spans) == 1
			}, 5*time.Second, 10*time.Millisecond, "the synthetic log record and span")
			assert.Equal(t, "session_end", logAttr(logs[0], "toolpair.interrupt.reason"))
			assert.Equal(t, "toolu_mock_interrupt_01", logAttr(logs[0], "gen_ai.tool.call.id"))
			s := spans[0]
			assert.Equal(t, "6119b193cd8f58bc28bb4134bc00b3de", s.TraceID().String(), "the turn's trace")
			assert.Equal(t, "88f1cddedb2c6769", s.ParentSpanID().String(), "under the turn span")
			assert.Equal(t, "toolu_mock_interrupt_01", strAttr(s, "gen_ai.tool.call.id"))
			assert.Equal(t, "true", strAttr(s, "toolpair.synthetic.companion"))
			assert.Equal(t, logs[0].Timestamp(), s.EndTimestamp())
		})
	}
}
