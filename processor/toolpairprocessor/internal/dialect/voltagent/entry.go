// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package voltagent

import (
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
)

// Entry describes the voltagent dialect for package registry: its tool spans and root agent
// span, its step log records, its llm:generateText and llm:streamText spans (model call
// anchors, under which a synthetic span of a call announced in its logs goes, and model
// calls for timeout classification) and its tool span prefix. It adds no scope attribute:
// the records' common scope is their trace.
var Entry = dialect.Entry{
	Name:    Name,
	Spans:   []dialect.Rule[ptrace.Span]{{Source: dialect.SourceVoltAgentSpan, Extract: ExtractSpan}},
	Logs:    []dialect.Rule[plog.LogRecord]{{Source: dialect.SourceVoltAgentLog, Extract: ExtractLog}},
	Anchors: dialect.Anchors{ModelSpans: []string{spanGenerateText, spanStreamText}},
	Operations: dialect.Operations{
		ModelSpans:       []string{spanGenerateText, spanStreamText},
		ToolSpanPrefixes: []string{toolSpanPrefix},
	},
}
