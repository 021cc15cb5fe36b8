// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
)

// Entry describes the claude_code dialect for package registry: its log events, its beta
// spans (the tool spans, then the execution spans, late: a companion of the tool span), its
// interaction (turn) and llm_request (model call) anchor spans, and the names of its model
// call, tool and compaction records.
var Entry = dialect.Entry{
	Name:                   Name,
	ConversationAttributes: []string{"session.id"},
	Spans:                  []dialect.Rule[ptrace.Span]{{Source: dialect.SourceClaudeCodeSpan, Extract: ExtractSpan}, {Source: dialect.SourceClaudeCodeExecution, Extract: ExtractExecutionSpan, Late: true}},
	Logs:                   []dialect.Rule[plog.LogRecord]{{Source: dialect.SourceClaudeCodeLog, Extract: ExtractLog}},
	Anchors: dialect.Anchors{
		TurnSpans:  []string{SpanInteraction},
		ModelSpans: []string{SpanLLMRequest},
	},
	Operations: dialect.Operations{
		ModelSpans:       []string{SpanLLMRequest},
		CallIDAttributes: []string{attrToolUseID},
		StatusAttributes: []string{"status_code"},
		// Of its tool_result events (a string).
		DurationAttributes: []string{"duration_ms"},
		// error is the error text, error_class its class (api_timeout, server_overload,
		// ShellError).
		ErrorAttributes: []string{"error", "error_class"},
		// SpanTool and its children (SpanToolExecution, claude_code.tool.blocked_on_user).
		ToolSpanPrefixes: []string{SpanTool},
		// The events also arrive as event.name without the prefix; the body or EventName then
		// carries the prefixed form, which is what is matched.
		ModelEvents:      []string{prefix + "api_request", prefix + "api_error", prefix + "api_retries_exhausted"},
		ToolEvents:       []string{prefix + eventResult, prefix + eventDecision},
		CompactionSpans:  []string{prefix + "compaction"},
		CompactionEvents: []string{prefix + "compaction"},
	},
}
