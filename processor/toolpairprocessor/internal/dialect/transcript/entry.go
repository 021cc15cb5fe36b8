// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package transcript

import (
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
)

// Entry describes the transcript dialect for package registry: its lines (log bodies), which
// give their items a scope of their own (the session, or the file of a pi/OpenClaw line); the
// scope of a line without items (LineScope) and of a timeout line naming no session
// (FileScope); and the names of the records OpenClaw's diagnostics-otel plugin writes beside
// its transcripts (docs/gateway/opentelemetry of OpenClaw 2026.9): its tool, exec, model call
// and compaction spans, and its compaction event.
var Entry = dialect.Entry{
	Name:             Name,
	Logs:             []dialect.Rule[plog.LogRecord]{{Source: dialect.SourceTranscriptLog, Extract: ExtractLog, OwnConversation: true}},
	LineConversation: LineConversation,
	TimeoutLine:      TimeoutLine,
	FileConversation: FileConversation,
	Operations: dialect.Operations{
		ModelSpans:       []string{"openclaw.model.call"},
		ToolSpans:        []string{"openclaw.tool.execution", "openclaw.exec"},
		CompactionSpans:  []string{"openclaw.compaction"},
		CompactionEvents: []string{"openclaw.compaction"},
	},
}
