// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package transcript

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

func TestExtractLogLines(t *testing.T) {
	ts := time.Date(2026, 2, 10, 21, 12, 1, 117e6, time.UTC).UnixNano()
	tests := []struct {
		name      string
		line      string
		claimed   bool
		items     []dialect.Item
		malformed []string
	}{
		{
			name:    "assistant tool_use line: a boundary of its message, then the use",
			line:    `{"type":"assistant","sessionId":"s1","timestamp":"2026-02-10T21:12:01.117Z","message":{"id":"msg_1","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]}}`,
			claimed: true,
			items: []dialect.Item{
				{Kind: pairing.KindBoundary, Time: ts, Conversation: "s1", ConversationAttr: ScopeAttr, Step: "msg_1"},
				{Kind: pairing.KindUse, CallID: "toolu_1", ToolName: "Bash", Time: ts, Conversation: "s1", ConversationAttr: ScopeAttr, Step: "msg_1"},
			},
		},
		{
			name:    "subagent tool_result line",
			line:    `{"type":"user","sessionId":"s1","agentId":"a7","isSidechain":true,"timestamp":"2026-02-10T21:12:01.117Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":"ok","is_error":false}]},"toolUseResult":{"durationMs":12}}`,
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindResult, CallID: "toolu_2", Time: ts, Conversation: "s1/a7", ConversationAttr: ScopeAttr}},
		},
		{
			name:    "assistant text line is only a boundary",
			line:    `{"type":"assistant","sessionId":"s1","timestamp":"2026-02-10T21:12:01.117Z","message":{"id":"msg_2","content":[{"type":"text","text":"hi"}]}}`,
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindBoundary, Time: ts, Conversation: "s1", ConversationAttr: ScopeAttr, Step: "msg_2"}},
		},
		{
			name:      "tool_result without an id",
			line:      `{"type":"user","sessionId":"s1","message":{"content":[{"type":"tool_result","content":"x"}]}}`,
			claimed:   true,
			malformed: []string{dialect.ReasonMissingCallID},
		},
		{
			name:      "tool_use with a numeric id",
			line:      `{"type":"assistant","sessionId":"s1","message":{"content":[{"type":"tool_use","id":7}]}}`,
			claimed:   true,
			malformed: []string{dialect.ReasonInvalidCallID},
		},
		{
			name:      "truncated line",
			line:      `{"type":"user","sessionId":"s1","message":{"content":[{"type":"tool_res`,
			claimed:   true,
			malformed: []string{dialect.ReasonInvalidJSON},
		},
		{name: "user prompt line (string content)", line: `{"type":"user","sessionId":"s1","message":{"role":"user","content":"hello"}}`},
		{name: "progress line", line: `{"type":"progress","sessionId":"s1","data":{}}`},
		{name: "not JSON", line: `2026-02-10 INFO something happened`},
		{name: "JSON without sessionId", line: `{"level":"info","msg":"x"}`},
		{name: "empty", line: ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lr := plog.NewLogRecord()
			lr.Body().SetStr(tt.line)
			var f dialect.Found
			assert.Equal(t, tt.claimed, ExtractLog(lr, &f))
			assert.Equal(t, tt.items, f.Items)
			assert.Equal(t, tt.malformed, f.Malformed)
		})
	}
}

func TestRecordTimestampWins(t *testing.T) {
	lr := plog.NewLogRecord()
	lr.SetTimestamp(123)
	lr.Body().SetStr(`{"type":"user","sessionId":"s","timestamp":"2026-02-10T21:12:01.117Z","message":{"content":[{"type":"tool_result","tool_use_id":"t"}]}}`)
	var f dialect.Found
	assert.True(t, ExtractLog(lr, &f))
	assert.Equal(t, int64(123), f.Items[0].Time)
}

func FuzzExtractLog(f *testing.F) {
	f.Add(`{"type":"assistant","sessionId":"s1","message":{"id":"m","content":[{"type":"tool_use","id":"toolu_1","name":"Bash"}]}}`)
	f.Add(`{"type":"user","sessionId":"s1","agentId":"a","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_1"}]}}`)
	f.Add(`{"sessionId":1,"message":[]}`)
	seedLines(f, "claude-code/short.jsonl", "pi/parallel.jsonl", "openclaw/interrupt_sigterm.jsonl")
	f.Fuzz(func(t *testing.T, line string) {
		lr := plog.NewLogRecord()
		lr.Body().SetStr(line)
		lr.Attributes().PutStr(AttrFilePath, "f.jsonl")
		var found dialect.Found
		ExtractLog(lr, &found)
		for _, it := range found.Items {
			if it.Kind != pairing.KindBoundary && it.CallID == "" {
				t.Fatalf("item without a call ID from %q", line)
			}
		}
	})
}
