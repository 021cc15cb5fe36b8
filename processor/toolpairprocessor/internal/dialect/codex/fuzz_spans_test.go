// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package codex

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// FuzzExtractSpan feeds OTLP traces requests, seeded with every span of the Codex captures,
// to ExtractSpan: it must never panic, report only well-formed items (at most one result),
// find nothing in a span it does not claim, and find the same items when run twice.
func FuzzExtractSpan(f *testing.F) {
	dialecttest.SeedSpans(f, "codex/*/traces.json")
	dialecttest.FuzzSpans(f, func(t *testing.T, s ptrace.Span, inputLen int) {
		_, found := dialecttest.Extract(t, s, ExtractSpan, inputLen)
		if items := found.Items; len(items) > 1 || (len(items) == 1 && items[0].Kind != pairing.KindResult && items[0].Kind != pairing.KindAbort) {
			t.Fatalf("a tool span is one result, got %v", items)
		}
	})
}
