// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package transcript

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// TestClaudeCodeLineRepeatedKeysLastWins: of a key repeated in a Claude Code line read as JSON
// text, at the top level, in message or in a content block, the last occurrence is read
// (specification section 2); the timeout classifier, which reads the first, is then told to read
// the line itself.
func TestClaudeCodeLineRepeatedKeysLastWins(t *testing.T) {
	tests := []struct {
		name     string
		line     string
		kind     pairing.Kind
		call     string
		tool     string
		scope    string
		step     string
		unreadOK bool // the line is told LineUnread
	}{
		{name: "block call ID", kind: pairing.KindResult, call: "toolu_2", scope: "s1",
			line: `{"type":"user","sessionId":"s1","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_1","tool_use_id":"toolu_2","content":"ok"}]}}`},
		{name: "block type", kind: pairing.KindResult, call: "toolu_1", scope: "s1", unreadOK: true,
			line: `{"type":"user","sessionId":"s1","message":{"content":[{"type":"text","type":"tool_result","tool_use_id":"toolu_1","content":"ok"}]}}`},
		{name: "tool name", kind: pairing.KindUse, call: "toolu_1", tool: "Read", scope: "s1", step: "m1",
			line: `{"type":"assistant","sessionId":"s1","message":{"id":"m1","content":[{"type":"tool_use","name":"Bash","id":"toolu_1","name":"Read"}]}}`},
		{name: "message content", kind: pairing.KindResult, call: "toolu_2", scope: "s1", unreadOK: true,
			line: `{"type":"user","sessionId":"s1","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_1"}],"content":[{"type":"tool_result","tool_use_id":"toolu_2"}]}}`},
		{name: "message id", kind: pairing.KindUse, call: "toolu_1", scope: "s1", step: "m2",
			line: `{"type":"assistant","sessionId":"s1","message":{"id":"m1","content":[{"type":"tool_use","id":"toolu_1"}],"id":"m2"}}`},
		{name: "sessionId", kind: pairing.KindResult, call: "toolu_1", scope: "s2",
			line: `{"type":"user","sessionId":"s1","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_1"}]},"sessionId":"s2"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lr := plog.NewLogRecord()
			lr.Body().SetStr(tt.line)
			var f dialect.Found
			require.True(t, ExtractLog(lr, &f))
			items := f.Items
			if tt.kind == pairing.KindUse {
				require.Len(t, items, 2)
				assert.Equal(t, pairing.KindBoundary, items[0].Kind)
				items = items[1:]
			}
			require.Len(t, items, 1)
			assert.Equal(t, tt.kind, items[0].Kind)
			assert.Equal(t, tt.call, items[0].CallID)
			assert.Equal(t, tt.tool, items[0].ToolName)
			assert.Equal(t, tt.scope, items[0].Conversation)
			assert.Equal(t, tt.step, items[0].Step)
			if tt.unreadOK {
				assert.Equal(t, dialect.LineUnread, f.Line)
			}
		})
	}
}
