// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package genaievents

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

type record struct {
	eventName string         // OTLP EventName
	attrs     map[string]any // attributes
	body      any            // string or map[string]any
}

func (r record) logRecord() plog.LogRecord {
	lr := plog.NewLogRecord()
	lr.SetTimestamp(100)
	lr.SetEventName(r.eventName)
	_ = lr.Attributes().FromRaw(r.attrs)
	switch b := r.body.(type) {
	case string:
		lr.Body().SetStr(b)
	case map[string]any:
		_ = lr.Body().SetEmptyMap().FromRaw(b)
	}
	return lr
}

func TestExtractLog(t *testing.T) {
	use := func(id, name string) dialect.Item {
		return dialect.Item{Kind: pairing.KindUse, CallID: id, ToolName: name, Time: 100}
	}
	echo := func(id string) dialect.Item { return dialect.Item{Kind: pairing.KindEcho, CallID: id, Time: 100} }
	tests := []struct {
		name      string
		rec       record
		claimed   bool
		items     []dialect.Item
		malformed []string
	}{
		{
			name: "gen_ai.choice by EventName, tool_calls under message",
			rec: record{eventName: EventChoice, body: map[string]any{"index": 0, "finish_reason": "tool_calls", "message": map[string]any{
				"role": "assistant", "tool_calls": []any{
					map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "get_weather", "arguments": "{}"}},
					map[string]any{"id": "call_2", "type": "function", "function": map[string]any{"name": "read"}},
				}}}},
			claimed: true,
			items:   []dialect.Item{use("call_1", "get_weather"), use("call_2", "read")},
		},
		{
			name: "gen_ai.assistant.message by event.name, tool_calls at the top level",
			rec: record{attrs: map[string]any{"event.name": EventAssistantMessage}, body: map[string]any{
				"tool_calls": []any{map[string]any{"id": "call_1", "function": map[string]any{"name": "get_weather"}}}}},
			claimed: true,
			items:   []dialect.Item{use("call_1", "get_weather")},
		},
		{
			name:    "gen_ai.choice as a JSON string body",
			rec:     record{eventName: EventChoice, body: `{"index":0,"message":{"tool_calls":[{"id":"call_\u0031","function":{"name":"ls"}}]}}`},
			claimed: true,
			items:   []dialect.Item{use("call_1", "ls")},
		},
		{
			name:    "text choice: recognised, nothing announced",
			rec:     record{eventName: EventChoice, body: map[string]any{"index": 0, "message": map[string]any{"content": "hi"}}},
			claimed: true,
		},
		{
			name:    "gen_ai.tool.message: an echo",
			rec:     record{eventName: EventToolMessage, body: map[string]any{"id": "call_1", "content": "sunny"}},
			claimed: true,
			items:   []dialect.Item{echo("call_1")},
		},
		{
			name: "operation details: output tool_call parts are uses (Gemini's prefix removed), input responses echoes",
			rec: record{attrs: map[string]any{
				"event.name":             EventOperationDetails,
				"gen_ai.output.messages": `[{"role":"system","parts":[{"type":"text","content":"x"},{"type":"tool_call","name":"run_shell_command","id":"run_shell_command__run_shell_command_1795323378643_0"}]}]`,
				"gen_ai.input.messages":  `[{"role":"system","parts":[{"type":"tool_call","name":"ls","id":"c0"}]},{"role":"user","parts":[{"type":"tool_call_response","id":"c0","response":"{}"}]}]`,
			}, body: "GenAI operation details from gemini-2.5-pro."},
			claimed: true,
			items:   []dialect.Item{use("run_shell_command_1795323378643_0", "run_shell_command"), echo("c0")},
		},
		{
			name:    "event name in the body only",
			rec:     record{body: EventToolMessage},
			claimed: true,
			// The body is the name: no call ID anywhere.
			malformed: []string{dialect.ReasonMissingCallID},
		},
		{
			name:    "choice named by its body: no payload, nothing announced",
			rec:     record{body: EventChoice},
			claimed: true,
		},
		{
			name:      "tool message without an id",
			rec:       record{eventName: EventToolMessage, body: map[string]any{"content": "x"}},
			claimed:   true,
			malformed: []string{dialect.ReasonMissingCallID},
		},
		{
			name:      "tool call with a numeric id and one with a null id",
			rec:       record{eventName: EventChoice, body: `{"message":{"tool_calls":[{"id":7},{"id":null},{"function":{}}]}}`},
			claimed:   true,
			malformed: []string{dialect.ReasonInvalidCallID, dialect.ReasonNullCallID, dialect.ReasonMissingCallID},
		},
		{
			name:      "truncated JSON body",
			rec:       record{eventName: EventChoice, body: `{"message":{"tool_calls":[{"id":"call_1"`},
			claimed:   true,
			malformed: []string{dialect.ReasonInvalidJSON},
		},
		{
			name:      "tool_calls of the wrong type",
			rec:       record{eventName: EventAssistantMessage, body: map[string]any{"tool_calls": "call_1"}},
			claimed:   true,
			malformed: []string{dialect.ReasonInvalidType},
		},
		{
			name:      "operation details with malformed output messages",
			rec:       record{attrs: map[string]any{"event.name": EventOperationDetails, "gen_ai.output.messages": `[{"parts":[{"type":"tool_call","id":`}},
			claimed:   true,
			malformed: []string{dialect.ReasonInvalidJSON},
		},
		{
			name: "other GenAI event",
			rec:  record{eventName: "gen_ai.user.message", body: map[string]any{"content": "hi"}},
		},
		{
			name: "unrelated record",
			rec:  record{body: "GET / 200"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f dialect.Found
			assert.Equal(t, tt.claimed, ExtractLog(tt.rec.logRecord(), &f))
			assert.Equal(t, tt.items, f.Items)
			assert.Equal(t, tt.malformed, f.Malformed)
		})
	}
}

func TestWireID(t *testing.T) {
	for _, tt := range []struct{ id, name, want string }{
		{"run_shell_command__run_shell_command_1_0", "run_shell_command", "run_shell_command_1_0"},
		{"call_1", "ls", "call_1"},
		{"ls__", "ls", "ls__"},
		{"lsx__a", "ls", "lsx__a"},
		{"ls__a", "", "ls__a"},
	} {
		assert.Equal(t, tt.want, WireID(tt.id, tt.name), tt.id)
	}
}

// plogMarshaler turns a test record into an OTLP logs request, for fuzz seeds.
type plogMarshaler struct{ m plog.ProtoMarshaler }

func (p plogMarshaler) marshal(f *testing.F, r record) []byte {
	ld := plog.NewLogs()
	r.logRecord().CopyTo(ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty())
	data, err := p.m.MarshalLogs(ld)
	if err != nil {
		f.Fatal(err)
	}
	return data
}

// TestExtractChoiceEvent: the attributes of a gen_ai.choice span event, read as a body with
// the time and Step given; a Strands content-block array is a span event's message only: a
// log record's string body holding one is not read (a log body is an object).
func TestExtractChoiceEvent(t *testing.T) {
	attrs := pcommon.NewMap()
	attrs.PutStr("message", `[{"type":"toolUse","name":"run_shell","toolUseId":"call_1"},{"text":"x"}]`)
	attrs.PutStr("finish_reason", "toolUse")
	var f dialect.Found
	ExtractChoiceEvent(attrs, 20, "s", &f)
	assert.Equal(t, []dialect.Item{{Kind: pairing.KindUse, CallID: "call_1", ToolName: "run_shell", Time: 20, Step: "s"}}, f.Items)
	assert.Empty(t, f.Malformed)

	f.Reset()
	assert.True(t, ExtractLog(record{eventName: EventChoice, body: `[{"type":"toolUse","toolUseId":"call_1"}]`}.logRecord(), &f))
	assert.Empty(t, f.Items)
	assert.Equal(t, []string{dialect.ReasonInvalidJSON}, f.Malformed)
}
