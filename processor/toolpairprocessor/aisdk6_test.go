// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/timeout"
)

// aisdk6Announcements maps each toolCallId of a provider call span's ai.response.toolCalls
// to that span, decoded with encoding/json independently of the processor.
func aisdk6Announcements(t *testing.T, td ptrace.Traces) map[string]ptrace.Span {
	t.Helper()
	out := map[string]ptrace.Span{}
	for _, s := range allSpans(td) {
		if s.Name() != "ai.generateText.doGenerate" && s.Name() != "ai.streamText.doStream" {
			continue
		}
		raw := strAttr(s, "ai.response.toolCalls")
		if raw == "" {
			continue
		}
		var calls []struct{ ToolCallID string }
		require.NoError(t, json.Unmarshal([]byte(raw), &calls))
		for _, c := range calls {
			out[c.ToolCallID] = s
		}
	}
	return out
}

// TestGoldenAISDK6Captures runs the AI SDK 6 ai.* spans: in normal, the call of the first
// doGenerate is paired on its ai.toolCall span, with the time from the doGenerate's end to
// the tool span's end; in killed_during_tool (no ai.toolCall span, no second model call) the
// end of the run's ai.generateText span interrupts it with reason session_end, and it gets
// one synthetic span under the run's span, from the doGenerate's end to the run's end.
func TestGoldenAISDK6Captures(t *testing.T) {
	for _, scenario := range []string{"normal", "killed_during_tool"} {
		t.Run(scenario, func(t *testing.T) {
			in, err := golden.ReadTraces(filepath.Join("..", "..", "testdata", "aisdk6", scenario, "traces.json"))
			require.NoError(t, err)
			announced := aisdk6Announcements(t, in)
			require.Len(t, announced, 1)
			runs := spansByName(in)["ai.generateText"]
			require.Len(t, runs, 1)
			n := in.SpanCount()
			pl := newRig(t, tracesOnly())
			pl.consume(in)
			pl.advance(time.Minute)
			pl.shutdown()
			got := pl.output()

			executed := map[string]bool{}
			var synthetic []ptrace.Span
			for _, s := range allSpans(got) {
				if v, _ := s.Attributes().Get(synth.AttrSynthetic); v.Bool() {
					synthetic = append(synthetic, s)
					continue
				}
				if s.Name() != "ai.toolCall" {
					assert.Empty(t, strAttr(s, "toolpair.outcome"), s.Name())
					continue
				}
				id := strAttr(s, "ai.toolCall.id")
				use, ok := announced[id]
				require.True(t, ok, "call %s was announced", id)
				executed[id] = true
				assert.Equal(t, "paired", strAttr(s, "toolpair.outcome"), id)
				assertSpanDurations(t, s, min(int64(use.EndTimestamp()), int64(s.StartTimestamp())), id)
			}
			for id, use := range announced {
				if executed[id] {
					continue
				}
				require.Len(t, synthetic, 1, id)
				s := synthetic[0]
				assert.Equal(t, id, strAttr(s, "gen_ai.tool.call.id"))
				assert.Equal(t, "execute_tool run_shell", s.Name())
				assert.Equal(t, "session_end", strAttr(s, "toolpair.interrupt.reason"))
				assert.Equal(t, use.TraceID(), s.TraceID())
				assert.Equal(t, runs[0].SpanID(), s.ParentSpanID(), "under the run, as the doGenerate span")
				assert.Equal(t, use.EndTimestamp(), s.StartTimestamp())
				assert.Equal(t, runs[0].EndTimestamp(), s.EndTimestamp())
			}
			assert.Len(t, synthetic, len(announced)-len(executed))
			assert.Equal(t, n+len(synthetic), got.SpanCount())

			assertGoldenTraces(t, got, "aisdk6", scenario)
		})
	}
}

// TestAISDK6Timeouts: specification section 4 on AI SDK 6 spans, as the SDK writes them for its
// tool and model timeouts (the corpus notes of ai 6.0.326): an ai.toolCall span failed with
// "Command timed out after ..." is a tool_execution timeout whose active tool is its own call
// (announced by the doGenerate span, so its elapsed time starts at the doGenerate's end); a
// doGenerate span aborted by the request's timeout signal is a provider timeout.
func TestAISDK6Timeouts(t *testing.T) {
	toolCalls := map[string]any{
		"ai.operationId":        "ai.generateText.doGenerate",
		"ai.response.toolCalls": `[{"toolCallId":"call_t1","toolName":"run_shell","input":"{}"}]`,
	}
	tests := []struct {
		name  string
		spans []ruleSpan
		check string
		want  map[string]any
	}{
		{
			name: "tool timeout",
			spans: []ruleSpan{
				{name: "ai.generateText.doGenerate", start: 0, end: 1000, attrs: toolCalls},
				{name: "ai.toolCall", start: 1002, end: 3004, status: "Command timed out after 2000 ms; output so far: start",
					attrs: map[string]any{"ai.operationId": "ai.toolCall", "ai.toolCall.id": "call_t1", "ai.toolCall.name": "run_shell"}},
			},
			check: "ai.toolCall",
			want: map[string]any{
				timeout.AttrPhase: "tool_execution", timeout.AttrActiveTools: int64(1),
				timeout.AttrActiveToolName: "run_shell", timeout.AttrActiveToolCallID: "call_t1", timeout.AttrActiveToolElapsed: int64(2004),
			},
		},
		{
			name: "model timeout after the tool returned",
			spans: []ruleSpan{
				{name: "ai.generateText.doGenerate", start: 0, end: 1000, attrs: toolCalls},
				{name: "ai.toolCall", start: 1002, end: 1010,
					attrs: map[string]any{"ai.operationId": "ai.toolCall", "ai.toolCall.id": "call_t1", "ai.toolCall.name": "run_shell"}},
				{name: "ai.generateText.doGenerate", start: 1012, end: 6912, status: "The operation was aborted due to timeout",
					attrs: map[string]any{"ai.operationId": "ai.generateText.doGenerate"}},
			},
			check: "ai.generateText.doGenerate",
			want:  map[string]any{timeout.AttrPhase: "provider", timeout.AttrActiveTools: int64(0)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := newRig(t, tracesOnly())
			pl.consume(ruleTraces(tt.spans))
			pl.shutdown()
			var got []map[string]any
			for _, s := range allSpans(pl.output()) {
				if a := timeoutAttrs(s.Attributes()); len(a) > 0 {
					assert.Equal(t, tt.check, s.Name())
					got = append(got, a)
				}
			}
			assert.Equal(t, []map[string]any{tt.want}, got)
		})
	}
}
