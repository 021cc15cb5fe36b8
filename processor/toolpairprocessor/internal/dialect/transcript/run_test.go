// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package transcript

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
)

// TestResultLineRun: the run time a result line states (Found.RunMs), as a string body and as
// a map body: Claude Code's toolUseResult.durationMs, OpenClaw's message.details.durationMs;
// none for a line without one, a toolUseResult that is a string, or a value that is no number.
func TestResultLineRun(t *testing.T) {
	const claude = `{"type":"user","sessionId":"s1","timestamp":"2026-02-10T21:12:01.117Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":"ok"}]},"toolUseResult":%s}`
	const openclaw = `{"type":"message","id":"e1","timestamp":"2026-11-22T05:54:37.011Z","message":{"role":"toolResult","toolCallId":"toolu_1","toolName":"exec","content":[{"type":"text","text":"hello"}],"details":%s}}`
	tests := []struct {
		name, line string
		ms         int64
		has        bool
	}{
		{name: "Claude Code durationMs", line: sprintf(claude, `{"filenames":[],"durationMs":638}`), ms: 638, has: true},
		{name: "Claude Code fractional durationMs", line: sprintf(claude, `{"durationMs":12.5}`), ms: 13, has: true},
		{name: "Claude Code without durationMs", line: sprintf(claude, `{"stdout":"ok"}`)},
		{name: "Claude Code string toolUseResult", line: sprintf(claude, `"Error: failed"`)},
		{name: "Claude Code durationMs as a numeric string", line: sprintf(claude, `{"durationMs":"638"}`), ms: 638, has: true},
		{name: "Claude Code durationMs not a number", line: sprintf(claude, `{"durationMs":"soon"}`)},
		{name: "Claude Code durationMs null", line: sprintf(claude, `{"durationMs":null}`)},
		{name: "OpenClaw details.durationMs", line: sprintf(openclaw, `{"status":"completed","durationMs":461}`), ms: 461, has: true},
		{name: "OpenClaw without durationMs", line: sprintf(openclaw, `{"status":"completed"}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, asMap := range []bool{false, true} {
				lr := plog.NewLogRecord()
				lr.Body().SetStr(tt.line)
				if asMap {
					var raw map[string]any
					if !assert.NoError(t, jsonUnmarshal(tt.line, &raw)) {
						return
					}
					assert.NoError(t, lr.Body().SetEmptyMap().FromRaw(raw))
				}
				var f dialect.Found
				assert.True(t, ExtractLog(lr, &f))
				assert.Len(t, f.Items, 1)
				assert.Equal(t, tt.has, f.HasRun, "map body %v", asMap)
				assert.Equal(t, tt.ms, f.RunMs, "map body %v", asMap)
			}
		})
	}
}

func sprintf(format, arg string) string { return fmt.Sprintf(format, arg) }

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
