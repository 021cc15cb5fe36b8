package codex

import (
	"slices"
	"testing"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// FuzzExtractSpan feeds OTLP traces requests, seeded with every span of the Codex captures,
// to ExtractSpan: it must never panic, report only well-formed items (at most one result),
// find nothing in a span it does not claim, and find the same items when run twice.
func FuzzExtractSpan(f *testing.F) {
	dialecttest.SeedSpans(f, "codex/*/traces.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		spans, ok := dialecttest.Spans(data)
		if !ok {
			return
		}
		for _, s := range spans {
			var first, second dialect.Found
			claimed := ExtractSpan(s, &first)
			dialecttest.CheckFound(t, &first, len(data))
			if !claimed && !first.Empty() {
				t.Fatal("a span not claimed yielded items")
			}
			if len(first.Items) > 1 || (len(first.Items) == 1 && first.Items[0].Kind != pairing.KindResult && first.Items[0].Kind != pairing.KindAbort) {
				t.Fatalf("a tool span is one result, got %v", first.Items)
			}
			if ExtractSpan(s, &second) != claimed || !slices.Equal(first.Items, second.Items) || !slices.Equal(first.Malformed, second.Malformed) {
				t.Fatal("a second extraction of the same span differs")
			}
		}
	})
}
