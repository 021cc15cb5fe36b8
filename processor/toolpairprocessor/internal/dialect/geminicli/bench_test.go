// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package geminicli

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
)

// BenchmarkExtractSpan: ns per span, on spans of other dialects (the AI SDK 7 semconv spans
// and Claude Code's, which the dialect list tries gemini_cli on before genai) and on Gemini
// CLI's own.
func BenchmarkExtractSpan(b *testing.B) {
	for _, c := range []struct{ name, file string }{
		{"other_aisdk7", "aisdk/parallel/traces.json"},
		{"other_claude", "claude/parallel/traces.json"},
		{"own_gemini", "gemini/normal/traces.json"},
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

// BenchmarkExtractLog: ns per log record, on Claude Code's and Codex's events (tried by
// gemini_cli before genai_events and transcript) and on Gemini CLI's own.
func BenchmarkExtractLog(b *testing.B) {
	for _, c := range []struct{ name, file string }{
		{"other_claude", "claude/parallel/logs.json"},
		{"other_codex", "codex/parallel/logs.json"},
		{"own_gemini", "gemini/normal/logs.json"},
	} {
		b.Run(c.name, func(b *testing.B) {
			records := dialecttest.CaptureLogRecords(b, c.file)
			var f dialect.Found
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f.Reset()
				ExtractLog(records[i%len(records)], &f)
			}
		})
	}
}

// BenchmarkLLMCallHistory: one llm_call span of the normal capture whose input messages (the
// history, read for functionResponse parts) are padded with a text part to about 1 MiB, as
// in a long session: the cost per model request grows with the history.
func BenchmarkLLMCallHistory(b *testing.B) {
	var span ptrace.Span
	for _, s := range dialecttest.CaptureSpans(b, "gemini/normal/traces.json") {
		if s.Name() == "llm_call" {
			span = s
		}
	}
	v, _ := span.Attributes().Get(attrInputMessages)
	padded := `[{"role":"user","parts":[{"text":"` + strings.Repeat("x", 1<<20) + `"}]},` + v.Str()[1:]
	s := ptrace.NewSpan()
	span.CopyTo(s)
	s.Attributes().PutStr(attrInputMessages, padded)
	b.SetBytes(int64(len(padded)))
	var f dialect.Found
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f.Reset()
		ExtractSpan(s, &f)
	}
	if len(f.Items) == 0 {
		b.Fatal("nothing found")
	}
}
