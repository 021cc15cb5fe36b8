// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package openllmetry

import (
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
)

// Entry describes the openllmetry dialect for package registry: its spans, its span kind
// attribute (tool: a tool call), and llm.request.type (chat, completion, embedding), set on
// its model call spans.
var Entry = dialect.Entry{
	Name:  Name,
	Spans: []dialect.Rule[ptrace.Span]{{Source: dialect.SourceOpenLLMetrySpan, Extract: ExtractSpan}},
	Operations: dialect.Operations{
		ToolKindAttribute: dialect.KindAttribute{Key: keySpanKind, Tool: []string{kindTool}},
		ModelAttributes:   []string{keyRequestType},
	},
}
