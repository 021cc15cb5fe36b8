// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package genaievents

import (
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
)

// Entry describes the genai_events dialect for package registry: its log events, and which of
// them are model call records (the operation details and choice events) and tool records (the
// tool message event).
var Entry = dialect.Entry{
	Name:                   Name,
	Convention:             true,
	ConversationAttributes: []string{"gen_ai.conversation.id"},
	Logs:                   []dialect.Rule[plog.LogRecord]{{Source: dialect.SourceGenAILog, Extract: ExtractLog}},
	Operations: dialect.Operations{
		ModelEvents: []string{EventOperationDetails, EventChoice},
		ToolEvents:  []string{EventToolMessage},
	},
}
