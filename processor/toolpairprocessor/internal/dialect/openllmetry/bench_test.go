// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package openllmetry

import (
	"path/filepath"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/genai"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/openinference"
)

// foreignSpans returns the spans of the AI SDK and Claude Code captures: spans of other
// sources, which the openinference and openllmetry dialects are tried on before genai.
func foreignSpans(b *testing.B) []ptrace.Span {
	var out []ptrace.Span
	for _, p := range []string{"aisdk/*/traces.json", "claude/*/traces.json"} {
		files, _ := filepath.Glob(dialecttest.Testdata(p))
		for _, file := range files {
			td, err := golden.ReadTraces(file)
			if err != nil {
				b.Fatal(err)
			}
			out = append(out, dialecttest.SpansOf(td)...)
		}
	}
	return out
}

// BenchmarkForeignSpans times, per span of other sources, what the two dialects add before
// genai claims the span (OpenInferenceAndOpenLLMetry), next to genai's own extraction of the
// same spans (GenAI).
func BenchmarkForeignSpans(b *testing.B) {
	spans := foreignSpans(b)
	var f dialect.Found
	b.Run("OpenInferenceAndOpenLLMetry", func(b *testing.B) {
		for b.Loop() {
			for _, s := range spans {
				f.Reset()
				if openinference.ExtractSpan(s, &f) || ExtractSpan(s, &f) {
					b.Fatalf("span %s claimed", s.Name())
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(spans)), "ns/span")
	})
	b.Run("GenAI", func(b *testing.B) {
		for b.Loop() {
			for _, s := range spans {
				f.Reset()
				genai.ExtractSpan(s, &f)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(spans)), "ns/span")
	})
}
