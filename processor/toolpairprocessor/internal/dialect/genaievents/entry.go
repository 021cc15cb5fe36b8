package genaievents

import (
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
)

// SourceLog is the Source of the GenAI log events' result stream (dialect.Rule.Source).
const SourceLog uint8 = 9

// Entry describes the genai_events dialect for package registry: its log events, and which of
// them are model call records (the operation details and choice events) and tool records (the
// tool message event).
var Entry = dialect.Entry{
	Name:                   Name,
	Convention:             true,
	ConversationAttributes: []string{"gen_ai.conversation.id"},
	Logs:                   []dialect.Rule[plog.LogRecord]{{Source: SourceLog, Extract: ExtractLog}},
	Operations: dialect.Operations{
		ModelEvents: []string{EventOperationDetails, EventChoice},
		ToolEvents:  []string{EventToolMessage},
	},
}
