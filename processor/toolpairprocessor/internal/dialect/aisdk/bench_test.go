// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package aisdk

import (
	"testing"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
)

// BenchmarkExtractSpan: ns per span, on spans of other dialects (the AI SDK 7 semconv spans
// and Claude Code's, which the dialect list tries ai_sdk on before genai) and on AI SDK 6's
// own.
func BenchmarkExtractSpan(b *testing.B) {
	for _, c := range []struct{ name, file string }{
		{"other_aisdk7", "aisdk/parallel/traces.json"},
		{"other_claude", "claude/parallel/traces.json"},
		{"own_aisdk6", "aisdk6/normal/traces.json"},
	} {
		b.Run(c.name, func(b *testing.B) {
			spans := dialecttest.CaptureSpans(b, c.file)
			var f dialect.Found
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f.Reset()
				ExtractSpan(spans[i%len(spans)], &f)
			}
		})
	}
}
