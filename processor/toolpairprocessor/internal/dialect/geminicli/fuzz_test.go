package geminicli

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// FuzzExtractSpan feeds OTLP traces requests, seeded with every span shape of the Gemini CLI
// captures, to ExtractSpan: it must never panic, report only well-formed items (a tool_call
// span is at most one result), find nothing in a span it does not claim, and find the same
// items when run twice.
func FuzzExtractSpan(f *testing.F) {
	dialecttest.SeedSpans(f, "gemini/*/traces.json")
	dialecttest.FuzzSpans(f, func(t *testing.T, s ptrace.Span, inputLen int) {
		_, found := dialecttest.Extract(t, s, ExtractSpan, inputLen)
		results := found.Results()
		if results > 1 || (results == 1 && len(found.Items) != 1) {
			t.Fatalf("a tool_call span is one result and nothing else, got %v", found.Items)
		}
		for _, it := range found.Items {
			if it.Kind != pairing.KindUse && it.Kind != pairing.KindBoundary && it.Kind != pairing.KindResult && it.Kind != pairing.KindAbort {
				t.Fatalf("unexpected item kind %v", it.Kind)
			}
		}
	})
}

// FuzzExtractLog feeds OTLP logs requests, seeded with every log record shape of the Gemini
// CLI captures, to ExtractLog, with the same checks.
func FuzzExtractLog(f *testing.F) {
	dialecttest.SeedLogs(f, "gemini/*/logs.json")
	dialecttest.FuzzLogs(f, ExtractLog)
}
