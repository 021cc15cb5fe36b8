// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package aisdk

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
)

// FuzzExtractSpan feeds OTLP traces requests, seeded with every span shape of the AI SDK 6
// captures (the sample app and opencode), to ExtractSpan: it must never panic, report only
// well-formed items (an ai.toolCall span is at most one result), find nothing in a span it
// does not claim, and find the same items when run twice.
func FuzzExtractSpan(f *testing.F) {
	dialecttest.SeedSpans(f, "aisdk6/*/traces.json", "opencode/*/traces.json")
	dialecttest.FuzzSpans(f, func(t *testing.T, s ptrace.Span, inputLen int) {
		_, found := dialecttest.Extract(t, s, ExtractSpan, inputLen)
		if r := found.Results(); r > 1 || (r == 1 && len(found.Items) != 1) {
			t.Fatalf("an ai.toolCall span is one result and nothing else, got %v", found.Items)
		}
	})
}

// TestTruncatedToolCalls cuts ai.response.toolCalls of the AI SDK 6 capture at every length
// and runs ExtractSpan on each cut: never a panic, only well-formed items (and the uncut
// attribute still yields its boundary and its call).
func TestTruncatedToolCalls(t *testing.T) {
	checked := 0
	for _, s := range dialecttest.CaptureSpans(t, "aisdk6/normal/traces.json") {
		v, ok := s.Attributes().Get(attrToolCalls)
		if !ok {
			continue
		}
		full := v.Str()
		for n := 0; n <= len(full); n++ {
			c := ptrace.NewSpan()
			s.CopyTo(c)
			c.Attributes().PutStr(attrToolCalls, full[:n])
			_, found := dialecttest.Extract(t, c, ExtractSpan, 64+n)
			if n == len(full) && len(found.Items) != 2 {
				t.Fatalf("the whole attribute: want a boundary and one use, got %v", found.Items)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no ai.response.toolCalls in the capture")
	}
}
