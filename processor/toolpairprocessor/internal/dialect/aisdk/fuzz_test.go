package aisdk

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
)

// FuzzExtractSpan feeds OTLP traces requests, seeded with every span shape of the AI SDK 6
// captures, to ExtractSpan: it must never panic, report only well-formed items (an
// ai.toolCall span is at most one result), find nothing in a span it does not claim, and find
// the same items when run twice.
func FuzzExtractSpan(f *testing.F) {
	dialecttest.SeedSpans(f, "aisdk6/*/traces.json")
	dialecttest.FuzzSpans(f, func(t *testing.T, s ptrace.Span, inputLen int) {
		_, found := dialecttest.Extract(t, s, ExtractSpan, inputLen)
		if r := found.Results(); r > 1 || (r == 1 && len(found.Items) != 1) {
			t.Fatalf("an ai.toolCall span is one result and nothing else, got %v", found.Items)
		}
	})
}
