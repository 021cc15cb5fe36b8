// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package transcript

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// refusalLine is a Claude Code user line answering call toolu_r, in the shape of the real
// refusal lines of testdata/transcripts/claude-code (Claude Code 2.1.39), with its
// toolDenialKind, is_error, toolUseResult and content replaced by the arguments; empty
// arguments leave the member out.
func refusalLine(denial, isError, toolUseResult, content string) string {
	var b strings.Builder
	b.WriteString(`{"parentUuid":"p1","isSidechain":false,"userType":"external","sessionId":"s1","version":"2.1.39","type":"user","message":{"role":"user","content":[{"type":"tool_result","content":`)
	b.WriteString(content)
	if isError != "" {
		b.WriteString(`,"is_error":` + isError)
	}
	b.WriteString(`,"tool_use_id":"toolu_r"}]},"uuid":"u1","timestamp":"2026-02-11T20:51:10.730Z"`)
	if toolUseResult != "" {
		b.WriteString(`,"toolUseResult":` + toolUseResult)
	}
	if denial != "" {
		b.WriteString(`,"toolDenialKind":` + denial)
	}
	b.WriteString(`,"sourceToolAssistantUUID":"p1"}`)
	return b.String()
}

// TestUserRefusal checks which tool_result lines are the user's refusals (specification section 2):
// is_error true, a top-level toolUseResult "User rejected tool use" and a toolDenialKind,
// as a string body and as a parsed map body; of repeated keys the last counts.
func TestUserRefusal(t *testing.T) {
	const (
		declined    = `"The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed."`
		interrupted = `"[Request interrupted by user for tool use]"`
		rejected    = `"User rejected tool use"`
	)
	tests := []struct {
		name string
		line string
		want pairing.Kind
	}{
		{"declined at the permission prompt", refusalLine(`"permission_prompt"`, "true", rejected, declined), pairing.KindRefused},
		{"interrupted while running", refusalLine(`"interrupt"`, "true", rejected, interrupted), pairing.KindRefused},
		{"without toolDenialKind (Claude Code 2.1.39): an ordinary result", refusalLine("", "true", rejected, declined), pairing.KindResult},
		{"a null toolDenialKind", refusalLine("null", "true", rejected, declined), pairing.KindResult},
		{"interrupted without toolDenialKind: aborted", refusalLine("", "true", rejected, interrupted), pairing.KindAbort},
		{"not marked is_error", refusalLine(`"permission_prompt"`, "false", rejected, declined), pairing.KindResult},
		{"another toolUseResult", refusalLine(`"permission_prompt"`, "true", `"Error: Exit code 1"`, declined), pairing.KindResult},
		{"toolUseResult an object", refusalLine(`"permission_prompt"`, "true", `{"stdout":"User rejected tool use"}`, declined), pairing.KindResult},
		{"the last toolUseResult counts", strings.Replace(refusalLine(`"permission_prompt"`, "true", rejected, declined), `"toolUseResult":`, `"toolUseResult":"Error","toolUseResult":`, 1), pairing.KindRefused},
		{"the last is_error counts", strings.Replace(refusalLine(`"permission_prompt"`, "true", rejected, declined), `"is_error":true`, `"is_error":true,"is_error":false`, 1), pairing.KindResult},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lr := plog.NewLogRecord()
			lr.Body().SetStr(tt.line)
			var f dialect.Found
			require.True(t, ExtractLog(lr, &f))
			require.Len(t, f.Items, 1)
			assert.Equal(t, tt.want, f.Items[0].Kind, "string body")
			assert.Equal(t, "toolu_r", f.Items[0].CallID)
			assert.Equal(t, 1, f.Results(), "a refusal is a tool_result record")

			if strings.Count(tt.line, `"toolUseResult"`) > 1 || strings.Count(tt.line, `"is_error"`) > 1 {
				return // encoding/json keeps one of repeated keys: no map body to compare
			}
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(tt.line), &m))
			mlr := plog.NewLogRecord()
			require.NoError(t, mlr.Body().SetEmptyMap().FromRaw(m))
			f.Reset()
			require.True(t, ExtractLog(mlr, &f))
			require.Len(t, f.Items, 1)
			assert.Equal(t, tt.want, f.Items[0].Kind, "map body")
		})
	}
}
