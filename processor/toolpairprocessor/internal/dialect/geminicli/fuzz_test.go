// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package geminicli

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
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

// TestTruncatedMessages cuts the JSON attributes of every span of the Gemini CLI captures at
// every length (every 7th byte beyond the first 512) and runs ExtractSpan on each cut: an
// attribute truncated by an exporter's size limit must never panic, and must yield only
// well-formed items (dialecttest.Extract's checks).
func TestTruncatedMessages(t *testing.T) {
	for _, file := range []string{"gemini/normal/traces.json", "gemini/interrupt_sigterm/traces.json"} {
		for _, s := range dialecttest.CaptureSpans(t, file) {
			for _, key := range []string{attrOutputMessages, attrInputMessages} {
				v, ok := s.Attributes().Get(key)
				if !ok {
					continue
				}
				full := v.Str()
				for n := 0; n < len(full); n += cutStep(n) {
					c := ptrace.NewSpan()
					s.CopyTo(c)
					c.Attributes().PutStr(key, full[:n])
					dialecttest.Extract(t, c, ExtractSpan, 64+n)
				}
			}
		}
	}
}

func cutStep(n int) int {
	if n < 512 {
		return 1
	}
	return 7
}

// FuzzExtractQwenSpan feeds OTLP traces requests, seeded with every span shape of the Qwen
// Code captures, to ExtractQwenSpan and ExtractQwenExecutionSpan: they must never panic,
// report only well-formed items (a tool or execution span is at most one result and nothing
// else), find nothing in a span they do not claim, and find the same items when run twice.
func FuzzExtractQwenSpan(f *testing.F) {
	dialecttest.SeedSpans(f, "qwen/*/traces.json")
	dialecttest.FuzzSpans(f, func(t *testing.T, s ptrace.Span, inputLen int) {
		for _, extract := range []func(ptrace.Span, *dialect.Found) bool{ExtractQwenSpan, ExtractQwenExecutionSpan} {
			_, found := dialecttest.Extract(t, s, extract, inputLen)
			if results := found.Results(); results > 1 || (results == 1 && len(found.Items) != 1) {
				t.Fatalf("a tool span is one result and nothing else, got %v", found.Items)
			}
		}
	})
}

// FuzzExtractQwenLog feeds OTLP logs requests, seeded with every log record shape of the Qwen
// Code captures, to ExtractQwenLog, with the checks of dialecttest.FuzzLogs.
func FuzzExtractQwenLog(f *testing.F) {
	dialecttest.SeedLogs(f, "qwen/*/logs.json")
	dialecttest.FuzzLogs(f, ExtractQwenLog)
}
