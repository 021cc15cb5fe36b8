// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package codex

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

func TestExtractSpan(t *testing.T) {
	tests := []struct {
		name      string
		span      string
		attrs     map[string]any
		claimed   bool
		items     []dialect.Item
		malformed []string
	}{
		{
			name: "tool span: a result at its end",
			span: "exec_command",
			attrs: map[string]any{
				"tool_name": "exec_command", "call_id": "call_1", "codex.tool.phase": "dispatch",
				"aborted": false, "conversation.id": "conv",
			},
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindResult, CallID: "call_1", ToolName: "exec_command", Time: 20}},
		},
		{
			name:    "aborted tool span: an abort",
			span:    "exec_command",
			attrs:   map[string]any{"tool_name": "exec_command", "call_id": "call_2", "aborted": true},
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindAbort, CallID: "call_2", ToolName: "exec_command", Time: 20}},
		},
		{
			name:    "aborted as a string",
			span:    "apply_patch",
			attrs:   map[string]any{"tool_name": "apply_patch", "call_id": "call_3", "aborted": "true"},
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindAbort, CallID: "call_3", ToolName: "apply_patch", Time: 20}},
		},
		{
			name:  "another span carrying the call ID is not the tool span",
			span:  "guardian_scoring_observation",
			attrs: map[string]any{"tool_name": "exec_command", "call_id": "call_1"},
		},
		{
			name:  "unified_exec span without tool_name",
			span:  "unified_exec.exec_command",
			attrs: map[string]any{"call_id": "call_1", "outcome": "exited"},
		},
		{
			name:      "tool span with an empty call ID",
			span:      "exec_command",
			attrs:     map[string]any{"tool_name": "exec_command", "call_id": ""},
			claimed:   true,
			malformed: []string{dialect.ReasonMissingCallID},
		},
		{
			name:      "tool span with a numeric call ID",
			span:      "exec_command",
			attrs:     map[string]any{"tool_name": "exec_command", "call_id": int64(3)},
			claimed:   true,
			malformed: []string{dialect.ReasonInvalidCallID},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ptrace.NewSpan()
			s.SetName(tt.span)
			s.SetStartTimestamp(10)
			s.SetEndTimestamp(20)
			assert.NoError(t, s.Attributes().FromRaw(tt.attrs))
			var f dialect.Found
			assert.Equal(t, tt.claimed, ExtractSpan(s, &f))
			assert.Equal(t, tt.items, f.Items)
			assert.Equal(t, tt.malformed, f.Malformed)
		})
	}
}

// TestToolSpanCancelled: a Codex tool span is an abort when aborted is true or when
// dialect.Cancelled says so.
func TestToolSpanCancelled(t *testing.T) {
	for _, aborted := range []bool{false, true} {
		for _, m := range dialecttest.Markers() {
			t.Run(fmt.Sprintf("aborted=%v/%s", aborted, m.Name), func(t *testing.T) {
				s := dialecttest.MarkedSpan(t, "exec_command", map[string]any{
					"tool_name": "exec_command", "call_id": "call_1", "aborted": aborted,
				}, false, m)
				want := m.Kind
				if aborted {
					want = pairing.KindAbort
				}
				var f dialect.Found
				assert.True(t, ExtractSpan(s, &f))
				assert.Equal(t, []dialect.Item{{Kind: want, CallID: "call_1", ToolName: "exec_command", Time: 20}}, f.Items)
			})
		}
	}
}
