// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package geminicli

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

func TestExtractLog(t *testing.T) {
	tests := []struct {
		name      string
		eventName string // OTLP EventName
		attrs     map[string]any
		claimed   bool
		items     []dialect.Item
		malformed []string
	}{
		{
			name:    "main agent's api_request: a boundary",
			attrs:   map[string]any{"event.name": "gemini_cli.api_request", "role": "main", "prompt_id": "p", "session.id": "s"},
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindBoundary, Time: 42, Step: logBoundaryStep}},
		},
		{
			name:    "api_request without a role (older releases): a boundary",
			attrs:   map[string]any{"event.name": "gemini_cli.api_request"},
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindBoundary, Time: 42, Step: logBoundaryStep}},
		},
		{
			name:    "api_request of a sub-agent: claimed, no boundary",
			attrs:   map[string]any{"event.name": "gemini_cli.api_request", "role": "subagent"},
			claimed: true,
		},
		{
			name:    "utility request (next-speaker check): claimed, no boundary",
			attrs:   map[string]any{"event.name": "gemini_cli.api_request", "role": "utility_next_speaker"},
			claimed: true,
		},
		{
			name:      "api_request named by the OTLP EventName",
			eventName: "gemini_cli.api_request",
			claimed:   true,
			items:     []dialect.Item{{Kind: pairing.KindBoundary, Time: 42, Step: logBoundaryStep}},
		},
		{
			name:      "the OTLP EventName is read before event.name",
			eventName: "gemini_cli.api_request",
			attrs:     map[string]any{"event.name": "gemini_cli.tool_call"},
			claimed:   true,
			items:     []dialect.Item{{Kind: pairing.KindBoundary, Time: 42, Step: logBoundaryStep}},
		},
		{
			name:      "event.name is not read when the OTLP EventName is set",
			eventName: "gemini_cli.tool_call",
			attrs:     map[string]any{"event.name": "gemini_cli.api_request"},
		},
		{
			name: "Gemini CLI's operation details: uses in the wire ID form, echoes",
			attrs: map[string]any{
				"event.name": "gen_ai.client.inference.operation.details", "installation.id": "i", "session.id": "s",
				"gen_ai.output.messages": `[{"role":"system","parts":[{"type":"tool_call","name":"run_shell_command","id":"run_shell_command__run_shell_command_17_0"}]}]`,
				"gen_ai.input.messages":  `[{"role":"user","parts":[{"type":"tool_call_response","id":"read_file_16_0","response":{}}]}]`,
			},
			claimed: true,
			items: []dialect.Item{
				{Kind: pairing.KindUse, CallID: "run_shell_command_17_0", ToolName: "run_shell_command", Time: 42, Step: logUseStep},
				{Kind: pairing.KindEcho, CallID: "read_file_16_0", Time: 42},
			},
		},
		{
			name: "operation details of another instrumentation: left to genai_events",
			attrs: map[string]any{
				"event.name":             "gen_ai.client.inference.operation.details",
				"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"tool_call","name":"f","id":"call_1"}]}]`,
			},
		},
		{
			name:      "operation details with malformed output messages",
			attrs:     map[string]any{"event.name": "gen_ai.client.inference.operation.details", "installation.id": "i", "gen_ai.output.messages": `[{"parts":[`},
			claimed:   true,
			malformed: []string{dialect.ReasonInvalidJSON},
		},
		{
			name:  "gemini_cli.tool_call carries no call ID: not read",
			attrs: map[string]any{"event.name": "gemini_cli.tool_call", "function_name": "run_shell_command", "success": true, "duration_ms": int64(26)},
		},
		{
			name:  "event name of the wrong type",
			attrs: map[string]any{"event.name": int64(1)},
		},
		{name: "no event name", attrs: map[string]any{"installation.id": "i"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lr := plog.NewLogRecord()
			lr.SetTimestamp(42)
			lr.SetEventName(tt.eventName)
			assert.NoError(t, lr.Attributes().FromRaw(tt.attrs))
			var f dialect.Found
			assert.Equal(t, tt.claimed, ExtractLog(lr, &f))
			assert.Equal(t, tt.items, f.Items)
			assert.Equal(t, tt.malformed, f.Malformed)
		})
	}
}
