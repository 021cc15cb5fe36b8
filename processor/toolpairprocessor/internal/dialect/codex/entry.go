// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package codex

import (
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
)

// spanSampling is Codex's span of one model request; it carries conversation.id.
const spanSampling = "codex.sampling"

// Entry describes the codex dialect for package registry: its tool spans and log events, its
// sampling span (a model call anchor), and the names of its model call and tool records.
// Codex's run_pre_sampling_compact span is deliberately no compaction: it runs before every
// model request, whether or not anything is compacted.
var Entry = dialect.Entry{
	Name:                   Name,
	ConversationAttributes: []string{"conversation.id"},
	Spans:                  []dialect.Rule[ptrace.Span]{{Source: dialect.SourceCodexSpan, Extract: ExtractSpan}},
	Logs:                   []dialect.Rule[plog.LogRecord]{{Source: dialect.SourceCodexLog, Extract: ExtractLog}},
	Anchors:                dialect.Anchors{ModelSpans: []string{spanSampling}},
	Operations: dialect.Operations{
		ModelSpans: []string{spanSampling},
		// The span named after the tool, and its children, carry call_id.
		CallIDAttributes: []string{"call_id"},
		// Of its tool_result events (a string).
		DurationAttributes: []string{"duration_ms"},
		ModelEvents:        []string{"codex.api_request", "codex.sse_event", "codex.websocket_request", "codex.websocket_event"},
		ToolEvents:         []string{"codex.tool_result", "codex.tool_decision"},
	},
}
