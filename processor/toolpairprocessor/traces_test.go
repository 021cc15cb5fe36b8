// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

var update = flag.Bool("update", false, "rewrite the expected golden files")

// assertGoldenTraces fails t unless got equals the expected output of a capture,
// testdata/{agent}/{scenario}/expected_traces.yaml, whatever the order of its resources,
// scopes and spans; with -update it first rewrites that file with got.
func assertGoldenTraces(t *testing.T, got ptrace.Traces, agent, scenario string) {
	t.Helper()
	expected := filepath.Join("..", "..", "testdata", agent, scenario, "expected_traces.yaml")
	if *update {
		require.NoError(t, golden.WriteTraces(t, expected, got))
	}
	want, err := golden.ReadTraces(expected)
	require.NoError(t, err)
	require.NoError(t, ptracetest.CompareTraces(want, got,
		ptracetest.IgnoreResourceSpansOrder(), ptracetest.IgnoreScopeSpansOrder(), ptracetest.IgnoreSpansOrder()))
}

func readCapture(t *testing.T, scenario string) ptrace.Traces {
	t.Helper()
	td, err := golden.ReadTraces(filepath.Join("..", "..", "testdata", "aisdk", scenario, "traces.json"))
	require.NoError(t, err)
	return td
}

// toolCallIDs decodes a gen_ai.output.messages value fully with encoding/json and returns
// the IDs of its tool_call parts.
func toolCallIDs(t *testing.T, messages string) []string {
	t.Helper()
	if messages == "" {
		return nil
	}
	var msgs []struct {
		Parts []struct {
			Type string `json:"type"`
			ID   string `json:"id"`
		} `json:"parts"`
	}
	require.NoError(t, json.Unmarshal([]byte(messages), &msgs))
	var ids []string
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Type == "tool_call" {
				ids = append(ids, p.ID)
			}
		}
	}
	return ids
}

func spansByName(td ptrace.Traces) map[string][]ptrace.Span {
	m := map[string][]ptrace.Span{}
	for _, s := range dialecttest.SpansOf(td) {
		m[s.Name()] = append(m[s.Name()], s)
	}
	return m
}

// allSpans returns the spans of td in order.
func allSpans(td ptrace.Traces) []ptrace.Span {
	return dialecttest.SpansOf(td)
}

func strAttr(s ptrace.Span, k string) string {
	if v, ok := s.Attributes().Get(k); ok {
		return v.AsString()
	}
	return ""
}

// announcements maps each call ID announced by a chat span's output messages to the chat
// span's end time, computed with encoding/json independently of the processor.
func announcements(t *testing.T, td ptrace.Traces) map[string]pcommon.Timestamp {
	t.Helper()
	out := map[string]pcommon.Timestamp{}
	for _, s := range allSpans(td) {
		if strAttr(s, "gen_ai.operation.name") != "chat" {
			continue
		}
		for _, id := range toolCallIDs(t, strAttr(s, "gen_ai.output.messages")) {
			out[id] = s.EndTimestamp()
		}
	}
	return out
}

// TestGoldenAISDKCaptures runs the AI SDK 7 captures: every execute_tool span of an announced
// call is paired, except the one of interrupt_sigterm, which the application's signal handler
// ended with status Error "Command aborted: ...": it reports its call's abort (specification
// section 2) and is marked interrupted/aborted, with no synthetic span.
func TestGoldenAISDKCaptures(t *testing.T) {
	abortedIn := map[string]string{"interrupt_sigterm": "call_mock_interrupt_01"}
	for _, scenario := range []string{"normal", "parallel", "interrupt_sigterm", "llm_timeout", "killed_during_tool"} {
		t.Run(scenario, func(t *testing.T) {
			pl := newRig(t, tracesOnly())
			in := readCapture(t, scenario)
			announced := announcements(t, in)
			require.NotEmpty(t, announced)
			inCount := in.SpanCount()
			pl.consume(in)
			pl.advance(time.Minute)
			pl.shutdown()
			got := pl.output()

			// Every execute_tool span of an announced call is paired, with the duration from
			// the announcing chat span's end to its own end, or aborted.
			executed := map[string]bool{}
			for _, s := range allSpans(got) {
				if strAttr(s, "gen_ai.operation.name") != "execute_tool" {
					continue
				}
				id := strAttr(s, "gen_ai.tool.call.id")
				if synthetic, _ := s.Attributes().Get(synth.AttrSynthetic); synthetic.Bool() {
					continue
				}
				executed[id] = true
				useEnd, ok := announced[id]
				require.True(t, ok, "call %s was announced", id)
				d, hasDuration := s.Attributes().Get("toolpair.call.duration_ms")
				if abortedIn[scenario] == id {
					assert.Equal(t, "interrupted", strAttr(s, "toolpair.outcome"), id)
					assert.Equal(t, "aborted", strAttr(s, "toolpair.interrupt.reason"), id)
					assert.False(t, hasDuration, id)
					continue
				}
				assert.Equal(t, "paired", strAttr(s, "toolpair.outcome"), id)
				require.True(t, hasDuration)
				_ = d
				assertSpanDurations(t, s, min(int64(useEnd), int64(s.StartTimestamp())), id)
			}
			if id := abortedIn[scenario]; id != "" {
				assert.True(t, executed[id], "the aborted call's span is in the output")
			}
			// Every announced call that never ran has exactly one synthetic span.
			for id := range announced {
				var synthetic []ptrace.Span
				for _, s := range allSpans(got) {
					if v, _ := s.Attributes().Get(synth.AttrSynthetic); v.Bool() && strAttr(s, "gen_ai.tool.call.id") == id {
						synthetic = append(synthetic, s)
					}
				}
				if executed[id] {
					assert.Empty(t, synthetic, id)
				} else {
					require.Len(t, synthetic, 1, id)
					assert.NotEmpty(t, strAttr(synthetic[0], "toolpair.interrupt.reason"))
				}
			}
			// Nothing but the synthetic spans was added, and nothing was lost.
			assert.Equal(t, inCount+len(announced)-len(executed), got.SpanCount())

			assertGoldenTraces(t, got, "aisdk", scenario)
		})
	}
}

func TestInterruptedCallSyntheticSpan(t *testing.T) {
	var ids []pcommon.SpanID
	for range 2 { // a replay of the same input yields the same synthetic span
		pl := newRig(t, withConfig(func(c *Config) { c.PairingTimeout = 5 * time.Second }), tracesOnly())
		in := readCapture(t, "killed_during_tool")
		chat := spansByName(in)["chat gpt-4.1-mini"][0]
		n := in.SpanCount()
		pl.consume(in)
		pl.advance(4 * time.Second)
		assert.Equal(t, n, pl.tsink.SpanCount(), "nothing synthesised before pairing_timeout")
		pl.advance(time.Second)
		got := spansByName(pl.output())["execute_tool run_shell"]
		require.Len(t, got, 1)
		s := got[0]
		assert.Equal(t, ptrace.SpanKindInternal, s.Kind())
		assert.Equal(t, chat.TraceID(), s.TraceID())
		assert.Equal(t, chat.ParentSpanID(), s.ParentSpanID(), "parented like the announcing chat span")
		assert.Equal(t, chat.EndTimestamp(), s.StartTimestamp())
		// The end is in record time (the scope's last sign of life), never the clock.
		var last pcommon.Timestamp
		ctEachSpan(in, func(_ pcommon.Resource, sp ptrace.Span) {
			if sp.TraceID() == chat.TraceID() {
				last = max(last, sp.StartTimestamp(), sp.EndTimestamp())
			}
		})
		assert.GreaterOrEqual(t, s.EndTimestamp(), chat.EndTimestamp())
		assert.LessOrEqual(t, s.EndTimestamp(), last)
		assert.Equal(t, ptrace.StatusCodeError, s.Status().Code())
		assert.Equal(t, "tool call interrupted: expired", s.Status().Message())
		assert.Equal(t, map[string]any{
			"gen_ai.operation.name":     "execute_tool",
			"gen_ai.tool.name":          "run_shell",
			"gen_ai.tool.call.id":       "call_mock_interrupt_01",
			"error.type":                "tool_call_interrupted",
			"toolpair.synthetic":        true,
			"toolpair.outcome":          "interrupted",
			"toolpair.interrupt.reason": "expired",
			"toolpair.call.counted":     int64(1),
		}, s.Attributes().AsRaw(), "no content is copied")
		ids = append(ids, s.SpanID())
		pl.shutdown()
		assert.Len(t, spansByName(pl.output())["execute_tool run_shell"], 1, "an expired call is not synthesised again at shutdown")
	}
	assert.Equal(t, ids[0], ids[1])
}

func TestShutdownSynthesizesPendingCalls(t *testing.T) {
	pl := newRig(t, tracesOnly())
	pl.consume(readCapture(t, "killed_during_tool"))
	pl.shutdown()
	got := spansByName(pl.output())["execute_tool run_shell"]
	require.Len(t, got, 1)
	assert.Equal(t, "shutdown", strAttr(got[0], "toolpair.interrupt.reason"))
}

func TestSynthesizeDisabled(t *testing.T) {
	pl := newRig(t, withConfig(func(c *Config) { c.Synthesize = false }), tracesOnly())
	in := readCapture(t, "killed_during_tool")
	n := in.SpanCount()
	pl.consume(in)
	pl.shutdown()
	assert.Equal(t, n, pl.output().SpanCount())
}

// TestEchoThenToolSpanKeepsTheToolSpan: when the next chat span echoes a call's result in its
// input messages before the call's tool span arrives, the tool span still passes and is
// marked paired: the first record of its source for the call.
func TestEchoThenToolSpanKeepsTheToolSpan(t *testing.T) {
	pl := newRig(t, tracesOnly())
	next := ctSpan{trace: 1, name: "chat m", start: 1400, end: 1600, attrs: map[string]any{
		"gen_ai.operation.name": "chat",
		"gen_ai.input.messages": `[{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":"ok"}]}]`,
	}}
	pl.consume(spanBatchOf(chatSpan(1, 1000, "c1"), next))
	pl.consume(spanBatchOf(toolSpan(1, "c1", 1300))) // the tool span, exported late
	got := toolSpans(pl.output())["c1"]
	require.Len(t, got, 1, "the real result record is never dropped behind an echo")
	assert.Equal(t, "paired", strAttr(got[0], "toolpair.outcome"), "its source's first record of the call (section 2)")
}
