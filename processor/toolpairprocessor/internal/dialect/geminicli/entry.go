package geminicli

import (
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
)

// Sources of Gemini CLI's result streams (dialect.Rule.Source): its spans and its log events.
const (
	SourceSpan uint8 = 10
	SourceLog  uint8 = 11
)

// Entry describes the gemini_cli dialect for package registry: its spans and log events, its
// llm_call span (a model call anchor: a root span carrying gen_ai.conversation.id, the
// session), and the names of its model call and tool records (llm_call is also the
// gen_ai.operation.name of its model call spans).
var Entry = dialect.Entry{
	Name:    Name,
	Spans:   []dialect.Rule[ptrace.Span]{{Source: SourceSpan, Extract: ExtractSpan}},
	Logs:    []dialect.Rule[plog.LogRecord]{{Source: SourceLog, Extract: ExtractLog}},
	Anchors: dialect.Anchors{ModelSpans: []string{opLLMCall}},
	Operations: dialect.Operations{
		ModelSpans:      []string{opLLMCall},
		ModelOperations: []string{opLLMCall},
		ModelEvents:     []string{eventAPIRequest, "gemini_cli.api_response", "gemini_cli.api_error"},
		ToolEvents:      []string{"gemini_cli.tool_call"},
	},
}
