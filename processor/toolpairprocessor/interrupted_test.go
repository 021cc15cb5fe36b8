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

func syntheticSpans(b *rig) []ptrace.Span {
	var out []ptrace.Span
	for _, td := range b.tsink.AllTraces() {
		for _, s := range allSpans(td) {
			if v, ok := s.Attributes().Get("toolpair.synthetic"); ok && v.Bool() {
				out = append(out, s)
			}
		}
	}
	return out
}

func syntheticLogs(b *rig) []plog.LogRecord {
	var out []plog.LogRecord
	for _, lr := range allLogs(b.lsink) {
		if v, ok := lr.Attributes().Get("toolpair.synthetic"); ok && v.Bool() {
			out = append(out, lr)
		}
	}
	return out
}

// TestInterruptedLogCallGetsSpanInTurnTrace runs the real interrupted captures of Claude Code
// and Codex, spans and logs, through one component: the call, announced only by a log
// event, gets exactly one synthetic log record and one synthetic span, in the trace of the
// turn it was made in, whichever signal arrives first; the span is marked as the companion
// of the log record.
func TestInterruptedLogCallGetsSpanInTurnTrace(t *testing.T) {
	for _, tc := range []struct {
		agent, callID, tool string
		scopeAttr, scope    string
		traceID, parentID   string // the turn's trace, and the span the synthetic one goes under
	}{
		{
			agent: "claude", callID: "toolu_mock_interrupt_01", tool: "Bash",
			scopeAttr: "session.id", scope: "d5b1e536-185e-4707-b0a1-94dd83945366",
			// under claude_code.interaction, the turn span
			traceID: "6119b193", parentID: "88f1cddedb2c6769",
		},
		{
			agent: "codex", callID: "call_mock_interrupt_01", tool: "exec_command",
			scopeAttr: "conversation.id", scope: "01a201a2-cb91-7d42-8f88-60c8df03139e",
			// the turn span was never exported (the agent was killed): under codex.sampling,
			// the model request that announced the call
			traceID: "027dc9af", parentID: "97cde0a4e73c9c1b",
		},
	} {
		for _, logsFirst := range []bool{true, false} {
			name := tc.agent + "/traces_first"
			if logsFirst {
				name = tc.agent + "/logs_first"
			}
			t.Run(name, func(t *testing.T) {
				dir := filepath.Join("..", "..", "testdata", tc.agent, "interrupt_sigterm")
				td, err := golden.ReadTraces(filepath.Join(dir, "traces.json"))
				require.NoError(t, err)
				ld, err := golden.ReadLogs(filepath.Join(dir, "logs.json"))
				require.NoError(t, err)
				b := newRig(t)
				b.consumeBoth(td, ld, logsFirst)
				b.advance(11 * time.Minute)
				b.shutdown()

				logs := syntheticLogs(b)
				require.Len(t, logs, 1)
				spans := syntheticSpans(b)
				require.Len(t, spans, 1)
				s := spans[0]
				assert.Equal(t, tc.traceID, s.TraceID().String()[:8])
				assert.Equal(t, tc.parentID, s.ParentSpanID().String())
				assert.Equal(t, "execute_tool "+tc.tool, s.Name())
				assert.Equal(t, ptrace.StatusCodeError, s.Status().Code())
				for k, want := range map[string]string{
					"gen_ai.tool.call.id":       tc.callID,
					"gen_ai.tool.name":          tc.tool,
					"gen_ai.operation.name":     "execute_tool",
					"error.type":                "tool_call_interrupted",
					"toolpair.outcome":          "interrupted",
					"toolpair.interrupt.reason": logAttr(logs[0], "toolpair.interrupt.reason"),
					tc.scopeAttr:                tc.scope,
				} {
					assert.Equal(t, want, strAttr(s, k), k)
				}
				assert.Equal(t, logs[0].Timestamp(), s.EndTimestamp(), "the span and the log record end together")
				// The span is the companion of the call's log record: metrics count the call
				// from the log record only.
				assert.Equal(t, "true", strAttr(s, "toolpair.synthetic.companion"))
				_, onLog := logs[0].Attributes().Get("toolpair.synthetic.companion")
				assert.False(t, onLog, "the log record is the call's own synthetic record")
			})
		}
	}
}
