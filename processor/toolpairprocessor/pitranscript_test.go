// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"bufio"
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

// piTruth reads a pi/OpenClaw session file with encoding/json: the ms timestamp of the
// assistant message announcing each call, and of each call's toolResult.
func piTruth(t *testing.T, path string) (uses, results map[string]int64) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	uses, results = map[string]int64{}, map[string]int64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 32<<20)
	for sc.Scan() {
		var e struct {
			Type    string `json:"type"`
			Message struct {
				Role       string          `json:"role"`
				ToolCallID string          `json:"toolCallId"`
				Timestamp  int64           `json:"timestamp"`
				Content    json.RawMessage `json:"content"`
			} `json:"message"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e))
		if e.Type != "message" {
			continue
		}
		switch e.Message.Role {
		case "assistant":
			var blocks []struct {
				Type string `json:"type"`
				ID   string `json:"id"`
			}
			require.NoError(t, json.Unmarshal(e.Message.Content, &blocks))
			for _, c := range blocks {
				if c.Type == "toolCall" {
					uses[c.ID] = e.Message.Timestamp
				}
			}
		case "toolResult":
			results[e.Message.ToolCallID] = e.Message.Timestamp
		}
	}
	require.NoError(t, sc.Err())
	return uses, results
}

// TestPiAndOpenClawTranscripts runs the real pi and OpenClaw session files, one line per log
// record keyed by log.file.path as the filelog receiver gives them: every real result is
// paired, with OpenClaw's own details.durationMs as its duration (pi states none: the time
// from its assistant message's timestamp) and that time as its elapsed time; OpenClaw's synthetic
// result of the interrupted call is marked interrupted/aborted and gets no synthetic record;
// pi's interrupted call, which has no result line at all, gets one synthetic record.
func TestPiAndOpenClawTranscripts(t *testing.T) {
	for _, tc := range []struct {
		file        string
		aborted     []string // calls whose result line is OpenClaw's synthetic repair
		interrupted []string // calls with no result line
	}{
		{file: "pi/normal.jsonl"},
		{file: "pi/parallel.jsonl"},
		{file: "pi/tool_timeout.jsonl"},
		{file: "pi/llm_error.jsonl"},
		{file: "pi/interrupt_sigterm.jsonl", interrupted: []string{"toolu_mock_interrupt_01"}},
		{file: "openclaw/normal.jsonl"},
		{file: "openclaw/tool_timeout.jsonl"},
		{file: "openclaw/interrupt_sigterm.jsonl", aborted: []string{"toolu_mock_interrupt_01"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("..", "..", "testdata", "transcripts", tc.file)
			uses, results := piTruth(t, path)
			require.NotEmpty(t, uses)
			b := newRig(t)
			n := 0
			for _, ld := range transcriptBatches(t, path) {
				n += ld.LogRecordCount()
				require.NoError(t, b.logs.ConsumeLogs(context.Background(), ld))
			}
			b.advance(11 * time.Minute)
			b.shutdown()
			logs := allLogs(b.lsink)
			synthetic := syntheticLogs(b)
			require.Len(t, logs, n+len(tc.interrupted), "nothing dropped; one synthetic record per call without a result")
			got := map[string]string{}
			for _, lr := range logs {
				if lr.Body().Type() != 0 && logAttr(lr, "toolpair.synthetic") == "" {
					var e struct {
						Message struct {
							Role       string `json:"role"`
							ToolCallID string `json:"toolCallId"`
							Details    struct {
								DurationMs *int64 `json:"durationMs"`
							} `json:"details"`
						} `json:"message"`
					}
					if json.Unmarshal([]byte(lr.Body().Str()), &e) != nil || e.Message.Role != "toolResult" {
						continue
					}
					id := e.Message.ToolCallID
					got[id] = logAttr(lr, "toolpair.outcome") + "/" + logAttr(lr, "toolpair.interrupt.reason")
					if got[id] == "paired/" {
						d, ok := lr.Attributes().Get("toolpair.call.duration_ms")
						require.True(t, ok)
						assert.Equal(t, results[id]-uses[id], elapsedMsOf(lr.Attributes()), id)
						if own := e.Message.Details.DurationMs; own != nil {
							assert.Equal(t, *own, d.Int(), "%s: OpenClaw's own details.durationMs", id)
						} else {
							assert.Equal(t, results[id]-uses[id], d.Int(), "%s: pi states no run time", id)
						}
					}
				}
			}
			want := map[string]string{}
			for id := range results {
				want[id] = "paired/"
			}
			for _, id := range tc.aborted {
				want[id] = "interrupted/aborted"
			}
			assert.Equal(t, want, got)
			var syntheticIDs []string
			for _, lr := range synthetic {
				syntheticIDs = append(syntheticIDs, logAttr(lr, "gen_ai.tool.call.id"))
				assert.Equal(t, path, logAttr(lr, "log.file.path"), "the scope attribute that keyed the call")
			}
			assert.ElementsMatch(t, tc.interrupted, syntheticIDs)
		})
	}
}

// TestPiMissingResultIsClosedAtTheNextStep removes the result line of a real pi session:
// the next assistant entry (the model's final answer) is a step boundary that interrupts the
// call, ending at that entry's time, before pairing_timeout.
func TestPiMissingResultIsClosedAtTheNextStep(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "transcripts", "pi", "normal.jsonl")
	var kept []plog.Logs
	for _, ld := range transcriptBatches(t, path) {
		ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().RemoveIf(func(lr plog.LogRecord) bool {
			var e struct {
				Message struct {
					Role string `json:"role"`
				} `json:"message"`
			}
			return json.Unmarshal([]byte(lr.Body().Str()), &e) == nil && e.Message.Role == "toolResult"
		})
		kept = append(kept, ld)
	}
	b := newRig(t)
	for _, ld := range kept {
		require.NoError(t, b.logs.ConsumeLogs(context.Background(), ld))
	}
	b.advance(time.Minute)
	synthetic := syntheticLogs(b)
	require.Len(t, synthetic, 1)
	assert.Equal(t, "next_step", logAttr(synthetic[0], "toolpair.interrupt.reason"))
	// The final assistant message's timestamp (ms) in normal.jsonl.
	assert.Equal(t, time.UnixMilli(1795326787630).UTC(), synthetic[0].Timestamp().AsTime())
}
