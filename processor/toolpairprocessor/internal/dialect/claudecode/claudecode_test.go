// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

func TestExtractLog(t *testing.T) {
	ts := time.Date(2026, 11, 22, 4, 53, 19, 958e6, time.UTC).UnixNano()
	tests := []struct {
		name      string
		body      string
		eventName string
		ts        int64
		attrs     map[string]any
		claimed   bool
		items     []dialect.Item
		malformed []string
	}{
		{
			name: "decision accept named by the body", body: "claude_code.tool_decision", ts: ts,
			attrs:   map[string]any{"event.name": "tool_decision", "tool_use_id": "toolu_1", "tool_name": "Bash", "decision": "accept"},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindUse, CallID: "toolu_1", ToolName: "Bash", Time: ts}},
		},
		{
			name: "decision reject named by the OTLP event name", eventName: "claude_code.tool_decision", ts: ts,
			attrs:   map[string]any{"tool_use_id": "toolu_2", "tool_name": "Bash", "decision": "reject"},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindReject, CallID: "toolu_2", ToolName: "Bash", Time: ts}},
		},
		{
			name:    "result named by event.name only, time from event.timestamp",
			attrs:   map[string]any{"event.name": "tool_result", "event.timestamp": "2026-11-22T04:53:19.958Z", "tool_use_id": "toolu_3", "success": "true", "duration_ms": "31"},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindResult, CallID: "toolu_3", Time: ts}},
		},
		{
			name: "result without an id", body: "claude_code.tool_result", ts: ts,
			attrs:   map[string]any{"event.name": "tool_result"},
			claimed: true, malformed: []string{dialect.ReasonMissingCallID},
		},
		{
			name: "result with a numeric id", body: "claude_code.tool_result", ts: ts,
			attrs:   map[string]any{"tool_use_id": 12},
			claimed: true, malformed: []string{dialect.ReasonInvalidCallID},
		},
		{name: "api_request is not a tool event", body: "claude_code.api_request", ts: ts, attrs: map[string]any{"event.name": "api_request"}},
		{name: "another agent's tool_result event", attrs: map[string]any{"event.name": "tool_result"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lr := plog.NewLogRecord()
			if tt.body != "" {
				lr.Body().SetStr(tt.body)
			}
			lr.SetEventName(tt.eventName)
			lr.SetTimestamp(0)
			if tt.ts != 0 {
				lr.SetTimestamp(pcommon.Timestamp(tt.ts))
			}
			assert.NoError(t, lr.Attributes().FromRaw(tt.attrs))
			var f dialect.Found
			assert.Equal(t, tt.claimed, ExtractLog(lr, &f))
			assert.Equal(t, tt.items, f.Items)
			assert.Equal(t, tt.malformed, f.Malformed)
		})
	}
}

// TestToolResultCancelled: a claude_code.tool_result event whose attributes say its call was
// cancelled (dialect.Cancelled; a log record has no status) is an abort.
func TestToolResultCancelled(t *testing.T) {
	for _, m := range dialecttest.Markers() {
		t.Run(m.Name, func(t *testing.T) {
			lr := plog.NewLogRecord()
			lr.Body().SetStr("claude_code.tool_result")
			lr.SetTimestamp(7)
			assert.NoError(t, lr.Attributes().FromRaw(map[string]any{"event.name": "tool_result", "tool_use_id": "toolu_1", "tool_name": "Bash"}))
			for k, v := range m.Attrs {
				assert.NoError(t, lr.Attributes().PutEmpty(k).FromRaw(v))
			}
			want := pairing.KindResult
			if m.Kind == pairing.KindAbort && len(m.Attrs) > 0 {
				want = pairing.KindAbort
			}
			var f dialect.Found
			assert.True(t, ExtractLog(lr, &f))
			assert.Equal(t, []dialect.Item{{Kind: want, CallID: "toolu_1", ToolName: "Bash", Time: 7}}, f.Items)
		})
	}
}
