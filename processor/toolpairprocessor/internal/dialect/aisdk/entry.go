// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package aisdk

import (
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
)

// Entry describes the ai_sdk dialect for package registry: its spans, and the names of its
// provider-call (model call) and ai.toolCall (tool) spans, which carry no GenAI operation name.
var Entry = dialect.Entry{
	Name:  Name,
	Spans: []dialect.Rule[ptrace.Span]{{Source: dialect.SourceAISDKSpan, Extract: ExtractSpan}},
	Operations: dialect.Operations{
		ModelSpans:       []string{opDoGenerate, opDoStream, "ai.generateObject.doGenerate", "ai.streamObject.doStream"},
		ToolSpans:        []string{opToolCall},
		CallIDAttributes: []string{attrToolCallID},
	},
}
