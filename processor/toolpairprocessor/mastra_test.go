// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// TestGoldenMastraCaptures runs Mastra 1.71.0's real spans and log records
// (@mastra/otel-exporter 1.4.0, read by genai): its chat spans list no tool calls, its
// agent_step spans announce them in mastra.model_step.output (at the step's start), its
// execute_tool spans carry gen_ai.tool.call.id. In normal the execute_tool span is paired and
// counts its call; in interrupt_sigterm the tool, aborted by the run's abort signal, ends its
// span with status Error "Command aborted: ..." (every other span ends OK): it is marked
// interrupted/aborted, with no synthetic span. The next agent_step's start (normal: a step
// boundary) and the model_generation end (a session end) find the call resolved. No log
// record is read (the TOOL_EXECUTION_FAILED record carries no call ID) and none is marked.
// Nothing is added or dropped, and each span gets the same mark whatever the arrival order:
// spans then logs, logs then spans, and each span on its own in reverse order before the
// logs.
func TestGoldenMastraCaptures(t *testing.T) {
	for scenario, want := range map[string]string{"normal": "paired", "interrupt_sigterm": "interrupted/aborted"} {
		var first map[string]string
		for _, order := range []string{"traces_first", "logs_first", "reversed_one_per_batch"} {
			t.Run(scenario+"/"+order, func(t *testing.T) {
				td, ld := readFramework(t, "mastra", scenario, true)
				nSpans, nLogs := td.SpanCount(), ld.LogRecordCount()
				require.NotZero(t, nLogs)
				wantMarks, callIDs := toolSpanMarks(td, want)
				require.Len(t, callIDs, 1)
				b := newRig(t)
				switch order {
				case "reversed_one_per_batch":
					consumeInOrder(t, b, td, order)
					b.consumeLogs(ld)
				default:
					b.consumeBoth(td, ld, order == "logs_first")
				}
				b.advance(11 * time.Minute)
				st := b.stats()
				b.shutdown()
				spans, logs := tracesOut(b), allLogs(b.lsink)
				require.Len(t, spans, nSpans, "no span added or dropped")
				require.Len(t, logs, nLogs, "no log record added or dropped")
				marks, synthetic := spanMarks(spans)
				assert.Empty(t, synthetic)
				assert.Equal(t, wantMarks, marks)
				for _, lr := range logs {
					assert.Empty(t, logAttr(lr, "toolpair.outcome"), lr.Body().AsString())
				}
				assertEveryCall(t, st, len(callIDs), want)
				if first == nil {
					first = marks
				} else {
					assert.Equal(t, first, marks, "the same marks in every order")
				}
				if order == "traces_first" {
					assertGoldenTraces(t, b.output(), "mastra", scenario)
					assertGoldenLogs(t, mergedLogs(b), "mastra", scenario)
				}
			})
		}
	}
}

// TestMastraStepClosesAbandonedCall: the normal capture without its execute_tool span (the
// tool's span lost) leaves the call of the first agent_step pending; the second agent_step's
// start, a step boundary of the same model_generation, interrupts it (next_step), with one
// synthetic span; so does, without the second step, the model_generation's end
// (session_end).
func TestMastraStepClosesAbandonedCall(t *testing.T) {
	for _, tc := range []struct {
		reason pairing.Reason
		drop   func(s ptrace.Span) bool
	}{
		{pairing.ReasonNextStep, func(s ptrace.Span) bool { return strAttr(s, "gen_ai.operation.name") == "execute_tool" }},
		{pairing.ReasonSessionEnd, func(s ptrace.Span) bool {
			return strAttr(s, "gen_ai.operation.name") == "execute_tool" ||
				(strAttr(s, "gen_ai.operation.name") == "agent_step" && strAttr(s, "mastra.model_step.step_index") == "1")
		}},
	} {
		t.Run(tc.reason.String(), func(t *testing.T) {
			td, _ := readFramework(t, "mastra", "normal", false)
			removeSpans(td, tc.drop)
			b := newRig(t, tracesOnly())
			b.consume(td)
			b.advance(11 * time.Minute)
			st := b.stats()
			b.shutdown()
			assert.Equal(t, uint64(1), st.UsesSeen)
			assert.Equal(t, uint64(1), st.Interrupted[tc.reason], "interrupted by %s", tc.reason)
			_, synthetic := spanMarks(tracesOut(b))
			require.Len(t, synthetic, 1)
			assert.Equal(t, "call_mock_normal_01", strAttr(synthetic[0], "gen_ai.tool.call.id"))
			assert.Equal(t, tc.reason.String(), strAttr(synthetic[0], "toolpair.interrupt.reason"))
		})
	}
}
