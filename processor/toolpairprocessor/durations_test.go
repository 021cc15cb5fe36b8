// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
)

// runSource says where a result record's toolpair.call.duration_ms comes from (specification
// section 3).
type runSource uint8

const (
	// fromField: the agent's own duration_ms attribute (an int or a decimal string).
	fromField runSource = iota + 1
	// fromSpan: the result span's own length, rounded to the nearest ms.
	fromSpan
	// fromLine: the durationMs a transcript line states (Claude Code's toolUseResult,
	// OpenClaw's message.details), else the elapsed time.
	fromLine
	// fromElapsed: the record states no run time (a history echo, an event without a duration):
	// the elapsed time, and no toolpair.call.elapsed_ms.
	fromElapsed
)

// TestDurationsAgreeWithTheAgents is the duration rule's table test (specification section 3)
// over the real captures of every dialect whose records state a run time: each paired result
// record's toolpair.call.duration_ms equals the agent's own duration field, else its span's
// length, else the elapsed time, per the source its dialect's page gives
// (docs/dialects/README.md#durations); where a span states both, its own field and its length
// agree within the agent's rounding (1 ms). Every record kind the table names is seen.
func TestDurationsAgreeWithTheAgents(t *testing.T) {
	for _, tc := range []struct {
		name string
		// dir holds traces.json and logs.json (either may be missing); transcripts are JSONL
		// files read one line per record instead.
		dir         string
		transcripts []string
		// sources maps a result record's name (span name, event name, "line") to its source.
		sources map[string]runSource
	}{
		{name: "claude_code", dir: "claude/normal", sources: map[string]runSource{
			"claude_code.tool": fromField, "claude_code.tool.execution": fromField, "tool_result": fromField,
		}},
		{name: "claude_code parallel", dir: "claude/parallel", sources: map[string]runSource{
			"claude_code.tool": fromField, "claude_code.tool.execution": fromField, "tool_result": fromField,
		}},
		{name: "codex", dir: "codex/normal", sources: map[string]runSource{
			"codex.tool_result": fromField, "exec_command": fromSpan,
		}},
		{name: "gemini_cli", dir: "gemini/normal", sources: map[string]runSource{
			"tool_call": fromSpan, "llm_call": fromElapsed, "gen_ai.client.inference.operation.details": fromElapsed,
		}},
		{name: "qwen code", dir: "qwen/normal", sources: map[string]runSource{
			"qwen-code.tool": fromField, "qwen-code.tool.execution": fromField, "qwen-code.tool_call": fromField,
			"qwen-code.llm_request": fromElapsed,
		}},
		{name: "genai (AI SDK 7)", dir: "aisdk/normal", sources: map[string]runSource{"execute_tool run_shell": fromSpan, "chat gpt-4.1-mini": fromElapsed}},
		{name: "genai (Copilot CLI)", dir: "copilot/normal", sources: map[string]runSource{"execute_tool bash bash": fromSpan, "chat gpt-4.1": fromElapsed}},
		{name: "ai_sdk", dir: "aisdk6/normal", sources: map[string]runSource{"ai.toolCall": fromSpan}},
		{name: "openinference", dir: "agents/normal", sources: map[string]runSource{"run_shell": fromSpan, "response": fromElapsed}},
		{name: "openllmetry", dir: "openllmetry/normal", sources: map[string]runSource{"run_shell.tool": fromSpan, "chat gpt-4.1-mini": fromElapsed}},
		{name: "genai (Strands Agents)", dir: "strands/normal", sources: map[string]runSource{"execute_tool run_shell": fromSpan}},
		{name: "genai (Mastra)", dir: "mastra/normal", sources: map[string]runSource{"execute_tool run_shell": fromSpan}},
		{name: "voltagent", dir: "voltagent/normal", sources: map[string]runSource{"tool.execution:run_shell": fromSpan, "agent.step.tool_result": fromElapsed}},
		{name: "adk", dir: "adk/normal", sources: map[string]runSource{"execute_tool run_shell": fromSpan}},
		{name: "openinference (LangGraph.js)", dir: "langgraph/normal", sources: map[string]runSource{"run_shell": fromSpan}},
		{name: "transcript (OpenClaw)", transcripts: []string{"openclaw/normal.jsonl", "openclaw/tool_timeout.jsonl"}, sources: map[string]runSource{"line": fromLine}},
		{name: "transcript (pi)", transcripts: []string{"pi/normal.jsonl", "pi/parallel.jsonl"}, sources: map[string]runSource{"line": fromLine}},
		{name: "transcript (Claude Code)", transcripts: []string{
			"claude-code/258c7280-ae70-4798-800f-63464d01a85d.jsonl", "claude-code/4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
		}, sources: map[string]runSource{"line": fromLine}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newRig(t)
			if tc.dir != "" {
				dir := filepath.Join("..", "..", "testdata", tc.dir)
				td, ld := ptrace.NewTraces(), plog.NewLogs()
				if _, err := os.Stat(filepath.Join(dir, "traces.json")); err == nil {
					td, err = golden.ReadTraces(filepath.Join(dir, "traces.json"))
					require.NoError(t, err)
				}
				if _, err := os.Stat(filepath.Join(dir, "logs.json")); err == nil {
					ld, err = golden.ReadLogs(filepath.Join(dir, "logs.json"))
					require.NoError(t, err)
				}
				b.consumeBoth(td, ld, false)
			}
			for _, f := range tc.transcripts {
				for _, ld := range transcriptBatches(t, filepath.Join("..", "..", "testdata", "transcripts", f)) {
					b.consumeBoth(ptrace.NewTraces(), ld, false)
				}
			}
			b.advance(11 * time.Minute)
			b.shutdown()
			seen := map[string]int{}
			check := func(name string, attrs pcommon.Map, src runSource, want func() (int64, bool)) {
				d, ok := attrs.Get("toolpair.call.duration_ms")
				if !ok {
					return
				}
				seen[name]++
				elapsed := elapsedMsOf(attrs)
				own, stated := want()
				switch {
				case src == fromElapsed || !stated:
					assert.Equal(t, elapsed, d.Int(), "%s: no run time stated: the elapsed time", name)
					_, differs := attrs.Get("toolpair.call.elapsed_ms")
					assert.False(t, differs, name)
				default:
					assert.Equal(t, own, d.Int(), "%s: the run time it states", name)
					assert.LessOrEqual(t, d.Int(), elapsed, "%s: the tool ran within the time from its announcement", name)
				}
			}
			for _, s := range allSpans(mergedTraces(b)) {
				src, ok := tc.sources[s.Name()]
				if !ok {
					assert.Empty(t, strAttr(s, "toolpair.call.duration_ms"), "%s: a record the table does not name", s.Name())
					continue
				}
				check(s.Name(), s.Attributes(), src, func() (int64, bool) {
					length := roundedMs(int64(s.EndTimestamp() - s.StartTimestamp()))
					if src == fromField {
						own, ok := durationField(s.Attributes())
						require.True(t, ok, "%s states duration_ms", s.Name())
						assert.InDelta(t, own, length, 1, "%s: its duration_ms and its length agree", s.Name())
						return own, true
					}
					return length, true
				})
			}
			for _, lr := range allLogs(b.lsink) {
				name := logAttr(lr, "event.name") // the agents' own event names
				if name == "" {
					name = logAttr(lr, "event") // VoltAgent's
				}
				if name == "" {
					name = dialect.EventName(lr)
				}
				if len(tc.transcripts) > 0 {
					name = "line"
				}
				src, ok := tc.sources[name]
				if !ok {
					assert.Empty(t, logAttr(lr, "toolpair.call.duration_ms"), "%s: a record the table does not name", name)
					continue
				}
				check(name, lr.Attributes(), src, func() (int64, bool) {
					if src == fromLine {
						return lineDuration(t, lr.Body().Str())
					}
					return durationField(lr.Attributes())
				})
			}
			for name, src := range tc.sources {
				if src != fromElapsed {
					assert.Positive(t, seen[name], "no paired %s record seen", name)
				}
			}
		})
	}
}

// durationField reads the duration_ms attribute of attrs: an int, or a decimal string.
func durationField(attrs pcommon.Map) (int64, bool) {
	v, ok := attrs.Get("duration_ms")
	if !ok {
		return 0, false
	}
	if v.Type() == pcommon.ValueTypeInt {
		return v.Int(), true
	}
	f, err := strconv.ParseFloat(v.Str(), 64)
	return int64(math.Round(f)), err == nil
}

// lineDuration reads the run time a transcript line states: Claude Code's
// toolUseResult.durationMs, or pi's and OpenClaw's message.details.durationMs.
func lineDuration(t *testing.T, line string) (int64, bool) {
	var l struct {
		ToolUseResult json.RawMessage `json:"toolUseResult"`
		Message       struct {
			Details struct {
				DurationMs *float64 `json:"durationMs"`
			} `json:"details"`
		} `json:"message"`
	}
	require.NoError(t, json.Unmarshal([]byte(line), &l))
	if d := l.Message.Details.DurationMs; d != nil {
		return int64(math.Round(*d)), true
	}
	var r struct {
		DurationMs *float64 `json:"durationMs"`
	}
	if json.Unmarshal(l.ToolUseResult, &r) == nil && r.DurationMs != nil {
		return int64(math.Round(*r.DurationMs)), true
	}
	return 0, false
}
