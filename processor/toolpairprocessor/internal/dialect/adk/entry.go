// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package adk

import (
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
)

// Entry describes the adk dialect for package registry: its call_llm and execute_tool spans,
// call_llm a model call span for timeout classification (ADK gives it no GenAI operation
// name), and the prefix of its tool spans, which carry no attribute when the tool threw. It adds no scope attribute: ADK's call_llm and
// execute_tool spans are keyed by their trace.
var Entry = dialect.Entry{
	Name:  Name,
	Spans: []dialect.Rule[ptrace.Span]{{Source: dialect.SourceADKSpan, Extract: ExtractSpan}},
	Operations: dialect.Operations{
		ModelSpans:       []string{spanCallLLM},
		ToolSpanPrefixes: []string{toolSpanPrefix},
	},
}
