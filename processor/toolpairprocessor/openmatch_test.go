// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// olSpans is the OpenLLMetry normal capture split by span: the first chat span (announcing
// the call), the run_shell.tool span, the second chat span (echoing the result) and the agent
// span, each as its own Traces.
type olSpans struct {
	chat1, tool, chat2, agent ptrace.Traces
}

func readOLNormal(t *testing.T) olSpans {
	t.Helper()
	td := readOpenCapture(t, "openllmetry", "normal")
	var out olSpans
	chats := 0
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		one := ptrace.NewTraces()
		rss.At(i).CopyTo(one.ResourceSpans().AppendEmpty())
		s := one.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
		switch {
		case s.Name() == "run_shell.tool":
			out.tool = one
		case s.Name() == "capture_agent.agent":
			out.agent = one
		case chats == 0:
			out.chat1, chats = one, 1
		default:
			out.chat2 = one
		}
	}
	require.NotZero(t, out.tool.SpanCount())
	require.NotZero(t, out.chat2.SpanCount())
	return out
}

// outcomes returns the toolpair.outcome of every marked span of the output, by span name, and
// the synthetic spans' reasons.
func outcomes(got ptrace.Traces) (marked map[string]string, synthetic []string) {
	marked = map[string]string{}
	for _, s := range allSpans(got) {
		if v, _ := s.Attributes().Get(synth.AttrSynthetic); v.Bool() {
			synthetic = append(synthetic, strAttr(s, "toolpair.interrupt.reason"))
			continue
		}
		if o := strAttr(s, "toolpair.outcome"); o != "" {
			marked[s.Name()] = o
		}
	}
	return marked, synthetic
}

// TestOpenLLMetryToolSpanOrder: the tool span pairs its call whatever batch it comes in, as
// long as it comes before the history that echoes it; it gets the call's ID. A tool span
// before the chat span announcing its call waits for it (orphan_grace) and pairs it. When the
// history comes first it pairs the call, and the tool span is a duplicate of that call, kept
// (the history is not a tool span) and given the call's ID.
func TestOpenLLMetryToolSpanOrder(t *testing.T) {
	tests := []struct {
		name    string
		batches func(s olSpans) []ptrace.Traces
		want    map[string]string
		tools   int // tool spans out, 1 when 0
	}{
		{
			name:    "each span in its own export, in the order they ended",
			batches: func(s olSpans) []ptrace.Traces { return []ptrace.Traces{s.chat1, s.tool, s.chat2, s.agent} },
			want:    map[string]string{"chat gpt-4.1-mini": "paired", "run_shell.tool": "paired"},
		},
		{
			name: "all in one export",
			batches: func(s olSpans) []ptrace.Traces {
				return []ptrace.Traces{merge(s.chat1, s.tool, s.chat2, s.agent)}
			},
			want: map[string]string{"chat gpt-4.1-mini": "paired", "run_shell.tool": "paired"},
		},
		{
			name:    "the tool span before the chat span announcing its call",
			batches: func(s olSpans) []ptrace.Traces { return []ptrace.Traces{s.tool, s.chat1, s.chat2, s.agent} },
			want:    map[string]string{"chat gpt-4.1-mini": "paired", "run_shell.tool": "paired"},
		},
		{
			name:    "the echoing chat span before the tool span",
			batches: func(s olSpans) []ptrace.Traces { return []ptrace.Traces{s.chat1, s.chat2, s.tool, s.agent} },
			want:    map[string]string{"chat gpt-4.1-mini": "paired", "run_shell.tool": "paired"},
		},
		{
			name: "an export retry of the tool span",
			batches: func(s olSpans) []ptrace.Traces {
				retry := ptrace.NewTraces()
				s.tool.CopyTo(retry)
				return []ptrace.Traces{s.chat1, s.tool, retry, s.chat2, s.agent}
			},
			want: map[string]string{"chat gpt-4.1-mini": "paired", "run_shell.tool": "paired"},
			// Delivered again, the tool span gets what its first delivery got, the call's ID
			// included (specification section 2).
			tools: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := newRig(t, tracesOnly())
			for _, b := range tt.batches(readOLNormal(t)) {
				pl.consume(b)
			}
			pl.advance(time.Minute)
			pl.shutdown()
			marked, synthetic := outcomes(pl.output())
			assert.Equal(t, tt.want, marked)
			assert.Empty(t, synthetic)
			tools := 0
			for _, s := range allSpans(pl.output()) {
				if s.Name() == "run_shell.tool" {
					tools++
					assert.Equal(t, "call_mock_normal_01", strAttr(s, "gen_ai.tool.call.id"))
				}
			}
			assert.Equal(t, max(tt.tools, 1), tools, "each delivery of the tool span leaves, with the call's ID")
			require.NoError(t, pl.stats().CheckConservation())
		})
	}
}

// TestOpenLLMetryToolSpanBeforeFailedModelRequest: the tool ran and its span was exported,
// then the next model request failed. OpenLLMetry JS exports nothing for the failed request
// (and withAgent ends no span when its function throws); the Python SDK exports the chat
// span with status ERROR. Either way the call is paired by its tool span, not interrupted.
func TestOpenLLMetryToolSpanBeforeFailedModelRequest(t *testing.T) {
	failedChat := func(s olSpans) ptrace.Traces {
		td := ptrace.NewTraces()
		s.chat2.CopyTo(td)
		span := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
		span.Status().SetCode(ptrace.StatusCodeError)
		span.Status().SetMessage("Request timed out.")
		span.Attributes().Remove("gen_ai.output.messages")
		return td
	}
	for name, batches := range map[string]func(s olSpans) []ptrace.Traces{
		"no span for the failed request": func(s olSpans) []ptrace.Traces { return []ptrace.Traces{s.chat1, s.tool} },
		// The tool span waits for its use: the call is known to have ended when the use
		// pairs it, not only from a later history (here the failed request's span carries
		// none).
		"the tool span before the chat span announcing its call, then an ERROR chat span without history": func(s olSpans) []ptrace.Traces {
			failed := failedChat(s)
			failed.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().Remove("gen_ai.input.messages")
			return []ptrace.Traces{s.tool, s.chat1, failed, s.agent}
		},
		"an ERROR chat span, then the agent span": func(s olSpans) []ptrace.Traces {
			return []ptrace.Traces{s.chat1, s.tool, failedChat(s), s.agent}
		},
	} {
		t.Run(name, func(t *testing.T) {
			pl := newRig(t, tracesOnly())
			for _, b := range batches(readOLNormal(t)) {
				pl.consume(b)
			}
			pl.advance(time.Minute)
			pl.advance(11 * time.Minute) // past pairing_timeout
			pl.shutdown()
			marked, synthetic := outcomes(pl.output())
			assert.Equal(t, "paired", marked["run_shell.tool"])
			assert.Empty(t, synthetic)
			errSpans := 0
			for _, s := range allSpans(pl.output()) {
				if s.Status().Code() == ptrace.StatusCodeError {
					// A timed-out model request with the tool already done (specification section 4).
					errSpans++
					assert.Equal(t, "provider", strAttr(s, "toolpair.timeout.phase"))
					assert.Equal(t, "0", strAttr(s, "toolpair.timeout.active_tools"))
				}
			}
			assert.Equal(t, strings.Contains(name, "ERROR"), errSpans == 1)
		})
	}
}

// toolSpanTrace builds an OpenLLMetry trace in one scope: a chat span announcing calls
// (name, arguments JSON) at 100 ms, then one tool span per entry of tools (name, input JSON),
// ending at 200 ms + 10 ms per span.
func toolSpanTrace(calls [][3]string, tools [][2]string) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "svc")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	trace := pcommon.TraceID{1, 2, 3}
	chat := spans.AppendEmpty()
	chat.SetName("chat m")
	chat.SetTraceID(trace)
	chat.SetSpanID(pcommon.SpanID{1})
	chat.SetParentSpanID(pcommon.SpanID{9})
	chat.SetStartTimestamp(pcommon.Timestamp(50 * time.Millisecond))
	chat.SetEndTimestamp(pcommon.Timestamp(100 * time.Millisecond))
	chat.Attributes().PutStr("gen_ai.operation.name", "chat")
	chat.Attributes().PutStr("traceloop.workflow.name", "w")
	msg := `[{"role":"assistant","parts":[`
	for i, c := range calls {
		if i > 0 {
			msg += ","
		}
		msg += `{"type":"tool_call","id":"` + c[0] + `","name":"` + c[1] + `","arguments":` + c[2] + `}`
	}
	chat.Attributes().PutStr("gen_ai.output.messages", msg+`]}]`)
	for i, tl := range tools {
		s := spans.AppendEmpty()
		s.SetName(tl[0] + ".tool")
		s.SetTraceID(trace)
		s.SetSpanID(pcommon.SpanID{2, byte(i)})
		s.SetParentSpanID(pcommon.SpanID{9})
		s.SetStartTimestamp(pcommon.Timestamp(150 * time.Millisecond))
		s.SetEndTimestamp(pcommon.Timestamp(time.Duration(200+10*i) * time.Millisecond))
		s.Attributes().PutStr("traceloop.span.kind", "tool")
		s.Attributes().PutStr("traceloop.entity.name", tl[0])
		s.Attributes().PutStr("traceloop.entity.input", tl[1])
	}
	return td
}

// TestOpenLLMetryParallelToolSpans: parallel calls are told apart by tool name and
// arguments, whatever order their spans end in; two calls alike are resolved earliest use
// first; a second copy of a tool span is a duplicate (dropped); a tool span matching no call
// waits orphan_grace for its use, then is an orphan in a scope whose calls were announced.
func TestOpenLLMetryParallelToolSpans(t *testing.T) {
	tests := []struct {
		name  string
		calls [][3]string
		tools [][2]string
		want  []string // gen_ai.tool.call.id written on each tool span, in order ("" when none)
		outc  []string
	}{
		{
			name:  "same tool, other arguments, completion order reversed",
			calls: [][3]string{{"c1", "run_shell", `{"command":"sleep 1"}`}, {"c2", "run_shell", `{"command":"echo hi"}`}},
			tools: [][2]string{{"run_shell", `{"args":[],"kwargs":{"command":"echo hi"}}`}, {"run_shell", `{"args":[],"kwargs":{"command":"sleep 1"}}`}},
			want:  []string{"c2", "c1"},
			outc:  []string{"paired", "paired"},
		},
		{
			name:  "two calls alike: the first announced first",
			calls: [][3]string{{"c1", "read_file", `{"path":"a"}`}, {"c2", "read_file", `{"path":"a"}`}},
			tools: [][2]string{{"read_file", `{"args":[{"path":"a"}],"kwargs":{}}`}, {"read_file", `{"args":[],"kwargs":{"path":"a"}}`}},
			want:  []string{"c1", "c2"},
			outc:  []string{"paired", "paired"},
		},
		{
			name:  "the same tool span twice: the copy is a duplicate",
			calls: [][3]string{{"c1", "read_file", `{"path":"a"}`}},
			tools: [][2]string{{"read_file", `{"args":[],"kwargs":{"path":"a"}}`}, {"read_file", `{"args":[],"kwargs":{"path":"a"}}`}},
			want:  []string{"c1"},
			outc:  []string{"paired"},
		},
		{
			name:  "no call with these arguments",
			calls: [][3]string{{"c1", "read_file", `{"path":"a"}`}},
			tools: [][2]string{{"read_file", `{"args":[],"kwargs":{"path":"b"}}`}},
			want:  []string{""},
			outc:  []string{"orphan"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := newRig(t, tracesOnly())
			pl.consume(toolSpanTrace(tt.calls, tt.tools))
			pl.advance(time.Minute) // past orphan_grace
			got := pl.output()
			var ids, outc []string
			for _, s := range allSpans(got) {
				if strAttr(s, "traceloop.span.kind") == "tool" {
					ids = append(ids, strAttr(s, "gen_ai.tool.call.id"))
					outc = append(outc, strAttr(s, "toolpair.outcome"))
				}
			}
			assert.Equal(t, tt.want, ids)
			assert.Equal(t, tt.outc, outc)
			st := pl.stats()
			require.NoError(t, st.CheckConservation())
		})
	}
}

func merge(tds ...ptrace.Traces) ptrace.Traces {
	out := ptrace.NewTraces()
	for _, td := range tds {
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			rss.At(i).CopyTo(out.ResourceSpans().AppendEmpty())
		}
	}
	return out
}

// TestUnmatchedToolSpanCounted: a tool span that finds no call waits for it, then is an
// orphan (its scope announced calls) counted under its own reason, and dropped with
// orphans: drop; the outcome points still sum to the results seen.
func TestUnmatchedToolSpanCounted(t *testing.T) {
	for _, disp := range []Disposition{DispositionMark, DispositionDrop} {
		t.Run(string(disp), func(t *testing.T) {
			r := newRig(t, withConfig(func(c *Config) { c.Orphans = disp }))
			require.NoError(t, r.traces.ConsumeTraces(context.Background(), toolSpanTrace([][3]string{{"c1", "read_file", `{"path":"a"}`}},
				[][2]string{{"read_file", `{"args":[],"kwargs":{"path":"b"}}`}, {"read_file", `{"args":[],"kwargs":{"path":"a"}}`}})))
			assert.Equal(t, int64(1), r.sum("otelcol_processor_toolpair_waiting_results", nil))
			r.advance(time.Minute)
			assert.Equal(t, int64(1), r.sum("otelcol_processor_toolpair_outcomes", map[string]string{"toolpair.outcome": "orphan", "reason": "no_matching_call"}))
			assert.Equal(t, int64(1), r.sum("otelcol_processor_toolpair_outcomes", map[string]string{"toolpair.outcome": "orphan"}))
			assert.Equal(t, int64(1), r.sum("otelcol_processor_toolpair_outcomes", map[string]string{"toolpair.outcome": "paired"}))
			assert.Equal(t, int64(2), r.sum("otelcol_processor_toolpair_results", nil))
			r.checkConservation()
			var orphans int
			for _, s := range r.outSpans() {
				if strAttr(s, "toolpair.outcome") == "orphan" {
					orphans++
				}
			}
			assert.Equal(t, map[Disposition]int{DispositionMark: 1, DispositionDrop: 0}[disp], orphans)
		})
	}
}

// TestUnmatchedToolSpanStandalone: a tool span in a scope that announced no call (its model
// calls captured without their output) waits orphan_grace, then is standalone, counted under
// no_matching_call.
func TestUnmatchedToolSpanStandalone(t *testing.T) {
	r := newRig(t)
	td := toolSpanTrace(nil, [][2]string{{"read_file", `{"args":[],"kwargs":{"path":"b"}}`}})
	chat := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	chat.Attributes().Remove("gen_ai.output.messages")
	toolOutcomes := func() []string {
		var out []string
		for _, s := range r.outSpans() {
			if strAttr(s, "traceloop.span.kind") == "tool" {
				out = append(out, strAttr(s, "toolpair.outcome"))
			}
		}
		return out
	}
	require.NoError(t, r.traces.ConsumeTraces(context.Background(), td))
	assert.Empty(t, toolOutcomes(), "the tool span is held")
	r.advance(time.Minute)
	assert.Equal(t, []string{"standalone"}, toolOutcomes())
	assert.Equal(t, int64(1), r.sum("otelcol_processor_toolpair_outcomes", map[string]string{"toolpair.outcome": "standalone", "reason": "no_matching_call"}))
	r.checkConservation()
}

// oiSpan is one OpenInference span of trace {7}: kind, span ID byte, start and end in ms,
// and attributes.
func oiSpan(kind string, id byte, startMs, endMs int64, attrs map[string]any) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "agents")
	s := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	s.SetName(kind)
	s.SetTraceID(pcommon.TraceID{7})
	s.SetSpanID(pcommon.SpanID{id})
	s.SetParentSpanID(pcommon.SpanID{0xf0, id})
	s.SetStartTimestamp(pcommon.Timestamp(startMs * int64(time.Millisecond)))
	s.SetEndTimestamp(pcommon.Timestamp(endMs * int64(time.Millisecond)))
	s.Attributes().PutStr("openinference.span.kind", kind)
	for k, v := range attrs {
		s.Attributes().PutStr(k, v.(string))
	}
	return td
}

// TestOpenInferenceNestedAgentTool: an agent run as a tool makes model requests in the
// outer agent's trace. Each is a step boundary for the outer call, applied orphan_grace after
// it arrives: an outer tool span arriving before then pairs the call; one arriving later finds
// it closed (next_step) and is standalone (see docs/dialects/openinference.md, Step boundaries).
func TestOpenInferenceNestedAgentTool(t *testing.T) {
	for _, tt := range []struct {
		wait    time.Duration
		outcome string
		reasons []string
	}{
		{wait: 10 * time.Second, outcome: "paired"},
		// The outer call was closed (next_step) before its tool span came: the span is a
		// duplicate of the interrupted call, dropped.
		{wait: 40 * time.Second, outcome: "", reasons: []string{"next_step"}},
	} {
		t.Run(tt.wait.String(), func(t *testing.T) {
			outer := oiSpan("LLM", 1, 0, 100, map[string]any{
				"llm.output_messages.0.message.tool_calls.0.tool_call.id":                 "outer",
				"llm.output_messages.0.message.tool_calls.0.tool_call.function.name":      "researcher",
				"llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": `{"q":"x"}`,
			})
			inner := oiSpan("LLM", 2, 200, 300, nil)
			tool := oiSpan("TOOL", 3, 150, 5000, map[string]any{"tool.name": "researcher", "input.value": `{"q": "x"}`})
			pl := newRig(t, tracesOnly())
			pl.consume(outer)
			pl.consume(inner)
			pl.advance(tt.wait)
			pl.consume(tool)
			pl.advance(time.Minute)
			marked, synthetic := outcomes(pl.output())
			want := map[string]string{}
			if tt.outcome != "" {
				want["TOOL"] = tt.outcome
			}
			assert.Equal(t, want, marked)
			assert.Equal(t, tt.reasons, synthetic)
			require.NoError(t, pl.stats().CheckConservation())
		})
	}
}

// TestOpenLLMetryMatchStaysInItsTrace: with a session ID as the scope, a call of an earlier
// trace still pending (its turn was cut short) with the same tool and arguments is not the
// one a tool span of a later trace resolves: a tool span resolves a call of its own trace.
func TestOpenLLMetryMatchStaysInItsTrace(t *testing.T) {
	inTrace := func(td ptrace.Traces, tid pcommon.TraceID) ptrace.Traces {
		rs := td.ResourceSpans().At(0)
		rs.Resource().Attributes().PutStr("session.id", "s1")
		spans := rs.ScopeSpans().At(0).Spans()
		for i := 0; i < spans.Len(); i++ {
			spans.At(i).SetTraceID(tid)
		}
		return td
	}
	pl := newRig(t, tracesOnly())
	pl.consume(inTrace(toolSpanTrace([][3]string{{"old", "ls", `{}`}}, nil), pcommon.TraceID{1}))
	pl.consume(inTrace(toolSpanTrace([][3]string{{"new", "ls", `{}`}}, [][2]string{{"ls", `{"args":[],"kwargs":{}}`}}), pcommon.TraceID{2}))
	var ids []string
	for _, s := range allSpans(pl.output()) {
		if strAttr(s, "traceloop.span.kind") == "tool" {
			ids = append(ids, strAttr(s, "gen_ai.tool.call.id"))
		}
	}
	assert.Equal(t, []string{"new"}, ids)
	assert.Equal(t, 1, pl.stats().Pending, "the old call is still pending")
}

// TestOpenLLMetryBeforeGenAI: OpenLLMetry's chat spans are in the genai shape, so the order
// of the dialects decides who reads them. openllmetry reads them first, keeping the
// arguments its tool spans are matched by; with openllmetry disabled, genai reads them and
// the next request's history pairs the call, the tool span passing untouched.
func TestOpenLLMetryBeforeGenAI(t *testing.T) {
	for _, tt := range []struct {
		dialects []string
		want     map[string]string
	}{
		{nil, map[string]string{"chat gpt-4.1-mini": "paired", "run_shell.tool": "paired"}},
		{[]string{"genai"}, map[string]string{"chat gpt-4.1-mini": "paired"}},
	} {
		t.Run(strings.Join(append([]string{"dialects"}, tt.dialects...), "_"), func(t *testing.T) {
			pl := newRig(t, withConfig(func(c *Config) {
				if tt.dialects != nil {
					c.Dialects = tt.dialects
				}
			}), tracesOnly())
			pl.consume(readOpenCapture(t, "openllmetry", "normal"))
			pl.advance(time.Minute)
			pl.shutdown()
			marked, synthetic := outcomes(pl.output())
			assert.Equal(t, tt.want, marked)
			assert.Empty(t, synthetic)
		})
	}
}

// TestOpenLLMetryMatchAcrossRestart: with storage, the chat span's call survives a graceful
// restart with its match hash, and the tool span that arrives after the restart resolves it.
func TestOpenLLMetryMatchAcrossRestart(t *testing.T) {
	e, clock := newMemStorage(), newTestClock()
	s := readOLNormal(t)
	run1 := startRun(t, clock, e, nil)
	require.NoError(t, run1.traces.ConsumeTraces(context.Background(), s.chat1))
	run1.shutdown()
	run2 := startRun(t, clock, e, nil)
	require.NoError(t, run2.traces.ConsumeTraces(context.Background(), s.tool))
	var got []string
	for _, sp := range run2.outSpans() {
		if sp.Name() == "run_shell.tool" {
			got = append(got, strAttr(sp, "toolpair.outcome"), strAttr(sp, "gen_ai.tool.call.id"))
		}
	}
	assert.Equal(t, []string{"paired", "call_mock_normal_01"}, got)
}
