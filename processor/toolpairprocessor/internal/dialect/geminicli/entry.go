// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package geminicli

import (
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
)

// Entry describes the gemini_cli dialect for package registry: the spans and log events of
// Gemini CLI and of its fork Qwen Code (the Qwen tool execution spans late: a companion of the
// tool span), their model request spans (model call anchors: Gemini CLI's llm_call, a root
// span carrying gen_ai.conversation.id, the session; Qwen Code's qwen-code.llm_request), and
// the names of their model call and tool records (llm_call is also the gen_ai.operation.name
// of Gemini CLI's model call spans; Qwen Code's spans carry semconv operation names, but
// its execution span none).
var Entry = dialect.Entry{
	Name: Name,
	// The spans carry the session as gen_ai.conversation.id, the log events (and Qwen Code's
	// spans) as session.id.
	ConversationAttributes: []string{"gen_ai.conversation.id", "session.id"},
	Spans: []dialect.Rule[ptrace.Span]{
		{Source: dialect.SourceGeminiSpan, Extract: ExtractSpan},
		{Source: dialect.SourceQwenSpan, Extract: ExtractQwenSpan},
		{Source: dialect.SourceQwenExecution, Extract: ExtractQwenExecutionSpan, Late: true},
	},
	Logs: []dialect.Rule[plog.LogRecord]{
		{Source: dialect.SourceGeminiLog, Extract: ExtractLog},
		{Source: dialect.SourceQwenLog, Extract: ExtractQwenLog},
	},
	Anchors: dialect.Anchors{ModelSpans: []string{opLLMCall, qwenSpanLLMRequest}},
	Operations: dialect.Operations{
		ModelSpans:      []string{opLLMCall},
		ToolSpans:       []string{qwenSpanToolExecution},
		ModelOperations: []string{opLLMCall},
		// Gemini CLI's tool_call span.
		CallIDAttributes: []string{attrToolCallID},
		StatusAttributes: []string{"status_code"},
		// Of Gemini CLI's and Qwen Code's events (Qwen Code's tool_call among them).
		DurationAttributes: []string{"duration_ms"},
		ModelEvents: []string{eventAPIRequest, "gemini_cli.api_response", "gemini_cli.api_error",
			qwenEventAPIRequest, qwenPrefix + "api_response", qwenPrefix + "api_error"},
		ToolEvents: []string{"gemini_cli.tool_call", qwenEventToolCall},
	},
}
