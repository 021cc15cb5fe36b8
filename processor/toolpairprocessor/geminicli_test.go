// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

func readGemini(t *testing.T, scenario string) (ptrace.Traces, plog.Logs) {
	t.Helper()
	dir := filepath.Join("..", "..", "testdata", "gemini", scenario)
	td, err := golden.ReadTraces(filepath.Join(dir, "traces.json"))
	require.NoError(t, err)
	ld, err := golden.ReadLogs(filepath.Join(dir, "logs.json"))
	require.NoError(t, err)
	return td, ld
}

// geminiAnnouncements maps the call ID the model saw (Gemini CLI's "<tool>__" prefix removed)
// of each functionCall in an llm_call span's output messages to that span, decoded with
// encoding/json independently of the processor.
func geminiAnnouncements(t *testing.T, td ptrace.Traces) map[string]ptrace.Span {
	t.Helper()
	out := map[string]ptrace.Span{}
	for _, s := range allSpans(td) {
		if strAttr(s, "gen_ai.operation.name") != "llm_call" {
			continue
		}
		var msgs []struct {
			Parts []struct {
				FunctionCall *struct{ ID, Name string } `json:"functionCall"`
			} `json:"parts"`
		}
		require.NoError(t, json.Unmarshal([]byte(strAttr(s, "gen_ai.output.messages")), &msgs))
		for _, m := range msgs {
			for _, p := range m.Parts {
				if p.FunctionCall != nil {
					out[strings.TrimPrefix(p.FunctionCall.ID, p.FunctionCall.Name+"__")] = s
				}
			}
		}
	}
	return out
}

// TestGoldenGeminiCLISpans runs Gemini CLI's real spans alone: in normal, the call the first
// llm_call announced is paired on its tool_call span, with the time from the llm_call's end
// to the tool_call's end; in interrupt_sigterm (killed during the tool: only the llm_call
// span was exported) the call gets one synthetic span in the llm_call's trace after
// pairing_timeout, and nothing else changes.
func TestGoldenGeminiCLISpans(t *testing.T) {
	for _, scenario := range []string{"normal", "interrupt_sigterm"} {
		t.Run(scenario, func(t *testing.T) {
			in, _ := readGemini(t, scenario)
			announced := geminiAnnouncements(t, in)
			require.Len(t, announced, 1)
			n := in.SpanCount()
			pl := newRig(t, tracesOnly())
			pl.consume(in)
			pl.advance(11 * time.Minute)
			pl.shutdown()
			got := pl.output()

			executed := map[string]bool{}
			var synthetic []ptrace.Span
			for _, s := range allSpans(got) {
				if v, _ := s.Attributes().Get(synth.AttrSynthetic); v.Bool() {
					synthetic = append(synthetic, s)
					continue
				}
				if s.Name() != "tool_call" {
					if o := strAttr(s, "toolpair.outcome"); o != "" {
						// A later llm_call whose history repeats a call's result: its source's
						// first record of the call, paired, but not the record that counts it
						// (specification section 2).
						assert.Equal(t, "llm_call", s.Name())
						assert.Equal(t, "paired", o)
						_, counted := s.Attributes().Get(synth.AttrCallCounted)
						assert.False(t, counted, "the tool_call span counts the call")
					}
					continue
				}
				id := strAttr(s, "gen_ai.tool.call_id")
				id = strings.TrimPrefix(id, strAttr(s, "gen_ai.tool.name")+"__")
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
				// In Gemini CLI's telemetry form, as its own records show the call.
				assert.Equal(t, "run_shell_command__"+id, strAttr(s, "gen_ai.tool.call.id"))
				assert.Equal(t, "execute_tool run_shell_command", s.Name())
				assert.Equal(t, "expired", strAttr(s, "toolpair.interrupt.reason"))
				assert.Equal(t, use.TraceID(), s.TraceID(), "in the trace of the announcing llm_call")
				assert.Equal(t, use.SpanID(), s.ParentSpanID(), "under the llm_call, a root span")
				assert.Equal(t, use.EndTimestamp(), s.StartTimestamp())
				// Section 3: an expired call ends at the latest record time seen in its scope
				// at or after the use, never on the collector's clock (11 minutes on here).
				// The announcing llm_call is the scope's only span and its end the use.
				assert.Equal(t, latestSpanTime(in, strAttr(use, "gen_ai.conversation.id"), use.EndTimestamp()), s.EndTimestamp())
				assert.Equal(t, use.EndTimestamp(), s.EndTimestamp())
				assert.Equal(t, strAttr(use, "gen_ai.conversation.id"), strAttr(s, "gen_ai.conversation.id"))
			}
			assert.Equal(t, n+len(announced)-len(executed), got.SpanCount())
			assert.Len(t, synthetic, len(announced)-len(executed))

			assertGoldenTraces(t, got, "gemini", scenario)
		})
	}
}

// TestGeminiCLISpansAndLogs runs Gemini CLI's real normal capture, spans and logs, through one
// component in both orders: the llm_call span and the operation details record announce the
// same call (one use, the other a repeated use); it is counted once, and each source's first
// record of its result (the tool_call span, the next request's history in the llm_call span and
// in the details record) is paired. Nothing is added or dropped.
func TestGeminiCLISpansAndLogs(t *testing.T) {
	for _, logsFirst := range []bool{false, true} {
		t.Run(map[bool]string{false: "traces_first", true: "logs_first"}[logsFirst], func(t *testing.T) {
			b := newRig(t)
			td, ld := readGemini(t, "normal")
			nSpans, nLogs := td.SpanCount(), ld.LogRecordCount()
			b.consumeBoth(td, ld, logsFirst)
			b.advance(11 * time.Minute)
			st := b.stats()
			assert.Equal(t, uint64(1), st.UsesSeen)
			assert.Equal(t, uint64(1), st.Paired)
			assert.GreaterOrEqual(t, st.UsesRepeated, uint64(2), "the details record and schedule_tool_calls repeat the llm_call's use")
			assert.Zero(t, st.InterruptedTotal())
			b.shutdown()
			spans, logs := tracesOut(b), allLogs(b.lsink)
			require.Len(t, spans, nSpans)
			require.Len(t, logs, nLogs)
			outcomes := map[string]string{}
			for _, s := range spans {
				if o := strAttr(s, "toolpair.outcome"); o != "" {
					outcomes["span "+s.Name()] = o
				}
			}
			for _, lr := range logs {
				if o := logAttr(lr, "toolpair.outcome"); o != "" {
					outcomes["log "+logAttr(lr, "event.name")] = o
				}
			}
			// Each source's first record of the call is paired, in both orders (specification
			// section 2): the tool_call span, and the next request's history in the llm_call
			// span and in the details record.
			want := map[string]string{"span tool_call": "paired", "span llm_call": "paired", "log gen_ai.client.inference.operation.details": "paired"}
			assert.Equal(t, want, outcomes)
		})
	}
}

// TestGeminiCLIKilledCallGetsSpan: killed during the tool, Gemini CLI exports the llm_call
// span and the details record announcing the call, nothing else. With both signals, in either
// order, the call is interrupted once (expired) and gets exactly one synthetic span, in the
// llm_call's trace: made from the span's announcement, or, when the log record came first,
// as the companion of the synthetic log record, under the llm_call span (an anchor).
func TestGeminiCLIKilledCallGetsSpan(t *testing.T) {
	for _, logsFirst := range []bool{false, true} {
		t.Run(map[bool]string{false: "traces_first", true: "logs_first"}[logsFirst], func(t *testing.T) {
			b := newRig(t)
			td, ld := readGemini(t, "interrupt_sigterm")
			llm := spansByName(td)["llm_call"]
			require.Len(t, llm, 1)
			b.consumeBoth(td, ld, logsFirst)
			b.advance(11 * time.Minute)
			st := b.stats()
			assert.Equal(t, uint64(1), st.UsesSeen)
			assert.Equal(t, uint64(1), st.InterruptedTotal())
			b.shutdown()
			var synthetic []ptrace.Span
			for _, s := range tracesOut(b) {
				if v, _ := s.Attributes().Get(synth.AttrSynthetic); v.Bool() {
					synthetic = append(synthetic, s)
				}
			}
			require.Len(t, synthetic, 1)
			s := synthetic[0]
			assert.Equal(t, "run_shell_command__run_shell_command_1795323400327_0", strAttr(s, "gen_ai.tool.call.id"), "the call ID as Gemini CLI's telemetry writes it")
			assert.Equal(t, "expired", strAttr(s, "toolpair.interrupt.reason"))
			assert.Equal(t, llm[0].TraceID(), s.TraceID())
			assert.Equal(t, llm[0].SpanID(), s.ParentSpanID())
			// Section 3: the end is the scope's latest record time at or after the use, in
			// either order: the llm_call's end, after the details record that also announces
			// the call and every other record of the session; not the collector's clock.
			assert.Equal(t, llm[0].EndTimestamp(), s.EndTimestamp())
			assert.Greater(t, llm[0].EndTimestamp(), latestLogTime(ld))
			// Announced in both signals: a synthetic record in each, in either order
			// (section 3); the span counts the call.
			require.Len(t, syntheticLogs(b), 1)
			_, counted := syntheticLogs(b)[0].Attributes().Get(synth.AttrCallCounted)
			assert.False(t, counted)
			n, _ := s.Attributes().Get(synth.AttrCallCounted)
			assert.Equal(t, int64(1), n.Int())
		})
	}
}

// TestGeminiCLINextRequestClosesAbandonedCall: a call announced by an llm_call span that has
// no result when the main agent's next llm_call starts is interrupted with reason next_step,
// ending at that start; a sub-agent's llm_call (a span with a parent) does not close it.
func TestGeminiCLINextRequestClosesAbandonedCall(t *testing.T) {
	td, _ := readGemini(t, "interrupt_sigterm")
	first := spansByName(td)["llm_call"][0]
	next := func(name string, parent bool, startAfter time.Duration) ptrace.Traces {
		out := ptrace.NewTraces()
		rs := out.ResourceSpans().AppendEmpty()
		td.ResourceSpans().At(0).Resource().CopyTo(rs.Resource())
		s := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		first.CopyTo(s)
		s.SetName(name)
		s.SetSpanID([8]byte{byte(startAfter), 1, 2, 3, 4, 5, 6, 7})
		if parent {
			s.SetParentSpanID([8]byte{9, 9, 9, 9, 9, 9, 9, 9})
		}
		s.Attributes().PutStr("gen_ai.output.messages", `[{"role":"model","parts":[{"text":"x"}]}]`)
		s.SetStartTimestamp(first.EndTimestamp() + pcommon.Timestamp(startAfter))
		s.SetEndTimestamp(s.StartTimestamp() + pcommon.Timestamp(time.Second))
		return out
	}
	pl := newRig(t, tracesOnly())
	pl.consume(td)
	pl.consume(next("llm_call", true, 2*time.Second)) // a sub-agent's request
	pl.advance(time.Minute)
	assert.Zero(t, pl.stats().InterruptedTotal(), "a sub-agent's request closes nothing of the main agent")
	pl.consume(next("llm_call", false, 5*time.Second))
	pl.advance(time.Minute)
	var synthetic []ptrace.Span
	for _, s := range allSpans(pl.output()) {
		if v, _ := s.Attributes().Get(synth.AttrSynthetic); v.Bool() {
			synthetic = append(synthetic, s)
		}
	}
	require.Len(t, synthetic, 1)
	assert.Equal(t, "next_step", strAttr(synthetic[0], "toolpair.interrupt.reason"))
	assert.Equal(t, first.EndTimestamp()+pcommon.Timestamp(5*time.Second), synthetic[0].EndTimestamp())
}

// TestGeminiCLIFetchFailedIsNotATimeout: Gemini CLI reports a dropped model connection as an
// llm_call span in error "exception TypeError: fetch failed sending request" and a
// gemini_cli.api_error with error.type "Error" and no status code (the corpus notes of Gemini
// CLI 0.61.0): no field says timeout, so neither is classified as one.
func TestGeminiCLIFetchFailedIsNotATimeout(t *testing.T) {
	b := newRig(t)
	td := ruleTraces([]ruleSpan{{name: "llm_call", start: 0, end: 15_010, status: "exception TypeError: fetch failed sending request",
		attrs: map[string]any{"gen_ai.operation.name": "llm_call", "gen_ai.conversation.id": ruleSession}}})
	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetTimestamp(pcommon.NewTimestampFromTime(at(15_010)))
	require.NoError(t, lr.Attributes().FromRaw(map[string]any{
		"event.name": "gemini_cli.api_error", "session.id": ruleSession, "error": "fetch failed sending request",
		"error.type": "Error", "status_code": "", "duration_ms": int64(15_010), "installation.id": "i",
	}))
	require.NoError(t, b.traces.ConsumeTraces(context.Background(), td))
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), ld))
	b.shutdown()
	assert.Empty(t, b.timeoutRecords(t))
}

// TestGeminiCLIApiRequestClosesAbandonedCall: logs alone, the call of the killed run's details
// record is closed (next_step, at the request's time) by a later gemini_cli.api_request of
// the main agent in the same session, not by a sub-agent's or a utility request's.
func TestGeminiCLIApiRequestClosesAbandonedCall(t *testing.T) {
	_, ld := readGemini(t, "interrupt_sigterm")
	var last pcommon.Timestamp
	for _, lr := range dialecttest.LogRecordsOf(ld) {
		last = max(last, lr.Timestamp())
	}
	request := func(role string, after time.Duration) plog.Logs {
		out := plog.NewLogs()
		rl := out.ResourceLogs().AppendEmpty()
		ld.ResourceLogs().At(0).Resource().CopyTo(rl.Resource())
		lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
		lr.SetTimestamp(last + pcommon.Timestamp(after))
		require.NoError(t, lr.Attributes().FromRaw(map[string]any{
			"event.name": "gemini_cli.api_request", "session.id": "99842fde-5e88-40a7-84db-a0b1a99e68bc",
			"installation.id": "i", "role": role, "model": "gemini-2.5-pro",
		}))
		return out
	}
	b := newRig(t)
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), ld))
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), request("subagent", time.Second)))
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), request("utility_next_speaker", 2*time.Second)))
	b.advance(time.Minute)
	assert.Empty(t, syntheticLogs(b), "only the main agent's requests are step boundaries")
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), request("main", 3*time.Second)))
	b.advance(time.Minute)
	got := syntheticLogs(b)
	require.Len(t, got, 1)
	assert.Equal(t, "next_step", logAttr(got[0], "toolpair.interrupt.reason"))
	assert.Equal(t, last+pcommon.Timestamp(3*time.Second), got[0].Timestamp())
}

// TestGeminiCLILostToolSpanPairsOnHistory: spans alone, with the normal capture's tool_call
// span lost (sampled out, dropped on the way), the next llm_call's input messages still
// answer the call (functionResponse): that echo pairs it, on the second llm_call span, with
// the time from the first llm_call's end to the second's start, and its start, a step
// boundary, interrupts nothing.
func TestGeminiCLILostToolSpanPairsOnHistory(t *testing.T) {
	td, _ := readGemini(t, "normal")
	td.ResourceSpans().RemoveIf(func(rs ptrace.ResourceSpans) bool {
		rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool {
			ss.Spans().RemoveIf(func(s ptrace.Span) bool { return s.Name() == "tool_call" })
			return ss.Spans().Len() == 0
		})
		return rs.ScopeSpans().Len() == 0
	})
	llm := spansByName(td)["llm_call"]
	require.Len(t, llm, 2)
	first, second := llm[0], llm[1]
	if second.StartTimestamp() < first.StartTimestamp() {
		first, second = second, first
	}
	pl := newRig(t, tracesOnly())
	pl.consume(td)
	pl.advance(11 * time.Minute)
	pl.shutdown()
	st := pl.stats()
	assert.Equal(t, uint64(1), st.Paired)
	assert.Zero(t, st.InterruptedTotal())
	var marked []ptrace.Span
	for _, s := range allSpans(pl.output()) {
		if strAttr(s, "toolpair.outcome") != "" {
			marked = append(marked, s)
		}
	}
	require.Len(t, marked, 1)
	assert.Equal(t, second.SpanID(), marked[0].SpanID())
	assert.Equal(t, "paired", strAttr(marked[0], "toolpair.outcome"))
	d, _ := marked[0].Attributes().Get("toolpair.call.duration_ms")
	assert.Equal(t, (int64(second.StartTimestamp())-int64(first.EndTimestamp()))/1e6, d.Int())
}

// latestSpanTime returns the latest start or end time, at or after from, of the spans of td
// in the conversation conv (gen_ai.conversation.id), or from when there is none.
func latestSpanTime(td ptrace.Traces, conv string, from pcommon.Timestamp) pcommon.Timestamp {
	latest := from
	for _, s := range allSpans(td) {
		if strAttr(s, "gen_ai.conversation.id") != conv {
			continue
		}
		latest = max(latest, s.StartTimestamp(), s.EndTimestamp())
	}
	return latest
}

// latestLogTime returns the latest time of the records of ld.
func latestLogTime(ld plog.Logs) pcommon.Timestamp {
	var latest pcommon.Timestamp
	for _, lr := range dialecttest.LogRecordsOf(ld) {
		latest = max(latest, lr.Timestamp(), lr.ObservedTimestamp())
	}
	return latest
}
