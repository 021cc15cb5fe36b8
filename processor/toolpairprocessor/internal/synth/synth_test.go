// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package synth

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

func TestSpanIDIsDeterministicPerTraceAndCall(t *testing.T) {
	tr := pcommon.TraceID{1, 2, 3}
	a := SpanID(tr, "call_1")
	assert.Equal(t, a, SpanID(tr, "call_1"))
	assert.NotEqual(t, a, SpanID(tr, "call_2"))
	assert.NotEqual(t, a, SpanID(pcommon.TraceID{9}, "call_1"))
	assert.False(t, a.IsEmpty())
}

func TestAppendLog(t *testing.T) {
	res := pcommon.NewResource()
	res.Attributes().PutStr("service.name", "claude-code")
	o := &Origin{Resource: NewResource(res), ConversationAttr: "session.id", Conversation: "s1", TraceID: pcommon.TraceID{1}, SpanID: pcommon.SpanID{2}}
	r := &pairing.Resolution{Outcome: pairing.OutcomeInterrupted, Reason: pairing.ReasonShutdown, Key: pairing.Key{CallID: "toolu_1"}, ToolName: "Bash", UseTime: 100, EndTime: 500}
	ld := plog.NewLogs()
	AppendLog(ld, r, o, "scope", "", pcommon.Timestamp(600).AsTime())
	lr := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	assert.Equal(t, "claude-code", ld.ResourceLogs().At(0).Resource().Attributes().AsRaw()["service.name"])
	assert.Equal(t, EventNameInterrupted, lr.EventName())
	assert.Equal(t, plog.SeverityNumberWarn, lr.SeverityNumber())
	assert.Equal(t, pcommon.Timestamp(500), lr.Timestamp())
	assert.Equal(t, "tool call toolu_1 (Bash) interrupted: shutdown", lr.Body().Str())
	assert.Equal(t, map[string]any{
		"gen_ai.operation.name":     "execute_tool",
		"gen_ai.tool.name":          "Bash",
		"gen_ai.tool.call.id":       "toolu_1",
		"error.type":                "tool_call_interrupted",
		"toolpair.synthetic":        true,
		"toolpair.outcome":          "interrupted",
		"toolpair.interrupt.reason": "shutdown",
		"session.id":                "s1",
	}, lr.Attributes().AsRaw())
}

// TestSyntheticCallIDForm: a call announced by a record that writes its IDs as
// "<tool>__<id>" (Gemini CLI, Origin.ToolPrefixedIDs) gets its synthetic record's call ID in
// that form; without a tool name, or from any other record, the key's ID.
func TestSyntheticCallIDForm(t *testing.T) {
	res := NewResource(pcommon.NewResource())
	for _, tt := range []struct {
		name, tool, want string
		prefixed         bool
	}{
		{"Gemini CLI's form", "run_shell_command", "run_shell_command__run_shell_command_17_0", true},
		{"no tool name", "", "run_shell_command_17_0", true},
		{"another record", "run_shell_command", "run_shell_command_17_0", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := &Origin{Resource: res, ToolPrefixedIDs: tt.prefixed}
			r := &pairing.Resolution{Outcome: pairing.OutcomeInterrupted, Reason: pairing.ReasonExpired, Key: pairing.Key{CallID: "run_shell_command_17_0"}, ToolName: tt.tool}
			ld := plog.NewLogs()
			lr := AppendLog(ld, r, o, "scope", "", pcommon.Timestamp(1).AsTime())
			v, _ := lr.Attributes().Get("gen_ai.tool.call.id")
			assert.Equal(t, tt.want, v.Str())
			assert.Contains(t, lr.Body().Str(), "tool call "+tt.want+" ")
		})
	}
}

// TestMark: what a result record carries for the calls it resolved (specification section 3):
// the outcome only when they share it, a duration only for one paired call, the interrupt
// reason with an aborted outcome, and toolpair.call.counted the number of calls whose first
// report it is.
func TestMark(t *testing.T) {
	ms := int64(1_000_000)
	paired := pairing.Resolution{Outcome: pairing.OutcomePaired, UseTime: 10 * ms, ResultTime: 35 * ms}
	report := paired
	report.Report = true
	aborted := pairing.Resolution{Outcome: pairing.OutcomeInterrupted, Reason: pairing.ReasonAborted}
	dup := pairing.Resolution{Outcome: pairing.OutcomeDuplicate, SameSource: true}
	for _, tt := range []struct {
		name string
		res  []pairing.Resolution
		want map[string]any
	}{
		{"one paired call, counted", []pairing.Resolution{paired},
			map[string]any{AttrOutcome: "paired", AttrCallDurationMs: int64(25), AttrCallCounted: int64(1)}},
		{"a further report: its own duration, not counted", []pairing.Resolution{report},
			map[string]any{AttrOutcome: "paired", AttrCallDurationMs: int64(25)}},
		{"two paired calls: the outcome, no duration", []pairing.Resolution{paired, report},
			map[string]any{AttrOutcome: "paired", AttrCallCounted: int64(1)}},
		{"outcomes that differ: none written", []pairing.Resolution{paired, aborted},
			map[string]any{AttrCallCounted: int64(2)}},
		{"aborted: the reason", []pairing.Resolution{aborted},
			map[string]any{AttrOutcome: "interrupted", AttrInterruptReason: "aborted", AttrCallCounted: int64(1)}},
		{"a duplicate counts nothing", []pairing.Resolution{dup},
			map[string]any{AttrOutcome: "duplicate"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var m Mark
			for i := range tt.res {
				m.Add(&tt.res[i], Run{})
			}
			attrs := pcommon.NewMap()
			m.Write(attrs)
			assert.Equal(t, tt.want, attrs.AsRaw())
		})
	}
}
