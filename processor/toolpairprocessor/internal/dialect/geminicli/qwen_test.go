// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package geminicli

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// kindNames names the item kinds the Qwen Code rules find.
var kindNames = map[pairing.Kind]string{
	pairing.KindUse: "use", pairing.KindResult: "result", pairing.KindAbort: "abort", pairing.KindCompanion: "companion",
	pairing.KindBoundary: "boundary", pairing.KindSessionEnd: "session_end", pairing.KindEcho: "echo",
}

// qwenItems runs the Qwen Code rules on every span and log record of a capture run and
// returns, by record name, the kinds and call IDs of the items found; records no rule claims
// are left out. The Gemini CLI rules claim none of them.
func qwenItems(t *testing.T, run string) map[string][]string {
	t.Helper()
	got := map[string][]string{}
	add := func(name string, f *dialect.Found) {
		for _, it := range f.Items {
			got[name] = append(got[name], kindNames[it.Kind]+" "+it.CallID)
		}
		assert.Empty(t, f.Malformed, name)
	}
	for _, s := range dialecttest.CaptureSpans(t, "qwen/"+run+"/traces.json") {
		var f dialect.Found
		assert.False(t, ExtractSpan(s, &f), s.Name())
		for _, extract := range []func(ptrace.Span, *dialect.Found) bool{ExtractQwenSpan, ExtractQwenExecutionSpan} {
			f.Reset()
			if extract(s, &f) {
				add("span "+s.Name(), &f)
			}
		}
	}
	for _, lr := range dialecttest.CaptureLogRecords(t, "qwen/"+run+"/logs.json") {
		var f dialect.Found
		name := lr.Attributes().AsRaw()["event.name"]
		assert.False(t, ExtractLog(lr, &f), name)
		if ExtractQwenLog(lr, &f) {
			add("log "+name.(string), &f)
		}
	}
	return got
}

// TestQwenCaptures: in Qwen Code's real captures the llm_request spans are step boundaries,
// the first announces the call and the next one's history echoes its result, the tool span and the tool_call event resolve it (an abort when the
// run was interrupted), the execution span is a companion, every main-agent api_request is a
// boundary and session.end a session end.
func TestQwenCaptures(t *testing.T) {
	assert.Equal(t, map[string][]string{
		"span qwen-code.llm_request":    {"boundary ", "use call_mock_normal_01", "boundary ", "echo call_mock_normal_01"},
		"span qwen-code.tool":           {"result call_mock_normal_01"},
		"span qwen-code.tool.execution": {"companion call_mock_normal_01"},
		"log qwen-code.tool_call":       {"result call_mock_normal_01"},
		"log qwen-code.api_request":     {"boundary ", "boundary "},
		"log session.end":               {"session_end "},
	}, qwenItems(t, "normal"))
	assert.Equal(t, map[string][]string{
		"span qwen-code.llm_request":    {"boundary ", "use call_mock_interrupt_01"},
		"span qwen-code.tool":           {"abort call_mock_interrupt_01"},
		"span qwen-code.tool.execution": {"abort call_mock_interrupt_01"},
		"log qwen-code.tool_call":       {"abort call_mock_interrupt_01"},
		"log qwen-code.api_request":     {"boundary "},
		"log session.end":               {"session_end "},
	}, qwenItems(t, "interrupt_sigterm"))
}

// TestExtractQwenLog: the fields of each Qwen Code event, a sub-agent's request, a tool_call
// without a usable call ID, and events the dialect does not read.
func TestExtractQwenLog(t *testing.T) {
	for _, tc := range []struct {
		name      string
		attrs     map[string]any
		eventName string // the OTLP EventName
		claimed   bool
		items     []dialect.Item
		malformed []string
	}{
		{name: "tool_call", attrs: map[string]any{"event.name": "qwen-code.tool_call", "call_id": "c1", "function_name": "run_shell_command", "status": "error"},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindResult, CallID: "c1", ToolName: "run_shell_command", Time: 5}}},
		{name: "cancelled tool_call", attrs: map[string]any{"call_id": "c1", "status": "cancelled"}, eventName: "qwen-code.tool_call",
			claimed: true, items: []dialect.Item{{Kind: pairing.KindAbort, CallID: "c1", Time: 5}}},
		{name: "tool_call without call_id", attrs: map[string]any{"event.name": "qwen-code.tool_call", "status": "success"},
			claimed: true, malformed: []string{dialect.ReasonMissingCallID}},
		{name: "tool_call with a call_id not a string", attrs: map[string]any{"event.name": "qwen-code.tool_call", "call_id": int64(3)},
			claimed: true, malformed: []string{dialect.ReasonInvalidCallID}},
		{name: "main agent's api_request", attrs: map[string]any{"event.name": "qwen-code.api_request", "subagent_name": ""},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindBoundary, Time: 5, Step: qwenLogBoundaryStep}}},
		{name: "sub-agent's api_request", attrs: map[string]any{"event.name": "qwen-code.api_request", "subagent_name": "reviewer"}, claimed: true},
		{name: "session.end", attrs: map[string]any{"event.name": "session.end"},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindSessionEnd, Time: 5}}},
		{name: "api_response", attrs: map[string]any{"event.name": "qwen-code.api_response", "call_id": "c1"}},
		{name: "Gemini CLI's tool_call", attrs: map[string]any{"event.name": "gemini_cli.tool_call", "call_id": "c1"}},
		{name: "event.name not a string", attrs: map[string]any{"event.name": int64(1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lr := plog.NewLogRecord()
			lr.SetTimestamp(pcommon.Timestamp(5))
			lr.SetEventName(tc.eventName)
			assert.NoError(t, lr.Attributes().FromRaw(tc.attrs))
			var f dialect.Found
			assert.Equal(t, tc.claimed, ExtractQwenLog(lr, &f))
			assert.Equal(t, tc.items, f.Items)
			assert.Equal(t, tc.malformed, f.Malformed)
		})
	}
}

// TestExtractQwenSpan: a tool span's failure kinds, and spans of other names.
func TestExtractQwenSpan(t *testing.T) {
	for _, tc := range []struct {
		name    string
		span    string
		attrs   map[string]any
		claimed bool
		items   []dialect.Item
	}{
		{name: "failed tool", span: "qwen-code.tool", attrs: map[string]any{"gen_ai.tool.call.id": "c1", "gen_ai.tool.name": "read_file", "tool.failure_kind": "error"},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindResult, CallID: "c1", ToolName: "read_file", Time: 20}}},
		{name: "cancelled tool", span: "qwen-code.tool", attrs: map[string]any{"gen_ai.tool.call.id": "c1", "tool.failure_kind": "cancelled"},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindAbort, CallID: "c1", Time: 20}}},
		{name: "tool without call ID", span: "qwen-code.tool", attrs: map[string]any{"call_id": "c1"}, claimed: true},
		{name: "hook", span: "qwen-code.hook", attrs: map[string]any{"gen_ai.tool.call.id": "c1"}},
		{name: "llm_request without messages", span: "qwen-code.llm_request", attrs: map[string]any{"gen_ai.request.model": "m"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := dialecttest.NewSpan(t, tc.span, tc.attrs, true)
			var f dialect.Found
			assert.Equal(t, tc.claimed, ExtractQwenSpan(s, &f))
			assert.Equal(t, tc.items, f.Items)
			f.Reset()
			assert.False(t, ExtractQwenExecutionSpan(s, &f))
		})
	}
}
