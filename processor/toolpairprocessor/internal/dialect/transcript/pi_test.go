// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package transcript

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

const testFile = "/home/u/.pi/agent/sessions/--w--/2026-11-22T05-53-07_01a2.jsonl"

func TestExtractPiLines(t *testing.T) {
	const ms = int64(1795326787544)
	at := ms * 1e6
	item := func(kind pairing.Kind, id, name, step string) dialect.Item {
		return dialect.Item{Kind: kind, CallID: id, ToolName: name, Time: at, Conversation: testFile, ConversationAttr: AttrFilePath, Step: step}
	}
	tests := []struct {
		name      string
		line      string
		claimed   bool
		items     []dialect.Item
		malformed []string
	}{
		{
			name:    "assistant entry with a toolCall: a boundary of its entry, then the use",
			line:    `{"type":"message","id":"787f6464","parentId":"96cdacfa","timestamp":"2026-11-22T05:53:07.619Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"},{"type":"toolCall","id":"toolu_1","name":"bash","arguments":{"command":"echo hello"}}],"stopReason":"toolUse","timestamp":1795326787544}}`,
			claimed: true,
			items:   []dialect.Item{item(pairing.KindBoundary, "", "", "787f6464"), item(pairing.KindUse, "toolu_1", "bash", "787f6464")},
		},
		{
			name:    "toolResult",
			line:    `{"type":"message","id":"29a2593f","timestamp":"2026-11-22T05:53:07.629Z","message":{"role":"toolResult","toolCallId":"toolu_1","toolName":"bash","content":[{"type":"text","text":"hello\n"}],"isError":false,"timestamp":1795326787544}}`,
			claimed: true,
			items:   []dialect.Item{item(pairing.KindResult, "toolu_1", "", "")},
		},
		{
			name:    "OpenClaw synthetic repair result: an abort",
			line:    `{"type":"message","id":"a26f","timestamp":"2026-11-22T05:55:41.337Z","message":{"role":"toolResult","toolCallId":"toolu_2","toolName":"exec","content":[{"type":"text","text":"[openclaw] missing tool result in session history; inserted synthetic error result for transcript repair."}],"details":{"openclawSyntheticMissingToolResult":true,"reason":"missing_tool_result"},"isError":true,"timestamp":1795326787544}}`,
			claimed: true,
			items:   []dialect.Item{item(pairing.KindAbort, "toolu_2", "", "")},
		},
		{
			name:    "assistant error entry without content: only a boundary",
			line:    `{"type":"message","id":"e1","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"Request timed out.","timestamp":1795326787544}}`,
			claimed: true,
			items:   []dialect.Item{item(pairing.KindBoundary, "", "", "e1")},
		},
		{
			name:      "toolResult without toolCallId",
			line:      `{"type":"message","id":"x","message":{"role":"toolResult","timestamp":1795326787544}}`,
			claimed:   true,
			malformed: []string{dialect.ReasonMissingCallID},
		},
		{
			name:      "toolResult with a numeric toolCallId",
			line:      `{"type":"message","id":"x","message":{"role":"toolResult","toolCallId":12,"timestamp":1795326787544}}`,
			claimed:   true,
			malformed: []string{dialect.ReasonInvalidCallID},
		},
		{
			name:      "toolCall with a numeric id",
			line:      `{"type":"message","id":"x","message":{"role":"assistant","content":[{"type":"toolCall","id":3}],"timestamp":1795326787544}}`,
			claimed:   true,
			items:     []dialect.Item{item(pairing.KindBoundary, "", "", "x")},
			malformed: []string{dialect.ReasonInvalidCallID},
		},
		{
			name:      "truncated entry",
			line:      `{"type":"message","id":"x","message":{"role":"toolResult","toolCallId":"toolu_1","content":[{"type":"te`,
			claimed:   true,
			malformed: []string{dialect.ReasonInvalidJSON},
		},
		{name: "session header", line: `{"type":"session","version":3,"id":"01a2","timestamp":"2026-11-22T05:53:07.468Z","cwd":"/w"}`},
		{name: "user message", line: `{"type":"message","id":"u","message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1}}`},
		{name: "OpenClaw custom entry with a nested sessionId", line: `{"type":"custom","customType":"openclaw:bootstrap-context:full","data":{"sessionId":"s"},"id":"c"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lr := plog.NewLogRecord()
			lr.Body().SetStr(tt.line)
			lr.Attributes().PutStr(AttrFilePath, testFile)
			var f dialect.Found
			assert.Equal(t, tt.claimed, ExtractLog(lr, &f))
			assert.Equal(t, tt.items, f.Items)
			assert.Equal(t, tt.malformed, f.Malformed)

			// The same line parsed into a map body (filelog's json_parser into the body)
			// gives the same items, when it is valid JSON.
			var raw map[string]any
			if json.Unmarshal([]byte(tt.line), &raw) != nil {
				return
			}
			lr = plog.NewLogRecord()
			require.NoError(t, lr.Body().SetEmptyMap().FromRaw(raw))
			lr.Attributes().PutStr(AttrFilePath, testFile)
			var fm dialect.Found
			assert.Equal(t, tt.claimed, ExtractLog(lr, &fm), "map body")
			assert.Equal(t, tt.items, fm.Items, "map body")
			assert.Equal(t, tt.malformed, fm.Malformed, "map body")
		})
	}
}

func TestPiScopeAndTime(t *testing.T) {
	line := `{"type":"message","id":"r","timestamp":"2026-11-22T05:53:07.629Z","message":{"role":"toolResult","toolCallId":"t"}}`
	lr := plog.NewLogRecord()
	lr.Body().SetStr(line)
	lr.Attributes().PutStr(AttrFileName, "s.jsonl")
	var f dialect.Found
	require.True(t, ExtractLog(lr, &f))
	assert.Equal(t, AttrFileName, f.Items[0].ConversationAttr, "log.file.name when there is no path")
	assert.Equal(t, "s.jsonl", f.Items[0].Conversation)
	assert.Equal(t, int64(1795326787629)*1e6, f.Items[0].Time, "the entry's ISO time without a message timestamp")

	lr = plog.NewLogRecord()
	lr.Body().SetStr(line)
	f.Reset()
	require.True(t, ExtractLog(lr, &f))
	assert.Empty(t, f.Items[0].Conversation, "no file attribute: keyed by scope_attributes")
}

func TestClaudeInterruptMarker(t *testing.T) {
	for _, tt := range []struct {
		name, content string
		want          pairing.Kind
	}{
		{"string content", `"[Request interrupted by user for tool use]"`, pairing.KindAbort},
		{"text blocks", `[{"type":"text","text":"[Request interrupted by user]"}]`, pairing.KindAbort},
		{"a refusal stays a result", `"The user doesn't want to proceed with this tool use."`, pairing.KindResult},
		{"marker not at the start", `"ok [Request interrupted by user"`, pairing.KindResult},
	} {
		t.Run(tt.name, func(t *testing.T) {
			line := `{"type":"user","sessionId":"s1","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_1","is_error":true,"content":` + tt.content + `}]}}`
			lr := plog.NewLogRecord()
			lr.Body().SetStr(line)
			var f dialect.Found
			require.True(t, ExtractLog(lr, &f))
			require.Len(t, f.Items, 1)
			assert.Equal(t, tt.want, f.Items[0].Kind)

			var raw map[string]any
			require.NoError(t, json.Unmarshal([]byte(line), &raw))
			lr = plog.NewLogRecord()
			require.NoError(t, lr.Body().SetEmptyMap().FromRaw(raw))
			f.Reset()
			require.True(t, ExtractLog(lr, &f))
			require.Len(t, f.Items, 1)
			assert.Equal(t, tt.want, f.Items[0].Kind, "map body")
		})
	}
}

// seedLines adds every line of the testdata transcripts named to a fuzz corpus.
func seedLines(f *testing.F, files ...string) {
	for _, name := range files {
		file, err := os.Open(filepath.Join("..", "..", "..", "..", "..", "testdata", "transcripts", name))
		if err != nil {
			f.Fatal(err)
		}
		sc := bufio.NewScanner(file)
		sc.Buffer(make([]byte, 1<<20), 32<<20)
		for sc.Scan() {
			f.Add(sc.Text())
		}
		file.Close()
	}
}
