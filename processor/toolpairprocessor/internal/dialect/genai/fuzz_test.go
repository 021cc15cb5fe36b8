// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package genai

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
)

// FuzzExtractSpan feeds OTLP traces requests, seeded with every span of the AI SDK, Claude
// Code, Copilot CLI, AWS Strands Agents and Mastra captures (span events, Mastra's step
// output), to ExtractSpan: it must never panic, report only well-formed items, find nothing
// in a span of no GenAI role, and find the same role and items when run twice (it does not
// modify the span).
func FuzzExtractSpan(f *testing.F) {
	dialecttest.SeedSpans(f, "aisdk/*/traces.json", "claude/*/traces.json", "copilot/*/traces.json", "strands/*/traces.json", "mastra/*/traces.json")
	dialecttest.FuzzSpans(f, func(t *testing.T, s ptrace.Span, inputLen int) {
		var kinds []SpanKind
		dialecttest.Extract(t, s, func(s ptrace.Span, found *dialect.Found) bool {
			k := ExtractSpan(s, found)
			kinds = append(kinds, k)
			return k != Other
		}, inputLen)
		if kinds[0] != kinds[1] {
			t.Fatalf("a second extraction of the same span gave role %v, the first %v", kinds[1], kinds[0])
		}
	})
}
