// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
)

// transcriptFiles lists the Claude Code transcripts of testdata with their subagent files.
func transcriptFiles(t *testing.T) []string {
	t.Helper()
	dir := filepath.Join("..", "..", "testdata", "transcripts", "claude-code")
	top, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	require.NoError(t, err)
	sub, err := filepath.Glob(filepath.Join(dir, "*", "subagents", "*.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, sub)
	return append(top, sub...)
}

// transcriptBatches turns a transcript file into log batches of 50 lines, the body of each
// record being the line, as the filelog receiver makes them.
func transcriptBatches(t *testing.T, path string) []plog.Logs {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []plog.Logs
	var ld plog.Logs
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 32<<20)
	for sc.Scan() {
		if ld == (plog.Logs{}) || ld.LogRecordCount() == 50 {
			ld = plog.NewLogs()
			rl := ld.ResourceLogs().AppendEmpty()
			rl.Resource().Attributes().PutStr("service.name", "claude-transcripts")
			rl.ScopeLogs().AppendEmpty()
			out = append(out, ld)
		}
		lr := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().AppendEmpty()
		lr.Body().SetStr(sc.Text())
		lr.Attributes().PutStr("log.file.path", path)
		lr.SetObservedTimestamp(1)
	}
	require.NoError(t, sc.Err())
	return out
}

type transcriptCall struct {
	useTime, resultTime time.Time
}

// transcriptTruth reads the transcripts with encoding/json: every call's use and result
// line times, by session/agent scope and ID.
func transcriptTruth(t *testing.T, files []string) map[string]*transcriptCall {
	t.Helper()
	calls := map[string]*transcriptCall{}
	for _, path := range files {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 1<<20), 32<<20)
		for sc.Scan() {
			var l struct {
				Type      string    `json:"type"`
				SessionID string    `json:"sessionId"`
				AgentID   string    `json:"agentId"`
				Timestamp time.Time `json:"timestamp"`
				Message   struct {
					Content json.RawMessage `json:"content"`
				} `json:"message"`
			}
			require.NoError(t, json.Unmarshal(sc.Bytes(), &l))
			var blocks []struct {
				Type      string `json:"type"`
				ID        string `json:"id"`
				ToolUseID string `json:"tool_use_id"`
			}
			if json.Unmarshal(l.Message.Content, &blocks) != nil {
				continue
			}
			for _, b := range blocks {
				key := l.SessionID + "/" + l.AgentID + "/"
				switch b.Type {
				case "tool_use":
					c := calls[key+b.ID]
					if c == nil {
						c = &transcriptCall{}
						calls[key+b.ID] = c
					}
					c.useTime = l.Timestamp
				case "tool_result":
					c := calls[key+b.ToolUseID]
					if c == nil {
						c = &transcriptCall{}
						calls[key+b.ToolUseID] = c
					}
					c.resultTime = l.Timestamp
				}
			}
		}
	}
	return calls
}

func TestClaudeCodeTranscriptsAllPaired(t *testing.T) {
	files := transcriptFiles(t)
	truth := transcriptTruth(t, files)
	require.Len(t, truth, 395, "the corpus README's count")

	b := newRig(t)
	in := 0
	for _, path := range files {
		for _, ld := range transcriptBatches(t, path) {
			in += ld.LogRecordCount()
			require.NoError(t, b.logs.ConsumeLogs(context.Background(), ld))
		}
	}
	b.advance(time.Minute) // past orphan_grace: nothing may still be held
	b.shutdown()
	logs := allLogs(b.lsink)
	assert.Len(t, logs, in, "nothing dropped, nothing synthesised")

	paired := 0
	for _, lr := range logs {
		outcome := logAttr(lr, "toolpair.outcome")
		if outcome == "" {
			continue
		}
		require.Equal(t, "paired", outcome, lr.Body().Str())
		var l struct {
			SessionID string `json:"sessionId"`
			AgentID   string `json:"agentId"`
			Message   struct {
				Content []struct {
					ToolUseID string `json:"tool_use_id"`
				} `json:"content"`
			} `json:"message"`
			ToolUseResult json.RawMessage `json:"toolUseResult"`
		}
		require.NoError(t, json.Unmarshal([]byte(lr.Body().Str()), &l))
		require.Len(t, l.Message.Content, 1, "Claude Code writes one block per line")
		c := truth[l.SessionID+"/"+l.AgentID+"/"+l.Message.Content[0].ToolUseID]
		require.NotNil(t, c)
		elapsed := roundedMs(int64(c.resultTime.Sub(c.useTime)))
		assert.Equal(t, elapsed, elapsedMsOf(lr.Attributes()))
		var own struct {
			DurationMs *int64 `json:"durationMs"`
		}
		_ = json.Unmarshal(l.ToolUseResult, &own) // a string or absent: no run time stated
		d, _ := lr.Attributes().Get("toolpair.call.duration_ms")
		if own.DurationMs != nil {
			assert.Equal(t, *own.DurationMs, d.Int(), "Claude Code's own toolUseResult.durationMs")
		} else {
			assert.Equal(t, elapsed, d.Int())
		}
		paired++
	}
	assert.Equal(t, 395, paired)
	s := b.stats()
	assert.Equal(t, uint64(395), s.Paired)
	assert.Zero(t, s.InterruptedTotal())
	assert.Zero(t, s.Orphan+s.Standalone+s.Duplicate)
}

// TestTranscriptMissingResultIsClosedAtTheNextStep removes one mid-history tool_result line
// from a real transcript: that call is interrupted with reason next_step, ending at the next
// assistant message of its scope, and every other call stays paired.
func TestTranscriptMissingResultIsClosedAtTheNextStep(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "transcripts", "claude-code", "4d5611e5-241a-462a-8d15-5122611a9569.jsonl")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))

	type parsed struct {
		Type      string    `json:"type"`
		Timestamp time.Time `json:"timestamp"`
		Message   struct {
			ID      string `json:"id"`
			Content []struct {
				Type      string `json:"type"`
				ID        string `json:"id"`
				ToolUseID string `json:"tool_use_id"`
			} `json:"content"`
		} `json:"message"`
	}
	parse := func(l []byte) parsed {
		var p parsed
		_ = json.Unmarshal(l, &p) // content may be a string: then Content stays empty
		return p
	}
	// The 40th tool_result line goes missing.
	var victim string
	cut, seen := -1, 0
	for i, l := range lines {
		p := parse(l)
		if p.Type == "user" && len(p.Message.Content) == 1 && p.Message.Content[0].Type == "tool_result" {
			if seen++; seen == 40 {
				cut, victim = i, p.Message.Content[0].ToolUseID
				break
			}
		}
	}
	require.NotEqual(t, -1, cut)
	// Where the call should be closed: the first assistant line after its tool_use with a
	// message.id other than the tool_use's.
	var useMsg string
	var wantEnd time.Time
	for _, l := range lines {
		p := parse(l)
		if p.Type != "assistant" {
			continue
		}
		if useMsg == "" {
			for _, c := range p.Message.Content {
				if c.Type == "tool_use" && c.ID == victim {
					useMsg = p.Message.ID
				}
			}
			continue
		}
		if p.Message.ID != useMsg {
			wantEnd = p.Timestamp
			break
		}
	}
	require.False(t, wantEnd.IsZero())

	faulty := append(append([][]byte{}, lines[:cut]...), lines[cut+1:]...)
	dir := t.TempDir()
	faultyPath := filepath.Join(dir, "session.jsonl")
	require.NoError(t, os.WriteFile(faultyPath, append(bytes.Join(faulty, []byte("\n")), '\n'), 0o600))

	b := newRig(t)
	for _, ld := range transcriptBatches(t, faultyPath) {
		require.NoError(t, b.logs.ConsumeLogs(context.Background(), ld))
	}
	b.shutdown()
	var synthetic []plog.LogRecord
	outcomes := map[string]int{}
	for _, lr := range allLogs(b.lsink) {
		if lr.EventName() == "toolpair.tool_call.interrupted" {
			synthetic = append(synthetic, lr)
			continue
		}
		if o := logAttr(lr, "toolpair.outcome"); o != "" {
			outcomes[o]++
		}
	}
	require.Len(t, synthetic, 1)
	assert.Equal(t, victim, logAttr(synthetic[0], "gen_ai.tool.call.id"))
	assert.Equal(t, "next_step", logAttr(synthetic[0], "toolpair.interrupt.reason"))
	assert.Equal(t, wantEnd.UnixNano(), int64(synthetic[0].Timestamp()), "closed in place, at the next message")
	assert.Equal(t, map[string]int{"paired": transcriptResults(t, faulty)}, outcomes, "every later call stays paired")
}

// transcriptResults counts the tool_result blocks of the user lines of a transcript.
func transcriptResults(t *testing.T, lines [][]byte) int {
	t.Helper()
	n := 0
	for _, l := range lines {
		var p struct {
			Type    string `json:"type"`
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		require.NoError(t, json.Unmarshal(l, &p))
		var blocks []struct {
			Type string `json:"type"`
		}
		if p.Type != "user" || json.Unmarshal(p.Message.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				n++
			}
		}
	}
	return n
}

// transcriptLine builds a log batch holding one transcript line given as a map body.
func transcriptLine(typ, msgID string, blocks ...map[string]any) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "t")
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	content := make([]any, len(blocks))
	for i, b := range blocks {
		content[i] = b
	}
	msg := map[string]any{"role": typ, "content": content}
	if msgID != "" {
		msg["id"] = msgID
	}
	if err := lr.Body().SetEmptyMap().FromRaw(map[string]any{
		"type": typ, "sessionId": "sess", "timestamp": "2026-02-10T21:12:02.480Z", "message": msg,
	}); err != nil {
		panic(err)
	}
	return ld
}

// TestRecordWithSeveralResultsIsNeverHeldOrDuplicated: a transcript line holding the results
// of two calls never announced passes once, marked standalone, rather than being held and
// released once per call.
func TestRecordWithSeveralResultsIsNeverHeldOrDuplicated(t *testing.T) {
	b := newRig(t)
	two := transcriptLine("user", "",
		map[string]any{"type": "tool_result", "tool_use_id": "a"},
		map[string]any{"type": "tool_result", "tool_use_id": "b"})
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), two))
	b.shutdown()
	logs := allLogs(b.lsink)
	require.Len(t, logs, 1, "passed once, not held and released per call")
	assert.Equal(t, "standalone", logAttr(logs[0], "toolpair.outcome"))
}

// TestRecordWithAPairedAndADuplicateResultIsKept: a transcript line that repeats an answered
// call's result and resolves another call is kept, whatever the repeated result says.
func TestRecordWithAPairedAndADuplicateResultIsKept(t *testing.T) {
	b := newRig(t)
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), transcriptLine("assistant", "m1",
		map[string]any{"type": "tool_use", "id": "a", "name": "Bash"},
		map[string]any{"type": "tool_use", "id": "b", "name": "Bash"})))
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), transcriptLine("user", "",
		map[string]any{"type": "tool_result", "tool_use_id": "a"})))
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), transcriptLine("user", "",
		map[string]any{"type": "tool_result", "tool_use_id": "a"},
		map[string]any{"type": "tool_result", "tool_use_id": "b"})))
	b.shutdown()
	assert.Len(t, allLogs(b.lsink), 3, "the line resolving b is kept although it repeats a")
}
