// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

// Specification section 3: what the processor writes on records, and the synthetic records.

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestContractS3ResultAttributes: toolpair.outcome (string) on every recognised result record,
// toolpair.call.duration_ms (int, ms: the tool's execution time, the source's own duration field
// else the result span's length) on paired ones only, and toolpair.call.elapsed_ms (int, ms:
// result time minus use time) where it differs.
func TestContractS3ResultAttributes(t *testing.T) {
	r := newRig(t, withConfig(func(c *Config) { c.Duplicates = DispositionMark }))
	r.spans(ctChat(1, 1, 0, 0, 100, "c1"), ctTool(1, 2, 0, "c1", 110, 1337))
	r.spans(ctTool(1, 2, 0, "c1", 110, 1337))
	r.logRecords(ctClaudeDecision("toolu_1", "accept", 1000), ctClaudeResult("toolu_1", 3500))
	var seen int
	for _, s := range r.outSpans() {
		if s.Name() != "execute_tool run_shell" {
			continue
		}
		seen++
		o, ok := s.Attributes().Get("toolpair.outcome")
		require.True(t, ok)
		assert.Equal(t, pcommon.ValueTypeStr, o.Type())
		d, hasDuration := s.Attributes().Get("toolpair.call.duration_ms")
		if o.Str() == "paired" {
			require.True(t, hasDuration)
			assert.Equal(t, pcommon.ValueTypeInt, d.Type())
			assert.Equal(t, int64(1227), d.Int(), "the tool span's own length")
			e, ok := s.Attributes().Get("toolpair.call.elapsed_ms")
			require.True(t, ok)
			assert.Equal(t, pcommon.ValueTypeInt, e.Type())
			assert.Equal(t, int64(1237), e.Int(), "result end minus the announcing chat span's end")
		} else {
			assert.Equal(t, "duplicate", o.Str())
			assert.False(t, hasDuration, "only paired results carry a duration")
			_, hasElapsed := s.Attributes().Get("toolpair.call.elapsed_ms")
			assert.False(t, hasElapsed)
		}
	}
	assert.Equal(t, 2, seen)
	for _, lr := range r.outLogs() {
		if ctStr(lr.Attributes(), "event.name") == "tool_result" {
			d, ok := lr.Attributes().Get("toolpair.call.duration_ms")
			require.True(t, ok)
			assert.Equal(t, pcommon.ValueTypeInt, d.Type())
			assert.Equal(t, int64(12), d.Int(), "the source's own duration_ms")
			assert.Equal(t, "12", ctStr(lr.Attributes(), "duration_ms"), "the source's own duration is kept")
			e, ok := lr.Attributes().Get("toolpair.call.elapsed_ms")
			require.True(t, ok)
			assert.Equal(t, int64(2500), e.Int(), "includes permission and queueing time")
		}
		if ctStr(lr.Attributes(), "event.name") == "tool_decision" {
			_, ok := lr.Attributes().Get("toolpair.outcome")
			assert.False(t, ok, "nothing is required on use records")
		}
	}
}

// TestContractS3CallStart: a call starts at the earliest time any of its records shows (the
// announcing record, a decision, the start of the result span, the start a result event's own
// duration_ms shows), in any order of arrival, so the elapsed time (toolpair.call.elapsed_ms,
// written where it differs from toolpair.call.duration_ms) is never shorter than the tool's
// own duration, which toolpair.call.duration_ms is.
func TestContractS3CallStart(t *testing.T) {
	tests := []struct {
		name   string
		run    func(r *rig)
		result func(r *rig) pcommon.Map // the result record's attributes
		// wantRun is the tool's own duration, wantMs the time from the call's start.
		wantRun, wantMs int64
	}{
		{name: "a Codex tool span that starts before the decision", run: func(r *rig) {
			r.logRecords(ctCodexDecision("call_1", "approved", 1000))
			r.spans(ctCodexToolSpan("call_1", 900, 1500, false))
		}, result: ctOutSpanAttrs("exec_command"), wantRun: 600, wantMs: 600},
		{name: "the tool span first, then the decision", run: func(r *rig) {
			r.spans(ctCodexToolSpan("call_1", 900, 1500, false))
			r.logRecords(ctCodexDecision("call_1", "approved", 1000))
		}, result: ctOutSpanAttrs("exec_command"), wantRun: 600, wantMs: 600},
		{name: "a tool span that starts after the decision", run: func(r *rig) {
			r.logRecords(ctCodexDecision("call_1", "approved", 1000))
			r.spans(ctCodexToolSpan("call_1", 1100, 1500, false))
		}, result: ctOutSpanAttrs("exec_command"), wantRun: 400, wantMs: 500},
		{name: "an execute_tool span that starts before the chat span ends", run: func(r *rig) {
			r.spans(ctChat(1, 1, 0, 0, 100, "c1"), ctTool(1, 2, 0, "c1", 60, 400))
		}, result: ctOutSpanAttrs("execute_tool run_shell"), wantRun: 340, wantMs: 340},
		{name: "a result event whose duration_ms reaches back before the decision", run: func(r *rig) {
			// duration_ms "7": the tool started at 1003, before the decision at 1005.
			r.logRecords(ctCodexDecision("call_1", "approved", 1005), ctCodexResult("call_1", 1010))
		}, result: ctOutLogAttrs("codex.tool_result"), wantRun: 7, wantMs: 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			tt.run(r)
			r.advance(time.Minute)
			attrs := tt.result(r)
			assert.Equal(t, "paired", ctStr(attrs, "toolpair.outcome"))
			d, ok := attrs.Get("toolpair.call.duration_ms")
			require.True(t, ok)
			assert.Equal(t, tt.wantRun, d.Int())
			e, differs := attrs.Get("toolpair.call.elapsed_ms")
			if !differs {
				e = d
			}
			assert.Equal(t, tt.wantMs, e.Int())
			assert.Equal(t, tt.wantRun != tt.wantMs, differs, "elapsed_ms only where it differs")
		})
	}
}

// ctOutSpanAttrs returns a getter of the attributes of the one output span named name.
func ctOutSpanAttrs(name string) func(r *rig) pcommon.Map {
	return func(r *rig) pcommon.Map {
		var found []pcommon.Map
		for _, s := range r.outSpans() {
			if s.Name() == name {
				found = append(found, s.Attributes())
			}
		}
		require.Len(r.t, found, 1)
		return found[0]
	}
}

// ctOutLogAttrs returns a getter of the attributes of the one output log record of event.
func ctOutLogAttrs(event string) func(r *rig) pcommon.Map {
	return func(r *rig) pcommon.Map {
		var found []pcommon.Map
		for _, lr := range r.outLogs() {
			if ctStr(lr.Attributes(), "event.name") == event {
				found = append(found, lr.Attributes())
			}
		}
		require.Len(r.t, found, 1)
		return found[0]
	}
}

// TestContractS3SyntheticSpan: the synthetic span of an interrupted call announced by a span,
// field by field, for each reason that makes one; its ID is the same on a replay.
func TestContractS3SyntheticSpan(t *testing.T) {
	res := map[string]any{"service.version": "1.2.3", "host.name": "box"}
	withRes := func(s ctSpan) ctSpan { s.res = res; return s }
	tests := []struct {
		name     string
		mutate   func(*Config)
		run      func(r *rig)
		reason   string
		parent   pcommon.SpanID // want
		end      func(r *rig) pcommon.Timestamp
		scopeKey string // scope attribute expected on the synthetic span, "" for none
	}{
		{name: "expired: parent is the announcing span's parent, end the scope's last sign of life", run: func(r *rig) {
			r.spans(withRes(ctWith(ctChat(1, 1, 7, 0, 100, "c1"), "gen_ai.conversation.id", "conv-1")))
			// Another call's tool span in the same conversation, later in record time, and one
			// of another conversation later still: the first is the scope's last sign of life.
			r.spans(ctWith(ctTool(1, 4, 7, "c2", 300, 700), "gen_ai.conversation.id", "conv-1"),
				ctWith(ctTool(2, 5, 7, "c3", 300, 9000), "gen_ai.conversation.id", "conv-2"))
			r.advance(10 * time.Minute)
		}, reason: "expired", parent: ctSpanID(7), end: func(*rig) pcommon.Timestamp { return ctTS(700) }, scopeKey: "gen_ai.conversation.id"},
		{name: "shutdown: a root announcing span is the parent, end the use time when nothing followed", run: func(r *rig) {
			r.spans(withRes(ctChat(1, 1, 0, 0, 100, "c1")))
			r.shutdown()
		}, reason: "shutdown", parent: ctSpanID(1), end: func(*rig) pcommon.Timestamp { return ctTS(100) }},
		{name: "next_step: ends at the boundary", run: func(r *rig) {
			r.spans(withRes(ctChat(1, 1, 7, 0, 100, "c1")), ctChat(1, 3, 7, 400, 500))
			r.advance(31 * time.Second)
		}, reason: "next_step", parent: ctSpanID(7), end: func(*rig) pcommon.Timestamp { return ctTS(400) }},
		{name: "session_end: ends at the session end", run: func(r *rig) {
			r.spans(withRes(ctWith(ctChat(1, 1, 7, 0, 100, "c1"), "session.id", "s-9")), ctWith(ctAgent(1, 7, 0, 0, 800), "session.id", "s-9"))
			r.advance(31 * time.Second)
		}, reason: "session_end", parent: ctSpanID(7), end: func(*rig) pcommon.Timestamp { return ctTS(800) }, scopeKey: "session.id"},
		{name: "evicted: ends in record time, not at the detection time", mutate: func(c *Config) { c.MaxPendingCalls = 1 }, run: func(r *rig) {
			r.spans(withRes(ctChat(1, 1, 7, 0, 100, "c1")))
			r.spans(ctChat(2, 1, 7, 0, 100, "c2"))
		}, reason: "evicted", parent: ctSpanID(7), end: func(*rig) pcommon.Timestamp { return ctTS(100) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ids []pcommon.SpanID
			for range 2 { // a replay yields the same span ID
				r := newRig(t, withConfig(tt.mutate))
				tt.run(r)
				var synthetic []ptrace.Span
				var resource pcommon.Resource
				for _, td := range r.tsink.AllTraces() {
					ctEachSpan(td, func(res pcommon.Resource, s ptrace.Span) {
						if v, ok := s.Attributes().Get("toolpair.synthetic"); ok && v.Bool() && ctStr(s.Attributes(), "gen_ai.tool.call.id") == "c1" {
							synthetic = append(synthetic, s)
							resource = res
						}
					})
				}
				require.Len(t, synthetic, 1)
				s := synthetic[0]
				assert.Equal(t, "execute_tool run_shell", s.Name())
				assert.Equal(t, ptrace.SpanKindInternal, s.Kind())
				assert.Equal(t, ctTraceID(1), s.TraceID())
				assert.Equal(t, tt.parent, s.ParentSpanID())
				assert.Equal(t, ctSyntheticSpanID(ctTraceID(1), "c1"), s.SpanID())
				assert.Equal(t, ctTS(100), s.StartTimestamp(), "start = use time (the chat span's end)")
				assert.Equal(t, tt.end(r), s.EndTimestamp())
				assert.Equal(t, ptrace.StatusCodeError, s.Status().Code())
				assert.Equal(t, "tool call interrupted: "+tt.reason, s.Status().Message())
				want := map[string]any{
					"gen_ai.operation.name":     "execute_tool",
					"gen_ai.tool.name":          "run_shell",
					"gen_ai.tool.call.id":       "c1",
					"error.type":                "tool_call_interrupted",
					"toolpair.synthetic":        true,
					"toolpair.outcome":          "interrupted",
					"toolpair.interrupt.reason": tt.reason,
					"toolpair.call.counted":     int64(1),
				}
				if tt.scopeKey != "" {
					v, _ := ctWith(ctChat(0, 0, 0, 0, 0), "gen_ai.conversation.id", "conv-1", "session.id", "s-9").attrs[tt.scopeKey].(string)
					want[tt.scopeKey] = v
				}
				assert.Equal(t, want, s.Attributes().AsRaw(), "exact attributes: no content copied")
				assert.Equal(t, map[string]any{"service.name": "app", "service.version": "1.2.3", "host.name": "box"}, resource.Attributes().AsRaw(), "resource copied")
				ids = append(ids, s.SpanID())
				r.shutdown()
			}
			assert.Equal(t, ids[0], ids[1])
		})
	}
}

// TestContractS3SyntheticLogRecord: the synthetic log record of an interrupted call announced
// by a log record (Claude Code and Codex decisions, transcript lines), field by field.
func TestContractS3SyntheticLogRecord(t *testing.T) {
	tests := []struct {
		name     string
		records  []ctLog
		call     string
		tool     string
		scope    map[string]any // the scope attribute that keyed the call
		resource map[string]any
		useTime  int64
	}{
		{name: "Claude Code tool_decision", records: []ctLog{func() ctLog {
			l := ctClaudeDecision("toolu_1", "accept", 100)
			l.res = map[string]any{"service.version": "2.1.330", "os.type": "linux"}
			return l
		}()}, call: "toolu_1", tool: "Bash", scope: map[string]any{"session.id": "sess-1"},
			resource: map[string]any{"service.name": "claude-code", "service.version": "2.1.330", "os.type": "linux"}},
		{name: "Codex tool_decision", records: []ctLog{ctCodexDecision("call_1", "approved", 100)},
			call: "call_1", tool: "exec_command", scope: map[string]any{"conversation.id": "conv-x"},
			resource: map[string]any{"service.name": "codex_exec"}},
		{name: "Claude Code transcript tool_use", records: []ctLog{ctLine("/p/s1.jsonl", ctClaudeUse("s1", "", "msg_1", "toolu_9", 100))},
			call: "toolu_9", tool: "Bash", scope: map[string]any{"session.id": "s1"},
			resource: map[string]any{"service.name": "transcripts"}},
		{name: "Claude Code subagent transcript tool_use", records: []ctLog{ctLine("/p/s1/subagents/agent-a7.jsonl", ctClaudeUse("s1", "a7", "msg_1", "toolu_8", 100))},
			call: "toolu_8", tool: "Bash", scope: map[string]any{"session.id": "s1/a7"},
			resource: map[string]any{"service.name": "transcripts"}},
		{name: "pi transcript toolCall", records: []ctLog{ctLine("/pi/sessions/x.jsonl", ctPiUse("e1", "call_pi", 100))},
			call: "call_pi", tool: "bash", scope: map[string]any{"log.file.path": "/pi/sessions/x.jsonl"},
			resource: map[string]any{"service.name": "transcripts"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			r.logRecords(tt.records...)
			r.advance(10 * time.Minute)
			var synthetic []plog.LogRecord
			var resource pcommon.Resource
			for _, ld := range r.lsink.AllLogs() {
				ctEachLog(ld, func(res pcommon.Resource, lr plog.LogRecord) {
					if v, ok := lr.Attributes().Get("toolpair.synthetic"); ok && v.Bool() {
						synthetic = append(synthetic, lr)
						resource = res
					}
				})
			}
			require.Len(t, synthetic, 1)
			lr := synthetic[0]
			assert.Equal(t, "toolpair.tool_call.interrupted", lr.EventName())
			assert.Equal(t, plog.SeverityNumberWarn, lr.SeverityNumber())
			assert.Equal(t, "WARN", lr.SeverityText())
			assert.Equal(t, ctTS(100), lr.Timestamp(), "timestamp = end: the use time when nothing followed in the scope, never the clock")
			assert.Equal(t, pcommon.ValueTypeStr, lr.Body().Type())
			assert.Equal(t, fmt.Sprintf("tool call %s (%s) interrupted: expired", tt.call, tt.tool), lr.Body().Str())
			want := map[string]any{
				"gen_ai.operation.name":     "execute_tool",
				"gen_ai.tool.name":          tt.tool,
				"gen_ai.tool.call.id":       tt.call,
				"error.type":                "tool_call_interrupted",
				"toolpair.synthetic":        true,
				"toolpair.outcome":          "interrupted",
				"toolpair.interrupt.reason": "expired",
				"toolpair.call.counted":     int64(1),
			}
			for k, v := range tt.scope {
				want[k] = v
			}
			assert.Equal(t, want, lr.Attributes().AsRaw(), "exact attributes: no content copied")
			assert.Equal(t, tt.resource, resource.Attributes().AsRaw(), "resource copied from the announcing record")
			assert.NotContains(t, lr.Body().Str(), "secret", "no tool arguments")
		})
	}
}

// TestContractS3Dispositions: orphans and duplicates are marked or dropped; defaults orphans
// mark, duplicates drop; dropped records are still counted.
func TestContractS3Dispositions(t *testing.T) {
	tests := []struct {
		name       string
		mutate     func(*Config)
		wantOrphan []string
		wantDupe   []string
	}{
		{name: "defaults", wantOrphan: []string{"span:orphan"}, wantDupe: []string{"span:paired"}},
		{name: "orphans drop, duplicates mark", mutate: func(c *Config) { c.Orphans, c.Duplicates = DispositionDrop, DispositionMark },
			wantDupe: []string{"span:duplicate", "span:paired"}},
		{name: "both mark", mutate: func(c *Config) { c.Orphans, c.Duplicates = DispositionMark, DispositionMark },
			wantOrphan: []string{"span:orphan"}, wantDupe: []string{"span:duplicate", "span:paired"}},
		{name: "both drop", mutate: func(c *Config) { c.Orphans, c.Duplicates = DispositionDrop, DispositionDrop },
			wantDupe: []string{"span:paired"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, withConfig(tt.mutate))
			r.spans(ctChat(1, 1, 0, 0, 100, "c1"), ctTool(1, 2, 0, "c1", 110, 150), ctTool(1, 3, 0, "ghost", 110, 150))
			r.spans(ctTool(1, 4, 0, "c1", 110, 160)) // another record of the call's result
			r.advance(31 * time.Second)
			m := r.marks(nil)
			assert.Equal(t, tt.wantOrphan, m["ghost"])
			assert.Equal(t, tt.wantDupe, m["c1"])
			assert.Len(t, r.outSpans(), 1+len(tt.wantOrphan)+len(tt.wantDupe), "nothing else dropped")
			const outcomes = "otelcol_processor_toolpair_outcomes"
			assert.Equal(t, int64(1), r.sum(outcomes, map[string]string{"toolpair.outcome": "orphan"}))
			assert.Equal(t, int64(1), r.sum(outcomes, map[string]string{"toolpair.outcome": "duplicate"}))
			r.checkConservation()
		})
	}
}

// TestContractS3UnnamedTool: a call whose use named no tool (the specification is silent; README
// "Attributes written"): the span is named execute_tool, the log body says "unknown tool",
// gen_ai.tool.name is absent.
func TestContractS3UnnamedTool(t *testing.T) {
	r := newRig(t)
	r.spans(ctSpan{trace: 1, id: 1, name: "chat m", start: 0, end: 100, attrs: map[string]any{
		"gen_ai.operation.name": "chat", "gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"tool_call","id":"c9"}]}]`,
	}})
	d := ctClaudeDecision("toolu_9", "accept", 100)
	delete(d.attrs, "tool_name")
	r.logRecords(d)
	r.shutdown()
	var spans, logs int
	for _, s := range r.outSpans() {
		if ctStr(s.Attributes(), "toolpair.synthetic") == "true" {
			spans++
			assert.Equal(t, "execute_tool", s.Name())
			_, ok := s.Attributes().Get("gen_ai.tool.name")
			assert.False(t, ok)
		}
	}
	for _, lr := range r.outLogs() {
		if lr.EventName() == "toolpair.tool_call.interrupted" {
			logs++
			assert.Equal(t, "tool call toolu_9 (unknown tool) interrupted: shutdown", lr.Body().Str())
			_, ok := lr.Attributes().Get("gen_ai.tool.name")
			assert.False(t, ok)
		}
	}
	assert.Equal(t, 1, spans)
	assert.Equal(t, 1, logs)
}
