// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package openinference

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
)

// FuzzExtractSpan feeds OTLP traces requests, seeded with every span shape of the OpenAI
// Agents SDK and LangGraph.js captures (OpenInference) and, as foreign spans, the AI SDK
// ones, to ExtractSpan: it must never panic, report only well-formed items, find nothing in a
// span it does not claim, and find the same items when run twice.
func FuzzExtractSpan(f *testing.F) {
	dialecttest.SeedSpans(f, "agents/*/traces.json", "aisdk/normal/traces.json")
	dialecttest.SeedSpans(f, "langgraph/*/traces.json") // its own shapes: its TOOL span is named run_shell too
	dialecttest.FuzzSpans(f, func(t *testing.T, s ptrace.Span, inputLen int) {
		dialecttest.Extract(t, s, ExtractSpan, inputLen)
	})
}
