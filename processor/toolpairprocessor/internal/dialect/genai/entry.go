// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package genai

import (
	"go.opentelemetry.io/collector/pdata/ptrace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
)

// keyConversationID is the semconv attribute of the conversation (the session) a span
// belongs to.
var keyConversationID = string(semconv.GenAIConversationIDKey)

// Entry describes the genai dialect for package registry: its spans (a span is claimed unless
// ExtractSpan says Other), and its agent spans, "invoke_agent {gen_ai.agent.name}", which are
// turn anchors.
var Entry = dialect.Entry{
	Name:                   Name,
	Convention:             true,
	ConversationAttributes: []string{keyConversationID},
	Spans: []dialect.Rule[ptrace.Span]{{Source: dialect.SourceGenAISpan, Extract: func(span ptrace.Span, f *dialect.Found) bool {
		return ExtractSpan(span, f) != Other
	}}},
	Anchors: dialect.Anchors{TurnSpanPrefixes: []string{opInvokeAgent}},
}
