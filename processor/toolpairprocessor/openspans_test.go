// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// openCall is what the golden tests expect of one call of a capture.
type openCall struct {
	// resultSpan is the name of the span that carries the call's outcome ("" when only a
	// synthetic span does).
	resultSpan string
	outcome    string
	// elapsedMs of a paired call: the result span's end minus the announcing span's end. Its
	// duration is the tool span's own length (a history echo's: the same as elapsedMs).
	elapsedMs int64
	// reason and tool of an interrupted call (its synthetic span, execute_tool <tool>).
	reason, tool string
}

func readOpenCapture(t *testing.T, agent, scenario string) ptrace.Traces {
	t.Helper()
	td, err := golden.ReadTraces(filepath.Join("..", "..", "testdata", agent, scenario, "traces.json"))
	require.NoError(t, err)
	return td
}

// TestGoldenOpenInferenceAndOpenLLMetryCaptures runs the real captures of the OpenAI Agents
// SDK through OpenInference and of OpenLLMetry JS 0.27, each in one batch, and checks every
// call's outcome: tool spans without a call ID resolve their call by tool name and
// arguments and get its gen_ai.tool.call.id; a call whose tool span is missing is paired by
// the next chat span's history (tool_timeout) or, killed, gets one synthetic span. The whole
// output is compared with the golden file.
func TestGoldenOpenInferenceAndOpenLLMetryCaptures(t *testing.T) {
	tests := []struct {
		agent, scenario string
		calls           map[string]openCall
	}{
		{"agents", "normal", map[string]openCall{
			"call_mock_normal_01": {resultSpan: "run_shell", outcome: "paired", elapsedMs: 14},
		}},
		{"agents", "parallel", map[string]openCall{
			"call_mock_parallel_01": {resultSpan: "run_shell", outcome: "paired", elapsedMs: 25},
			"call_mock_parallel_02": {resultSpan: "read_file", outcome: "paired", elapsedMs: 29},
		}},
		// Killed during the tool: only the announcing LLM span was exported.
		{"agents", "killed_during_tool", map[string]openCall{
			"call_mock_normal_01": {outcome: "interrupted", reason: "shutdown", tool: "run_shell"},
		}},
		{"openllmetry", "normal", map[string]openCall{
			"call_mock_normal_01": {resultSpan: "run_shell.tool", outcome: "paired", elapsedMs: 35},
		}},
		// The tool timed out: withTool ended no span, and the error text went back to the
		// model in the next request, whose history pairs the call.
		{"openllmetry", "tool_timeout", map[string]openCall{
			"call_mock_tool_timeout_01": {resultSpan: "chat gpt-4.1-mini", outcome: "paired", elapsedMs: 2035},
		}},
		// Killed during the tool: only the announcing chat span was exported.
		{"openllmetry", "interrupt_sigterm", map[string]openCall{
			"call_mock_interrupt_01": {outcome: "interrupted", reason: "shutdown", tool: "run_shell"},
		}},
		// Without withAgent every chat span is a trace of its own and nothing names the
		// conversation: the next request's history is in another scope and cannot pair the
		// call (see docs/dialects/openllmetry.md).
		{"openllmetry", "normal_nodecorators", map[string]openCall{
			"call_mock_normal_01": {outcome: "interrupted", reason: "shutdown", tool: "run_shell"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.agent+"/"+tt.scenario, func(t *testing.T) {
			in := readOpenCapture(t, tt.agent, tt.scenario)
			inCount := in.SpanCount()
			pl := newRig(t, tracesOnly())
			pl.consume(in)
			pl.advance(time.Minute)
			pl.shutdown()
			got := pl.output()

			synthetic := 0
			seen := map[string]bool{}
			for _, s := range allSpans(got) {
				id := strAttr(s, "gen_ai.tool.call.id")
				if v, _ := s.Attributes().Get(synth.AttrSynthetic); v.Bool() {
					synthetic++
					want, ok := tt.calls[id]
					require.True(t, ok, "synthetic span of unknown call %q", id)
					assert.Equal(t, "interrupted", want.outcome, id)
					assert.Equal(t, want.reason, strAttr(s, "toolpair.interrupt.reason"), id)
					assert.Equal(t, "interrupted", strAttr(s, "toolpair.outcome"), id)
					assert.Equal(t, "execute_tool "+want.tool, s.Name(), id)
					// Section 3: in the announcing span's trace, under its parent (itself when
					// it has none), from the use time (the announcing span's end) to the latest
					// record time of the call's scope, here that same end: the announcing span
					// is its scope's only record, and the collector's clock is never used.
					use := announcingSpan(t, readOpenCapture(t, tt.agent, tt.scenario), id)
					parent := use.ParentSpanID()
					if parent.IsEmpty() {
						parent = use.SpanID()
					}
					assert.Equal(t, use.TraceID(), s.TraceID(), id)
					assert.Equal(t, parent, s.ParentSpanID(), id)
					assert.Equal(t, use.EndTimestamp(), s.StartTimestamp(), id)
					assert.Equal(t, use.EndTimestamp(), s.EndTimestamp(), id)
					seen[id] = true
					continue
				}
				outcome := strAttr(s, "toolpair.outcome")
				if outcome == "" {
					continue
				}
				if id == "" {
					// A chat span resolving through its history carries no ID of its own.
					for cid, c := range tt.calls {
						if c.resultSpan == s.Name() {
							id = cid
						}
					}
				}
				want, ok := tt.calls[id]
				if _, counted := s.Attributes().Get(synth.AttrCallCounted); !ok && !counted && outcome == "paired" {
					// A chat span whose history repeats results the tool spans reported first:
					// its source's first record of those calls, paired (specification
					// section 2), without counting them.
					continue
				}
				require.True(t, ok, "span %s marked %s for unknown call %q", s.Name(), outcome, id)
				assert.Equal(t, want.resultSpan, s.Name(), id)
				assert.Equal(t, want.outcome, outcome, id)
				assert.Equal(t, want.elapsedMs, elapsedMsOf(s.Attributes()), id)
				d, _ := s.Attributes().Get("toolpair.call.duration_ms")
				if strings.HasPrefix(s.Name(), "chat ") {
					assert.Equal(t, want.elapsedMs, d.Int(), "%s: an echo shows no run time of its own", id)
				} else {
					assert.Equal(t, runMsOf(s), d.Int(), "%s: the tool span's own length", id)
				}
				seen[id] = true
			}
			for id := range tt.calls {
				assert.True(t, seen[id], "no outcome for %s", id)
			}
			assert.Equal(t, inCount+synthetic, got.SpanCount(), "only synthetic spans are added")

			assertGoldenTraces(t, got, tt.agent, tt.scenario)
		})
	}
}

// announcingSpan returns the span of td that announces call id: of the spans naming it in a
// string attribute (its output messages, or a later request's history), the one that ended
// first.
func announcingSpan(t *testing.T, td ptrace.Traces, id string) ptrace.Span {
	t.Helper()
	var found ptrace.Span
	ok := false
	for _, s := range allSpans(td) {
		named := false
		s.Attributes().Range(func(_ string, v pcommon.Value) bool {
			named = v.Type() == pcommon.ValueTypeStr && strings.Contains(v.Str(), id)
			return !named
		})
		if named && (!ok || s.EndTimestamp() < found.EndTimestamp()) {
			found, ok = s, true
		}
	}
	require.True(t, ok, "no span names %s", id)
	return found
}
