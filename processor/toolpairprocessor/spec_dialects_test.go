// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

// Specification section 8: the sources (dialects).

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// ctEvent is an OTel GenAI semantic-convention event (v1.28-v1.36 per-message events): the
// OTLP EventName, the body a map.
func ctGenAIEvent(name string, ms int64, body map[string]any) ctLog {
	return ctLog{service: "py-agent", time: ms, eventName: name, body: body, trace: 5, spanID: byte(ms % 250),
		attrs: map[string]any{"gen_ai.system": "openai", "gen_ai.conversation.id": "conv-e"}}
}

func ctChoice(ms int64, calls ...string) ctLog {
	tc := []any{}
	for _, c := range calls {
		tc = append(tc, map[string]any{"id": c, "type": "function", "function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris"}`}})
	}
	return ctGenAIEvent("gen_ai.choice", ms, map[string]any{"index": int64(0), "finish_reason": "tool_calls",
		"message": map[string]any{"role": "assistant", "tool_calls": tc}})
}

func ctToolMessage(ms int64, call string) ctLog {
	return ctGenAIEvent("gen_ai.tool.message", ms, map[string]any{"id": call, "role": "tool", "content": "sunny"})
}

// TestContractS8GenAIEvents: the genai_events dialect. gen_ai.choice and
// gen_ai.assistant.message tool_calls[].id announce calls; gen_ai.tool.message id resolves
// them. The next gen_ai.choice is deliberately not a step boundary (README "Step boundaries,
// session ends and groups": these events carry nothing that tells a nested agent's requests
// from its parent's, so the next choice would close the call of an outer agent waiting for a
// nested one); the call is closed by pairing_timeout instead.
func TestContractS8GenAIEvents(t *testing.T) {
	t.Run("gen_ai.choice tool_calls announce, gen_ai.tool.message resolves", func(t *testing.T) {
		r := newRig(t)
		r.logRecords(ctChoice(100, "call_1", "call_2"))
		r.logRecords(ctToolMessage(900, "call_1"), ctToolMessage(901, "call_2"))
		r.shutdown()
		assert.Equal(t, int64(2), r.sum("otelcol_processor_toolpair_outcomes", map[string]string{"toolpair.outcome": "paired"}))
		for _, lr := range r.outLogs() {
			assert.Empty(t, ctStr(lr.Attributes(), "toolpair.synthetic"), "no call interrupted")
		}
		r.checkConservation()
	})
	t.Run("gen_ai.tool.message that resolves a call carries its outcome (specification section 3)", func(t *testing.T) {
		r := newRig(t)
		r.logRecords(ctChoice(100, "call_1"), ctToolMessage(900, "call_1"))
		out := r.outLogs()
		require.Len(t, out, 2)
		assert.Equal(t, "paired", ctStr(out[1].Attributes(), "toolpair.outcome"))
		d, ok := out[1].Attributes().Get("toolpair.call.duration_ms")
		require.True(t, ok)
		assert.Equal(t, int64(800), d.Int())
	})
	t.Run("gen_ai.assistant.message tool_calls at the top level announce", func(t *testing.T) {
		r := newRig(t)
		r.logRecords(ctGenAIEvent("gen_ai.assistant.message", 100, map[string]any{"role": "assistant", "tool_calls": []any{
			map[string]any{"id": "call_a", "type": "function", "function": map[string]any{"name": "get_weather"}},
		}}))
		r.advance(10 * time.Minute)
		assert.Equal(t, map[string][]string{"call_a": {"log:interrupted/expired+synthetic"}}, r.marks(nil))
		syn := r.outLogs()[1]
		assert.Equal(t, "conv-e", ctStr(syn.Attributes(), "gen_ai.conversation.id"), "the scope attribute that keyed the call")
		assert.Equal(t, "tool call call_a (get_weather) interrupted: expired", syn.Body().Str())
	})
	t.Run("event name from the event.name attribute and a JSON string body", func(t *testing.T) {
		r := newRig(t)
		l := ctChoice(100, "call_s")
		b, err := json.Marshal(l.body)
		require.NoError(t, err)
		l.body, l.eventName = string(b), ""
		l.attrs["event.name"] = "gen_ai.choice"
		r.logRecords(l)
		r.shutdown()
		assert.Equal(t, map[string][]string{"call_s": {"log:interrupted/shutdown+synthetic"}}, r.marks(nil))
	})
	t.Run("the next gen_ai.choice is not a step boundary (documented)", func(t *testing.T) {
		r := newRig(t)
		r.logRecords(ctChoice(100, "call_outer"))
		r.logRecords(ctChoice(300, "call_inner"), ctToolMessage(400, "call_inner"), ctChoice(500))
		r.advance(time.Minute)
		assert.NotContains(t, r.marks(nil), "call_outer", "not closed by the later choices")
		r.advance(9 * time.Minute)
		assert.Equal(t, []string{"log:interrupted/expired+synthetic"}, r.marks(nil)["call_outer"])
	})
}

// TestContractS8ClaudeCode: the claude_code dialect. tool_decision (tool_use_id, decision)
// announces or rejects, tool_result (duration_ms a string) and the claude_code.tool span
// resolve; the claude_code.interaction span's end is a session end. claude_code.api_request
// is deliberately not a step boundary (README: sub-agents share the session.id and their
// requests carry nothing that tells them apart, so a sub-agent's request would close the
// parent's pending Task call).
func TestContractS8ClaudeCode(t *testing.T) {
	t.Run("real capture: every tool_result paired with its decision", func(t *testing.T) {
		r := newRig(t)
		td, ld := readClaude(t, "parallel")
		require.NoError(t, r.logs.ConsumeLogs(context.Background(), ld))
		require.NoError(t, r.traces.ConsumeTraces(context.Background(), td))
		r.shutdown()
		decided := map[string]pcommon.Timestamp{}
		for _, lr := range r.outLogs() {
			if ctStr(lr.Attributes(), "event.name") == "tool_decision" {
				decided[ctStr(lr.Attributes(), "tool_use_id")] = lr.Timestamp()
			}
		}
		require.Len(t, decided, 2)
		n := 0
		for _, lr := range r.outLogs() {
			if ctStr(lr.Attributes(), "event.name") != "tool_result" {
				continue
			}
			n++
			id := ctStr(lr.Attributes(), "tool_use_id")
			assert.Equal(t, "paired", ctStr(lr.Attributes(), "toolpair.outcome"), id)
			assert.Equal(t, roundedMs(int64(lr.Timestamp())-int64(decided[id])), elapsedMsOf(lr.Attributes()), id)
			d, _ := lr.Attributes().Get("toolpair.call.duration_ms")
			assert.Equal(t, ownDurationMs(lr), d.Int(), "%s: Claude's own duration_ms", id)
			v, _ := lr.Attributes().Get("duration_ms")
			assert.Equal(t, pcommon.ValueTypeStr, v.Type(), "the source's duration_ms is left as it is")
		}
		assert.Equal(t, 2, n)
		for _, s := range r.outSpans() {
			if s.Name() == "claude_code.tool" {
				assert.Equal(t, "paired", strAttr(s, "toolpair.outcome"), "the same result in the other signal: its source's first record (section 2)")
			}
		}
		r.checkConservation()
	})
	t.Run("claude_code.api_request is not a step boundary (documented)", func(t *testing.T) {
		r := newRig(t)
		r.logRecords(ctClaudeDecision("toolu_task", "accept", 100),
			ctClaude("api_request", 5000, "sess-1", "model", "claude", "duration_ms", "900"),
			ctClaudeDecision("toolu_sub", "accept", 6000), ctClaudeResult("toolu_sub", 6500),
			ctClaude("api_request", 7000, "sess-1", "model", "claude", "duration_ms", "900"))
		r.advance(time.Minute)
		r.logRecords(ctClaudeResult("toolu_task", 60_000))
		assert.Equal(t, map[string][]string{"toolu_task": {"log:paired"}, "toolu_sub": {"log:paired"}}, r.marks(nil))
	})
}

// TestContractS8Codex: the codex dialect. codex.tool_decision (call_id; denied/abort reject)
// announces, codex.tool_result resolves, codex.api_request is a step boundary: a call of the
// turn still unanswered at the next request is interrupted next_step, ending at that request.
func TestContractS8Codex(t *testing.T) {
	t.Run("decision and result pair; duration the result's own, elapsed from the observed times", func(t *testing.T) {
		r := newRig(t)
		r.logRecords(ctCodex("codex.api_request", 50, 9, "duration_ms", "10", "http.response.status_code", "200"),
			ctCodexDecision("call_1", "approved", 100), ctCodexResult("call_1", 420),
			ctCodex("codex.api_request", 500, 9, "duration_ms", "10", "http.response.status_code", "200"))
		r.advance(time.Minute)
		assert.Equal(t, map[string][]string{"call_1": {"log:paired"}}, r.marks(nil))
		for _, lr := range r.outLogs() {
			if v, ok := lr.Attributes().Get("toolpair.call.duration_ms"); ok {
				assert.Equal(t, ownDurationMs(lr), v.Int())
				assert.Equal(t, int64(320), elapsedMsOf(lr.Attributes()))
			}
		}
	})
	t.Run("the next codex.api_request closes an unanswered call of the turn", func(t *testing.T) {
		r := newRig(t)
		r.logRecords(ctCodex("codex.api_request", 50, 9, "duration_ms", "10"),
			ctCodexDecision("call_1", "approved", 100), ctCodexDecision("call_2", "approved", 101), ctCodexResult("call_2", 300),
			ctCodex("codex.api_request", 500, 9, "duration_ms", "10"))
		r.advance(29 * time.Second)
		assert.Equal(t, map[string][]string{"call_2": {"log:paired"}}, r.marks(nil), "closings wait orphan_grace")
		r.advance(2 * time.Second)
		assert.Equal(t, map[string][]string{"call_1": {"log:interrupted/next_step+synthetic"}, "call_2": {"log:paired"}}, r.marks(nil))
		for _, lr := range r.outLogs() {
			if lr.EventName() == "toolpair.tool_call.interrupted" {
				assert.Equal(t, ctTS(500), lr.Timestamp())
			}
		}
	})
	t.Run("a request of another turn (trace) does not close the call", func(t *testing.T) {
		r := newRig(t)
		r.logRecords(ctCodexDecision("call_1", "approved", 100), ctCodex("codex.api_request", 500, 8, "duration_ms", "10"))
		r.advance(time.Minute)
		assert.Empty(t, r.marks(nil))
	})
}

// TestContractS8Transcripts: the transcript dialect. Claude Code: scope sessionId plus agentId
// (a subagent's steps are not boundaries of its parent), a new message.id is a step boundary
// (one message spans several lines); pi/OpenClaw: scope log.file.path else log.file.name, the
// next assistant entry is a step boundary. Time: the record's timestamp, else the line's
// (pi/OpenClaw: message.timestamp in ms, else the entry's ISO timestamp). Bodies as strings or
// parsed maps.
func TestContractS8Transcripts(t *testing.T) {
	const f = "/home/u/.claude/projects/p/s1.jsonl"
	durations := func(r *rig) map[string]int64 {
		out := map[string]int64{}
		for _, lr := range r.outLogs() {
			if v, ok := lr.Attributes().Get("toolpair.call.duration_ms"); ok {
				out[ctTranscriptCallID(lr)] = v.Int()
			}
		}
		return out
	}
	t.Run("Claude Code: a result of another session does not pair", func(t *testing.T) {
		r := newRig(t)
		r.logRecords(ctLine(f, ctClaudeUse("s1", "", "msg_1", "toolu_1", 100)), ctLine(f, ctClaudeResultLine("s2", "", "toolu_1", "ok", 200)))
		r.advance(31 * time.Second)
		assert.Equal(t, map[string][]string{"toolu_1": {"log:standalone"}}, r.marks(ctTranscriptCallID))
	})
	t.Run("Claude Code: lines of one message are one step; the next message closes its unanswered calls", func(t *testing.T) {
		r := newRig(t)
		r.logRecords(
			ctLine(f, ctClaudeUse("s1", "", "msg_1", "toolu_1", 100)),
			ctLine(f, ctClaudeUse("s1", "", "msg_1", "toolu_2", 150)), // same message, next line
			ctLine(f, ctClaudeResultLine("s1", "", "toolu_2", "ok", 400)),
			ctLine(f, ctClaudeText("s1", "", "msg_2", 700)),
		)
		r.advance(31 * time.Second)
		got := r.marks(ctTranscriptCallID)
		assert.Equal(t, []string{"log:paired"}, got["toolu_2"])
		assert.Equal(t, []string{"log:interrupted/next_step+synthetic"}, got["toolu_1"])
		for _, lr := range r.outLogs() {
			if lr.EventName() == "toolpair.tool_call.interrupted" {
				assert.Equal(t, ctTS(700), lr.Timestamp(), "ends at the next message")
				assert.Equal(t, "s1", ctStr(lr.Attributes(), "session.id"))
			}
		}
		assert.Equal(t, map[string]int64{"toolu_2": 250}, durations(r), "times from the lines' timestamp fields")
	})
	t.Run("Claude Code: a subagent's steps are not boundaries of its parent", func(t *testing.T) {
		r := newRig(t)
		sub := "/home/u/.claude/projects/p/s1/subagents/agent-a1.jsonl"
		r.logRecords(
			ctLine(f, ctClaudeUse("s1", "", "msg_1", "toolu_task", 100)),
			ctLine(sub, ctClaudeUse("s1", "a1", "msg_s1", "toolu_s", 200)),
			ctLine(sub, ctClaudeResultLine("s1", "a1", "toolu_s", "ok", 300)),
			ctLine(sub, ctClaudeText("s1", "a1", "msg_s2", 400)),
			ctLine(f, ctClaudeResultLine("s1", "", "toolu_task", "done", 500)),
			ctLine(f, ctClaudeText("s1", "", "msg_2", 600)),
		)
		r.advance(31 * time.Second)
		assert.Equal(t, map[string][]string{"toolu_task": {"log:paired"}, "toolu_s": {"log:paired"}}, r.marks(ctTranscriptCallID))
	})
	t.Run("Claude Code: a subagent call of the same ID is another scope", func(t *testing.T) {
		r := newRig(t)
		r.logRecords(ctLine(f, ctClaudeUse("s1", "a1", "msg_1", "toolu_1", 100)), ctLine(f, ctClaudeResultLine("s1", "", "toolu_1", "ok", 200)))
		r.advance(31 * time.Second)
		assert.Equal(t, map[string][]string{"toolu_1": {"log:standalone"}}, r.marks(ctTranscriptCallID))
	})
	t.Run("the log record's own timestamp wins over the line's", func(t *testing.T) {
		r := newRig(t)
		use, res := ctLine(f, ctClaudeUse("s1", "", "msg_1", "toolu_1", 100)), ctLine(f, ctClaudeResultLine("s1", "", "toolu_1", "ok", 200))
		use.time, res.time = 1000, 4000
		r.logRecords(use, res)
		assert.Equal(t, map[string]int64{"toolu_1": 3000}, durations(r))
	})
	t.Run("a parsed map body reads the same", func(t *testing.T) {
		r := newRig(t)
		use := ctLog{service: "transcripts", observed: 999_000, body: ctClaudeUse("s1", "", "msg_1", "toolu_1", 100)}
		res := ctLog{service: "transcripts", observed: 999_000, body: ctClaudeResultLine("s1", "", "toolu_1", "ok", 350)}
		r.logRecords(use, res)
		var got []string
		for _, lr := range r.outLogs() {
			if o := ctStr(lr.Attributes(), "toolpair.outcome"); o != "" {
				got = append(got, o)
				v, _ := lr.Attributes().Get("toolpair.call.duration_ms")
				assert.Equal(t, int64(250), v.Int())
			}
		}
		assert.Equal(t, []string{"paired"}, got)
	})
	t.Run("pi/OpenClaw: the scope is log.file.path, else log.file.name", func(t *testing.T) {
		r := newRig(t)
		a, b := ctLine("/s/a/x.jsonl", ctPiUse("e1", "call_1", 100)), ctLine("/s/b/x.jsonl", ctPiResult("e2", "call_1", 300, nil))
		r.logRecords(a, b) // same call ID, same file name, other paths
		r.advance(31 * time.Second)
		assert.Equal(t, map[string][]string{"call_1": {"log:standalone"}}, r.marks(ctTranscriptCallID))

		r2 := newRig(t)
		a, b = ctLine("/s/a/x.jsonl", ctPiUse("e1", "call_1", 100)), ctLine("/s/b/x.jsonl", ctPiResult("e2", "call_1", 300, nil))
		delete(a.attrs, "log.file.path")
		delete(b.attrs, "log.file.path")
		r2.logRecords(a, b) // only the names: the same scope
		assert.Equal(t, map[string][]string{"call_1": {"log:paired"}}, r2.marks(ctTranscriptCallID))
		r2.shutdown()
	})
	t.Run("pi/OpenClaw: synthetic records carry the file scope", func(t *testing.T) {
		r := newRig(t)
		l := ctLine("/s/a/x.jsonl", ctPiUse("e1", "call_1", 100))
		delete(l.attrs, "log.file.path")
		r.logRecords(l)
		r.shutdown()
		var syn []plog.LogRecord
		for _, lr := range r.outLogs() {
			if lr.EventName() == "toolpair.tool_call.interrupted" {
				syn = append(syn, lr)
			}
		}
		require.Len(t, syn, 1)
		assert.Equal(t, "x.jsonl", ctStr(syn[0].Attributes(), "log.file.name"))
	})
	t.Run("pi/OpenClaw: time from message.timestamp (ms), else the entry's ISO timestamp", func(t *testing.T) {
		r := newRig(t)
		use := ctPiUse("e1", "call_1", 100)
		res := ctPiResult("e2", "call_1", 300, nil)
		delete(res["message"].(map[string]any), "timestamp") // the entry's ISO timestamp: 305
		r.logRecords(ctLine("/s/a.jsonl", use), ctLine("/s/a.jsonl", res))
		assert.Equal(t, map[string]int64{"call_1": 205}, durations(r))
	})
	t.Run("pi/OpenClaw: the next assistant entry closes unanswered calls", func(t *testing.T) {
		r := newRig(t)
		next := ctPiUse("e3", "call_2", 900)
		r.logRecords(ctLine("/s/a.jsonl", ctPiUse("e1", "call_1", 100)), ctLine("/s/a.jsonl", next))
		r.advance(31 * time.Second)
		got := r.marks(ctTranscriptCallID)
		assert.Equal(t, map[string][]string{"call_1": {"log:interrupted/next_step+synthetic"}}, got)
		for _, lr := range r.outLogs() {
			if lr.EventName() == "toolpair.tool_call.interrupted" {
				assert.Equal(t, ctTS(900), lr.Timestamp())
				assert.Equal(t, "/s/a.jsonl", ctStr(lr.Attributes(), "log.file.path"))
			}
		}
	})
	t.Run("real pi and OpenClaw interrupted sessions", func(t *testing.T) {
		for _, path := range []string{"../../testdata/transcripts/pi/interrupt_sigterm.jsonl", "../../testdata/transcripts/openclaw/interrupt_sigterm.jsonl"} {
			r := newRig(t)
			lines := readTranscriptLines(t, path)
			for _, ld := range logRecordsOf(lines, "/sessions/"+path[strings.LastIndexByte(path, '/')+1:]) {
				require.NoError(t, r.logs.ConsumeLogs(context.Background(), ld))
			}
			r.shutdown()
			var outcomes []string
			for _, v := range r.marks(ctTranscriptCallID) {
				outcomes = append(outcomes, v...)
			}
			if strings.Contains(path, "openclaw") {
				assert.Contains(t, outcomes, "log:interrupted/aborted", path)
			} else {
				assert.Contains(t, outcomes, "log:interrupted/shutdown+synthetic", path)
			}
			r.checkConservation()
		}
	})
}
