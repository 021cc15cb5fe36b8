// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package transcript

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/plog"
)

func TestLineScope(t *testing.T) {
	tests := []struct {
		name        string
		body        any // string or map[string]any
		attrs       map[string]any
		attr, scope string
		ok          bool
	}{
		{name: "Claude Code user text line", body: `{"type":"user","sessionId":"s1","message":{"role":"user","content":"hi"}}`, attr: ScopeAttr, scope: "s1", ok: true},
		{name: "Claude Code subagent line", body: `{"type":"system","subtype":"api_error","sessionId":"s1","agentId":"a7"}`, attr: ScopeAttr, scope: "s1/a7", ok: true},
		{name: "Claude Code line as a map", body: map[string]any{"type": "user", "sessionId": "s1", "agentId": "a7"}, attr: ScopeAttr, scope: "s1/a7", ok: true},
		{
			name: "pi entry: its file", body: `{"type":"model_change","id":"x"}`,
			attrs: map[string]any{AttrFilePath: "/h/.pi/s.jsonl", AttrFileName: "s.jsonl"}, attr: AttrFilePath, scope: "/h/.pi/s.jsonl", ok: true,
		},
		{name: "pi entry: the file name without the path", body: `{"type":"session","id":"x"}`, attrs: map[string]any{AttrFileName: "s.jsonl"}, attr: AttrFileName, scope: "s.jsonl", ok: true},
		{name: "pi entry as a map", body: map[string]any{"type": "message"}, attrs: map[string]any{AttrFileName: "s.jsonl"}, attr: AttrFileName, scope: "s.jsonl", ok: true},
		{name: "pi entry with no file attribute", body: `{"type":"session","id":"x"}`},
		{name: "JSON without a type is no transcript line", body: `{"level":"info"}`, attrs: map[string]any{AttrFileName: "app.log"}},
		{name: "a type that is not a string", body: `{"type":3}`, attrs: map[string]any{AttrFileName: "app.log"}},
		{name: "not JSON", body: "claude_code.tool_result", attrs: map[string]any{AttrFileName: "app.log"}},
		{name: "truncated Claude Code line", body: `{"type":"user","sessionId":"s1","message":{`, attr: ScopeAttr, scope: "s1", ok: true},
		{name: "empty sessionId: read as pi", body: `{"type":"user","sessionId":""}`, attrs: map[string]any{AttrFileName: "f.jsonl"}, attr: AttrFileName, scope: "f.jsonl", ok: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lr := plog.NewLogRecord()
			switch b := tt.body.(type) {
			case string:
				lr.Body().SetStr(b)
			case map[string]any:
				assert.NoError(t, lr.Body().SetEmptyMap().FromRaw(b))
			}
			assert.NoError(t, lr.Attributes().FromRaw(tt.attrs))
			attr, scope, ok := LineConversation(lr)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.scope, scope)
			assert.Equal(t, tt.attr, attr)
		})
	}
}
