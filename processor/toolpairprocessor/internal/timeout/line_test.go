// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package timeout

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/transcript"
)

// lineRecord is a transcript line as the filelog receiver hands it over: a string body, the
// file path attribute, no timestamp (the line's own time is then the record's).
func lineRecord(line string) plog.LogRecord {
	lr := plog.NewLogRecord()
	lr.Body().SetStr(line)
	lr.Attributes().PutStr(transcript.AttrFilePath, "/home/u/session.jsonl")
	return lr
}

// lineFacts is what the transcript dialect tells the classifier of lr.
func lineFacts(lr plog.LogRecord) dialect.Line {
	var f dialect.Found
	transcript.ExtractLog(lr, &f)
	return f.Line
}

// requireSameRecord checks that the classifier reads the same Record of lr with the dialect's
// facts as without them, and returns it with the facts.
func requireSameRecord(t *testing.T, n *Names, lr plog.LogRecord) (Record, dialect.Line) {
	t.Helper()
	line := lineFacts(lr)
	want := n.Log(lr)
	if got := n.LogLine(lr, line); got != want {
		t.Fatalf("facts %d: %+v, without them %+v: %.300s", line, got, want, lr.Body().AsString())
	}
	requireResultAgrees(t, want, resultOfLog(n, lr, line))
	if want.Timeout && want.Transcript && line == dialect.LineNoTimeout {
		t.Fatalf("a timeout line told LineNoTimeout: %.300s", lr.Body().AsString())
	}
	return want, line
}

// mapRecord is lineRecord with the line parsed into a map body (the filelog receiver's
// json_parser with parse_to: body), and false when the line is not a JSON object.
func mapRecord(line string) (plog.LogRecord, bool) {
	var raw map[string]any
	if json.Unmarshal([]byte(line), &raw) != nil || raw == nil {
		return plog.LogRecord{}, false
	}
	lr := lineRecord("")
	if lr.Body().SetEmptyMap().FromRaw(raw) != nil {
		return plog.LogRecord{}, false
	}
	return lr, true
}

// TestLogLineOnTranscripts: on every line of every real transcript of testdata (Claude Code
// sessions and their subagents, the Claude Code timeout and API error captures, pi, OpenClaw),
// the classifier reads the same Record with the transcript dialect's facts (dialect.Line) as
// without them, timeout lines included, and the facts spare it most Claude Code lines.
func TestLogLineOnTranscripts(t *testing.T) {
	n := defaultNames(t)
	root := filepath.Join("..", "..", "..", "..", "testdata")
	tests := []struct {
		file string
		// lines and timeouts count the file's lines and timeout lines; spared is the least
		// number of them the dialect tells LineNoTimeout.
		lines, timeouts, spared int
	}{
		{file: "transcripts/claude-code/258c7280-ae70-4798-800f-63464d01a85d.jsonl", lines: 1863, spared: 1856},
		{file: "transcripts/claude-code/258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-a881341.jsonl", lines: 10, spared: 10},
		{file: "transcripts/claude-code/258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-acompact-fffbd0.jsonl", lines: 4, spared: 4},
		{file: "transcripts/claude-code/4d5611e5-241a-462a-8d15-5122611a9569.jsonl", lines: 1512, spared: 1507},
		{file: "transcripts/claude-code/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl", lines: 144, spared: 136},
		{file: "transcripts/claude-code/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-acompact-e1f845.jsonl", lines: 5, spared: 5},
		{file: "transcripts/claude-code/short.jsonl", lines: 15, spared: 13},
		{file: "transcripts/claude-code/subagent.jsonl", lines: 96, spared: 96},
		{file: "transcripts/claude-code/tool_heavy.jsonl", lines: 39, spared: 39},
		{file: "claude/llm_error/transcript.jsonl", lines: 36, spared: 33},
		{file: "claude/tool_timeout_nobg/transcript.jsonl", lines: 31, timeouts: 1, spared: 30},
		{file: "transcripts/pi/interrupt_sigterm.jsonl", lines: 5, spared: 3},
		{file: "transcripts/pi/llm_error.jsonl", lines: 9, spared: 3},
		{file: "transcripts/pi/normal.jsonl", lines: 7, spared: 3},
		{file: "transcripts/pi/parallel.jsonl", lines: 8, spared: 3},
		{file: "transcripts/pi/tool_timeout.jsonl", lines: 7, timeouts: 1, spared: 3},
		{file: "transcripts/openclaw/interrupt_sigterm.jsonl", lines: 7, spared: 4},
		{file: "transcripts/openclaw/normal.jsonl", lines: 10, spared: 6},
		{file: "transcripts/openclaw/tool_timeout.jsonl", lines: 10, timeouts: 1, spared: 6},
	}
	// Every transcript of testdata is in the table.
	var files []string
	for _, dir := range []string{"transcripts", "claude"} {
		require.NoError(t, filepath.Walk(filepath.Join(root, dir), func(path string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() && filepath.Ext(path) == ".jsonl" {
				rel, err := filepath.Rel(root, path)
				files = append(files, filepath.ToSlash(rel))
				return err
			}
			return err
		}))
	}
	var listed []string
	for _, tt := range tests {
		listed = append(listed, tt.file)
	}
	require.ElementsMatch(t, files, listed)

	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			lines := readLines(t, filepath.Join(root, filepath.FromSlash(tt.file)))
			timeouts, spared, mapTimeouts, mapSpared := 0, 0, 0, 0
			for _, line := range lines {
				r, facts := requireSameRecord(t, n, lineRecord(line))
				if r.Timeout {
					timeouts++
				}
				if facts == dialect.LineNoTimeout {
					spared++
				}
				lr, ok := mapRecord(line)
				require.True(t, ok, line)
				r, facts = requireSameRecord(t, n, lr)
				if r.Timeout {
					mapTimeouts++
				}
				if facts == dialect.LineNoTimeout {
					mapSpared++
				}
			}
			t.Logf("%d lines, %d timeouts, %d spared; as maps %d timeouts, %d spared", len(lines), timeouts, spared, mapTimeouts, mapSpared)
			require.Len(t, lines, tt.lines)
			require.Equal(t, tt.timeouts, timeouts)
			require.GreaterOrEqual(t, spared, tt.spared)
			require.Equal(t, tt.timeouts, mapTimeouts)
			require.GreaterOrEqual(t, mapSpared, tt.spared)
		})
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, lines)
	return lines
}

// The pieces of crafted Claude Code lines: a tool_result block whose command timed out, and
// one that did not.
const (
	timedOutBlock = `{"type":"tool_result","tool_use_id":"toolu_1","is_error":true,"content":"Exit code 143\nCommand timed out after 2s"}`
	okBlock       = `{"type":"tool_result","tool_use_id":"toolu_1","content":"Command timed out after 2s"}`
	userTimedOut  = `"sessionId":"s","timestamp":"2026-02-12T20:23:38.286Z","message":{"role":"user","content":[` + timedOutBlock + `]}`
)

// logLineCases are crafted transcript lines with what the dialect tells of each and whether
// it is a timeout: the shapes of the real lines, and lines on which a reader that took the
// last of repeated keys, decoded no escapes, or skipped a value that is not JSON as jsonscan
// does, would read another line than the classifier's jsonparser.
var logLineCases = []struct {
	name    string
	line    string
	facts   dialect.Line
	timeout bool
}{
	{"progress", `{"type":"progress","sessionId":"s","data":{"type":"bash_progress","output":"timeout 5 sleep 9"},"timestamp":"2026-02-12T20:23:38.286Z"}`, dialect.LineNoTimeout, false},
	{"assistant Bash with a timeout input", `{"type":"assistant","sessionId":"s","message":{"id":"msg_1","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"make","timeout":120000}}]}}`, dialect.LineNoTimeout, false},
	{"user tool_result timed out", `{"type":"user",` + userTimedOut + `}`, dialect.LineMayTimeout, true},
	{"user tool_result timed out, text parts", `{"type":"user","sessionId":"s","message":{"content":[{"type":"tool_result","tool_use_id":"t","is_error":true,"content":[{"type":"text","text":"Command timed out after 2s"}]}]}}`, dialect.LineMayTimeout, true},
	{"user tool_result not an error", `{"type":"user","sessionId":"s","message":{"content":[` + okBlock + `]}}`, dialect.LineNoTimeout, false},
	{"user tool_result error, not a timeout", `{"type":"user","sessionId":"s","message":{"content":[{"type":"tool_result","tool_use_id":"t","is_error":true,"content":"Exit code 1\ntimeout: i/o"}]}}`, dialect.LineMayTimeout, false},
	{"user text", `{"type":"user","sessionId":"s","message":{"content":"why did it time out?"}}`, dialect.LineNoTimeout, false},
	{"user first is_error wins (repeated block keys: unread)", `{"type":"user","sessionId":"s","message":{"content":[{"type":"tool_result","tool_use_id":"t","is_error":true,"is_error":false,"content":"Command timed out"}]}}`, dialect.LineUnread, true},
	{"user first is_error false wins (repeated block keys: unread)", `{"type":"user","sessionId":"s","message":{"content":[{"type":"tool_result","tool_use_id":"t","is_error":false,"is_error":true,"content":"Command timed out"}]}}`, dialect.LineUnread, false},
	{"user first block type wins (repeated block keys: unread)", `{"type":"user","sessionId":"s","message":{"content":[{"type":"text","type":"tool_result","is_error":true,"content":"Command timed out"}]}}`, dialect.LineUnread, false},
	{"user escaped block type", `{"type":"user","sessionId":"s","message":{"content":[{"type":"tool_\u0072esult","tool_use_id":"t","is_error":true,"content":"Command timed out"}]}}`, dialect.LineMayTimeout, true},
	{"system api_error timeout", `{"type":"system","subtype":"api_error","sessionId":"s","timestamp":"2026-02-12T20:23:38.286Z","error":{"status":408,"message":"Request timed out."}}`, dialect.LineMayTimeout, true},
	{"system api_error overload", `{"type":"system","subtype":"api_error","sessionId":"s","error":{"status":529,"message":"Overloaded"}}`, dialect.LineMayTimeout, false},
	{"system first subtype wins", `{"type":"system","subtype":"api_error","subtype":"turn_duration","sessionId":"s","error":{"message":"Request timed out."}}`, dialect.LineMayTimeout, true},
	{"system api_error 504, no timeout text", `{"type":"system","subtype":"api_error","sessionId":"s","error":{"message":"Bad gateway","status":504}}`, dialect.LineMayTimeout, true},
	{"system other subtype", `{"type":"system","subtype":"turn_duration","sessionId":"s","error":{"message":"Request timed out."}}`, dialect.LineNoTimeout, false},
	{"assistant API error timeout", `{"type":"assistant","isApiErrorMessage":true,"sessionId":"s","message":{"id":"m","content":[{"type":"text","text":"API Error: Request timed out."}]}}`, dialect.LineMayTimeout, true},
	{"assistant first isApiErrorMessage wins", `{"type":"assistant","isApiErrorMessage":false,"isApiErrorMessage":true,"sessionId":"s","message":{"content":[{"type":"text","text":"API Error: Request timed out."}]}}`, dialect.LineNoTimeout, false},
	{"message entry with a sessionId", `{"type":"message","sessionId":"s","message":{"role":"assistant","stopReason":"error","errorMessage":"Request timed out"}}`, dialect.LineMayTimeout, true},
	{"repeated type, first is the classifier's", `{"type":"user","type":"progress",` + userTimedOut + `}`, dialect.LineUnread, true},
	{"repeated message", `{"type":"user",` + userTimedOut + `,"message":{"content":[]}}`, dialect.LineUnread, true},
	{"escaped type", `{"type":"us\u0065r",` + userTimedOut + `}`, dialect.LineUnread, true},
	{"escaped key", `{"typ\u0065":"user",` + userTimedOut + `}`, dialect.LineUnread, true},
	{"number with a member in it", `{"a":1"type":"user",` + userTimedOut + `,"type":"progress"}`, dialect.LineUnread, true},
	{"brackets that do not pair", `{"x":{"y":[}, "type":"user"],` + userTimedOut + `,"type":"progress"}`, dialect.LineUnread, true},
	{"nested deeper than 64", `{"x":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `,"type":"user",` + userTimedOut + `}`, dialect.LineUnread, true},
	{"a second object", `{"type":"progress","sessionId":"s"}{"type":"user",` + userTimedOut + `}`, dialect.LineUnread, false},
	{"invalid", `{"type":"user",` + userTimedOut, dialect.LineUnread, true},
	{"pi session header", `{"type":"session","version":3,"id":"x","timestamp":"2026-02-12T20:23:38.286Z","cwd":"/timeout"}`, dialect.LineNoTimeout, false},
	{"pi tool result timed out", `{"type":"message","id":"e","timestamp":"2026-02-12T20:23:38.286Z","message":{"role":"toolResult","toolCallId":"c","isError":true,"content":[{"type":"text","text":"Command timed out after 2 seconds"}],"timestamp":1800000000000}}`, dialect.LineMayTimeout, true},
	{"OpenClaw details.timedOut", `{"type":"message","id":"e","message":{"role":"toolResult","toolCallId":"c","details":{"timedOut":true}}}`, dialect.LineMayTimeout, true},
	{"no sessionId, Claude Code type", `{"type":"user","message":{"content":[` + timedOutBlock + `]}}`, dialect.LineUnread, true},
	{"no sessionId, escaped type", `{"type":"sess\u0069on","message":"timed out"}`, dialect.LineUnread, false},
	{"no type", `{"message":"timed out"}`, dialect.LineNoTimeout, false},
}

// TestLogLineCrafted: on each crafted line the dialect tells what the case says, and the
// classifier reads the same Record with and without it.
func TestLogLineCrafted(t *testing.T) {
	n := defaultNames(t)
	for _, tt := range logLineCases {
		t.Run(tt.name, func(t *testing.T) {
			r, facts := requireSameRecord(t, n, lineRecord(tt.line))
			require.Equal(t, tt.facts, facts)
			require.Equal(t, tt.timeout, r.Timeout)
		})
	}
}

// FuzzLogLine: on any line, as a string body and parsed into a map body, the classifier reads
// the same Record with the transcript dialect's facts as without them.
func FuzzLogLine(f *testing.F) {
	for _, tt := range logLineCases {
		f.Add(tt.line)
	}
	for _, file := range []string{"transcripts/claude-code/short.jsonl", "claude/tool_timeout_nobg/transcript.jsonl", "claude/llm_error/transcript.jsonl", "transcripts/openclaw/tool_timeout.jsonl"} {
		file, err := os.Open(filepath.Join("..", "..", "..", "..", "testdata", filepath.FromSlash(file)))
		if err != nil {
			f.Fatal(err)
		}
		sc := bufio.NewScanner(file)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			f.Add(sc.Text())
		}
		file.Close()
	}
	n, err := NewNames([]string{`^claude_code\.compaction$`}, []string{`^claude_code\.compaction$`})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line string) {
		lr := lineRecord(line)
		facts := lineFacts(lr)
		if want, got := n.Log(lr), n.LogLine(lr, facts); want != got {
			t.Fatalf("facts %d: %+v, without them %+v: %q", facts, got, want, line)
		}
		if lr, ok := mapRecord(line); ok {
			facts := lineFacts(lr)
			if want, got := n.Log(lr), n.LogLine(lr, facts); want != got {
				t.Fatalf("map body, facts %d: %+v, without them %+v: %q", facts, got, want, line)
			}
		}
	})
}

// TestLogLineMapRepeatedKeys: a map body may repeat a key (an OTLP kvlist is a list); the
// classifier reads its JSON text, where the last wins, and so does the dialect's telling.
func TestLogLineMapRepeatedKeys(t *testing.T) {
	n := defaultNames(t)
	str := func(k, v string) string { return `{"key":"` + k + `","value":{"stringValue":"` + v + `"}}` }
	kv := func(k, v string) string { return `{"key":"` + k + `","value":` + v + `}` }
	kvlist := func(kvs ...string) string { return `{"kvlistValue":{"values":[` + strings.Join(kvs, ",") + `]}}` }
	block := func(kvs ...string) string { return kvlist(kvs...) }
	timedOut := block(str("type", "tool_result"), str("tool_use_id", "t"), kv("is_error", `{"boolValue":true}`), str("content", "Command timed out after 2s"))
	for _, tt := range []struct {
		name    string
		body    string
		facts   dialect.Line
		timeout bool
	}{
		{"last type is user", kvlist(str("type", "progress"), str("sessionId", "s"), str("type", "user"), kv("message", kvlist(kv("content", `{"arrayValue":{"values":[`+timedOut+`]}}`)))), dialect.LineMayTimeout, true},
		{"last type is progress", kvlist(str("type", "user"), str("sessionId", "s"), str("type", "progress"), kv("message", kvlist(kv("content", `{"arrayValue":{"values":[`+timedOut+`]}}`)))), dialect.LineNoTimeout, false},
		{"last content", kvlist(str("type", "user"), str("sessionId", "s"), kv("message", kvlist(kv("content", `{"arrayValue":{"values":[]}}`), kv("content", `{"arrayValue":{"values":[`+timedOut+`]}}`)))), dialect.LineMayTimeout, true},
		{"last is_error", kvlist(str("type", "user"), str("sessionId", "s"), kv("message", kvlist(kv("content", `{"arrayValue":{"values":[`+block(str("type", "tool_result"), kv("is_error", `{"boolValue":true}`), kv("is_error", `{"boolValue":false}`), str("content", "Command timed out"))+`]}}`)))), dialect.LineNoTimeout, false},
		{"last subtype", kvlist(str("type", "system"), str("subtype", "turn_duration"), str("subtype", "api_error"), kv("error", kvlist(str("message", "Request timed out.")))), dialect.LineMayTimeout, true},
		{"is_error as a string", kvlist(str("type", "user"), kv("message", kvlist(kv("content", `{"arrayValue":{"values":[`+block(str("type", "tool_result"), str("is_error", "true"), str("content", "Command timed out"))+`]}}`)))), dialect.LineNoTimeout, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs([]byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":` + tt.body + `}]}]}]}`))
			require.NoError(t, err)
			lr := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
			require.Equal(t, pcommon.ValueTypeMap, lr.Body().Type())
			r, facts := requireSameRecord(t, n, lr)
			require.Equal(t, tt.facts, facts)
			require.Equal(t, tt.timeout, r.Timeout)
		})
	}
}
