// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestClaudeCodeOTelAndTranscriptCountEachCallOnce runs one Claude Code session read both
// ways, as the shipped transcripts overlay does: its OTel log events and spans, and its
// transcript lines with the resource service.name the example configurations give them
// (examples/claude-transcripts.yaml, examples/scale-out/transcripts.yaml). The transcript line
// is one more source of the same call (specification section 2): each source's first record
// is marked, and the call is counted once over every record, in either order. Lines under
// another service.name are another tenant (section 1): the same call is then counted twice,
// which is why the examples set it.
func TestClaudeCodeOTelAndTranscriptCountEachCallOnce(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "claude", "tool_timeout_nobg")
	for _, tc := range []struct {
		name           string
		service        string
		transcriptLast bool
		counted        int64
	}{
		{name: "transcript first", service: "claude-code", counted: 1},
		{name: "OTel first", service: "claude-code", transcriptLast: true, counted: 1},
		{name: "lines of another tenant", service: "claude-transcripts", counted: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			td, err := golden.ReadTraces(filepath.Join(dir, "traces.json"))
			require.NoError(t, err)
			ld, err := golden.ReadLogs(filepath.Join(dir, "logs.json"))
			require.NoError(t, err)
			lines := transcriptBatches(t, filepath.Join(dir, "transcript.jsonl"))
			for _, b := range lines {
				b.ResourceLogs().At(0).Resource().Attributes().PutStr("service.name", tc.service)
			}
			b := newRig(t)
			if !tc.transcriptLast {
				for _, l := range lines {
					b.consumeBoth(ptrace.NewTraces(), l, true)
				}
			}
			b.consumeBoth(td, ld, true)
			if tc.transcriptLast {
				for _, l := range lines {
					b.consumeBoth(ptrace.NewTraces(), l, true)
				}
			}
			b.advance(11 * time.Minute)
			b.shutdown()

			counted := map[string]int64{}
			outcomes := map[string][]string{}
			note := func(attrs pcommon.Map, id, what string) {
				if c, ok := attrs.Get("toolpair.call.counted"); ok {
					counted[id] += c.Int()
				}
				if o, ok := attrs.Get("toolpair.outcome"); ok {
					outcomes[id] = append(outcomes[id], what+":"+o.Str())
				}
			}
			for _, s := range allSpans(mergedTraces(b)) {
				note(s.Attributes(), strAttr(s, "gen_ai.tool.call.id"), s.Name())
			}
			for _, lr := range allLogs(b.lsink) {
				id := logAttr(lr, "tool_use_id")
				what := logAttr(lr, "event.name")
				if id == "" && lr.Body().Type() == pcommon.ValueTypeStr && what == "" {
					id, what = transcriptResultID(lr), "line"
				}
				note(lr.Attributes(), id, what)
			}
			const call = "toolu_mock_tool_timeout_01"
			assert.Equal(t, map[string]int64{call: tc.counted}, counted, "outcomes: %v", outcomes)
			assert.Contains(t, outcomes[call], "line:paired", "the transcript's report")
			assert.Contains(t, outcomes[call], "tool_result:paired", "the OTel event's report")
		})
	}
}

// transcriptResultID returns the tool_use_id of the tool_result block of a Claude Code
// transcript line, "" when it holds none.
func transcriptResultID(lr plog.LogRecord) string {
	var l struct {
		Message struct {
			Content []struct {
				Type      string `json:"type"`
				ToolUseID string `json:"tool_use_id"`
			} `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal([]byte(lr.Body().Str()), &l) != nil {
		return ""
	}
	for _, c := range l.Message.Content {
		if c.Type == "tool_result" {
			return c.ToolUseID
		}
	}
	return ""
}
