package claudecode

import (
	"slices"
	"testing"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
)

// FuzzExtractSpan feeds OTLP traces requests, seeded with every span of the Claude Code
// captures, to ExtractSpan and ExtractExecutionSpan: they must never panic, report only
// well-formed items, never both claim a span, find nothing in a span they do not claim, and
// find the same items when run twice.
func FuzzExtractSpan(f *testing.F) {
	dialecttest.SeedSpans(f, "claude/*/traces.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		spans, ok := dialecttest.Spans(data)
		if !ok {
			return
		}
		for _, s := range spans {
			var first, second, exec dialect.Found
			claimed := ExtractSpan(s, &first)
			dialecttest.CheckFound(t, &first, len(data))
			if !claimed && !first.Empty() {
				t.Fatal("a span not claimed yielded items")
			}
			if ExtractSpan(s, &second) != claimed || !slices.Equal(first.Items, second.Items) || !slices.Equal(first.Malformed, second.Malformed) {
				t.Fatal("a second extraction of the same span differs")
			}
			execClaimed := ExtractExecutionSpan(s, &exec)
			dialecttest.CheckFound(t, &exec, len(data))
			if claimed && execClaimed {
				t.Fatal("a span claimed by both extractors")
			}
			if !execClaimed && !exec.Empty() {
				t.Fatal("an execution span not claimed yielded items")
			}
		}
	})
}
