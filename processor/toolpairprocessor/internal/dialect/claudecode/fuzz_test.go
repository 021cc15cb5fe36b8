package claudecode

import (
	"slices"
	"testing"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
)

// FuzzExtractLog feeds OTLP logs requests, seeded with every log record of the Claude Code
// captures, to ExtractLog: it must never panic, report only well-formed items, find nothing
// in a record it does not claim, and find the same items when run twice.
func FuzzExtractLog(f *testing.F) {
	dialecttest.SeedLogs(f, "claude/*/logs.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		records, ok := dialecttest.LogRecords(data)
		if !ok {
			return
		}
		for _, lr := range records {
			var first, second dialect.Found
			claimed := ExtractLog(lr, &first)
			dialecttest.CheckFound(t, &first, len(data))
			if !claimed && !first.Empty() {
				t.Fatal("a record not claimed yielded items")
			}
			if ExtractLog(lr, &second) != claimed || !slices.Equal(first.Items, second.Items) || !slices.Equal(first.Malformed, second.Malformed) {
				t.Fatal("a second extraction of the same record differs")
			}
		}
	})
}
