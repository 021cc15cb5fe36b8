package genai

import (
	"slices"
	"testing"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
)

// FuzzExtractSpan feeds OTLP traces requests, seeded with every span of the AI SDK and Claude
// Code captures, to ExtractSpan: it must never panic, report only well-formed items, and
// find the same items when run twice (it does not modify the span).
func FuzzExtractSpan(f *testing.F) {
	dialecttest.SeedSpans(f, "aisdk/*/traces.json", "claude/*/traces.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		spans, ok := dialecttest.Spans(data)
		if !ok {
			return
		}
		for _, s := range spans {
			var first, second dialect.Found
			kind := ExtractSpan(s, &first)
			dialecttest.CheckFound(t, &first, len(data))
			if ExtractSpan(s, &second) != kind || !slices.Equal(first.Items, second.Items) || !slices.Equal(first.Malformed, second.Malformed) {
				t.Fatal("a second extraction of the same span differs")
			}
			if kind == Other && !first.Empty() {
				t.Fatal("a span of no GenAI role yielded items")
			}
		}
	})
}
