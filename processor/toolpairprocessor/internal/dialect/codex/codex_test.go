// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package codex

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

func TestExtractLog(t *testing.T) {
	tests := []struct {
		name      string
		attrs     map[string]any
		claimed   bool
		items     []dialect.Item
		malformed []string
	}{
		{
			name:    "approved decision, time from observed",
			attrs:   map[string]any{"event.name": "codex.tool_decision", "call_id": "call_1", "tool_name": "exec_command", "decision": "approved"},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindUse, CallID: "call_1", ToolName: "exec_command", Time: 42, Step: "tool_decision"}},
		},
		{
			name:    "denied decision",
			attrs:   map[string]any{"event.name": "codex.tool_decision", "call_id": "call_2", "decision": "denied"},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindReject, CallID: "call_2", Time: 42}},
		},
		{
			name:    "abort decision",
			attrs:   map[string]any{"event.name": "codex.tool_decision", "call_id": "call_3", "decision": "abort"},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindReject, CallID: "call_3", Time: 42}},
		},
		{
			name:    "result",
			attrs:   map[string]any{"event.name": "codex.tool_result", "call_id": "call_1", "duration_ms": "49", "success": "true"},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindResult, CallID: "call_1", Time: 42}},
		},
		{name: "result without call_id", attrs: map[string]any{"event.name": "codex.tool_result"}, claimed: true, malformed: []string{dialect.ReasonMissingCallID}},
		{name: "result with a numeric call_id", attrs: map[string]any{"event.name": "codex.tool_result", "call_id": 5}, claimed: true, malformed: []string{dialect.ReasonInvalidCallID}},
		{
			name:    "api request: a step boundary",
			attrs:   map[string]any{"event.name": "codex.api_request", "endpoint": "/responses", "attempt": 0, "http.response.status_code": 200},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindBoundary, Time: 42, Step: "api_request"}},
		},
		{name: "no event name", attrs: map[string]any{"call_id": "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lr := plog.NewLogRecord()
			lr.Body().SetStr("event")
			lr.SetObservedTimestamp(42)
			assert.NoError(t, lr.Attributes().FromRaw(tt.attrs))
			var f dialect.Found
			assert.Equal(t, tt.claimed, ExtractLog(lr, &f))
			assert.Equal(t, tt.items, f.Items)
			assert.Equal(t, tt.malformed, f.Malformed)
		})
	}
}

// A turn's decisions and requests are grouped by its trace: a request closes only the calls of
// its own turn.
func TestStepsGroupedByTurn(t *testing.T) {
	trace := pcommon.TraceID{0x86, 0xaf}
	lr := plog.NewLogRecord()
	lr.SetObservedTimestamp(42)
	lr.SetTraceID(trace)
	lr.Attributes().PutStr("event.name", "codex.api_request")
	var f dialect.Found
	assert.True(t, ExtractLog(lr, &f))
	lr.Attributes().PutStr("event.name", "codex.tool_decision")
	lr.Attributes().PutStr("call_id", "call_1")
	assert.True(t, ExtractLog(lr, &f))
	assert.Equal(t, []dialect.Item{
		{Kind: pairing.KindBoundary, Time: 42, Step: pairing.GroupStep(trace.String(), "api_request")},
		{Kind: pairing.KindUse, CallID: "call_1", Time: 42, Step: pairing.GroupStep(trace.String(), "tool_decision")},
	}, f.Items)
}

// TestToolResultCancelled: a codex.tool_result event whose attributes say its call was
// cancelled (dialect.Cancelled; a log record has no status) is an abort.
func TestToolResultCancelled(t *testing.T) {
	for _, m := range dialecttest.Markers() {
		t.Run(m.Name, func(t *testing.T) {
			lr := plog.NewLogRecord()
			lr.SetObservedTimestamp(42)
			assert.NoError(t, lr.Attributes().FromRaw(map[string]any{"event.name": "codex.tool_result", "call_id": "call_1", "tool_name": "exec_command"}))
			for k, v := range m.Attrs {
				assert.NoError(t, lr.Attributes().PutEmpty(k).FromRaw(v))
			}
			want := pairing.KindResult
			if m.Kind == pairing.KindAbort && len(m.Attrs) > 0 {
				want = pairing.KindAbort
			}
			var f dialect.Found
			assert.True(t, ExtractLog(lr, &f))
			assert.Equal(t, []dialect.Item{{Kind: want, CallID: "call_1", ToolName: "exec_command", Time: 42}}, f.Items)
		})
	}
}
