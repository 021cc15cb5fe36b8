// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package genaievents

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
)

// FuzzExtractLog feeds OTLP logs requests, seeded with every log record of the Gemini CLI
// captures (gen_ai.client.inference.operation.details among them) and with semconv message
// events of both body shapes, to ExtractLog: it must never panic, report only well-formed
// items, find nothing in a record it does not claim, and find the same items when run twice.
func FuzzExtractLog(f *testing.F) {
	dialecttest.SeedLogs(f, "gemini/*/logs.json")
	var m plogMarshaler
	for _, r := range []record{
		{eventName: EventChoice, body: map[string]any{"index": 0, "message": map[string]any{"tool_calls": []any{map[string]any{"id": "call_1", "function": map[string]any{"name": "f"}}}}}},
		{eventName: EventChoice, body: `{"message":{"tool_calls":[{"id":"call_1","function":{"name":"f"}}]}}`},
		{attrs: map[string]any{"event.name": EventAssistantMessage}, body: map[string]any{"tool_calls": []any{map[string]any{"id": "call_1"}}}},
		{eventName: EventToolMessage, body: map[string]any{"id": "call_1", "content": "x"}},
		{eventName: EventToolMessage, body: `{"id":"call_1"}`},
	} {
		f.Add(m.marshal(f, r))
	}
	dialecttest.FuzzLogs(f, ExtractLog)
}

// FuzzExtractChoiceEvent feeds the message attribute of a gen_ai.choice span event, seeded
// with the messages of the AWS Strands Agents TS captures' chat and invoke_agent spans and
// the OpenAI shape, to ExtractChoiceEvent: it must never panic, report only well-formed
// items, and find the same items when run twice.
func FuzzExtractChoiceEvent(f *testing.F) {
	for _, s := range []string{
		`[{"type":"toolUse","name":"run_shell","toolUseId":"call_mock_normal_01","input":{"command":"echo hello"}}]`,
		`[{"text":"Done. The tool calls completed; the shell printed ` + "`hello`" + `."}]`,
		`Cancelled by user`,
		`[{"toolUse":{"name":"run_shell","toolUseId":"call_1","input":{}}}]`,
		`{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]}`,
		`[]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, message string) {
		attrs := pcommon.NewMap()
		attrs.PutStr("message", message)
		dialecttest.Extract(t, attrs, func(m pcommon.Map, found *dialect.Found) bool {
			ExtractChoiceEvent(m, 20, "step", found)
			return true
		}, len(message)+len("message"))
	})
}
