// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package adk

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
)

// FuzzExtractSpan feeds OTLP traces requests, seeded with every span shape of the ADK capture,
// to ExtractSpan: it must never panic, report only well-formed items, find nothing in a span
// it does not claim, and find the same when run twice (it does not modify the span).
func FuzzExtractSpan(f *testing.F) {
	dialecttest.SeedSpans(f, "adk/*/traces.json")
	dialecttest.FuzzSpans(f, func(t *testing.T, s ptrace.Span, inputLen int) {
		dialecttest.Extract(t, s, ExtractSpan, inputLen)
	})
}

// FuzzFunctionCalls feeds LlmResponse texts, seeded with the capture's, to FunctionCalls: it
// must never panic, and return no calls with an error.
func FuzzFunctionCalls(f *testing.F) {
	f.Add([]byte(`{"content":{"role":"model","parts":[{"text":"I'll run the requested command."},{"functionCall":{"name":"run_shell","args":{"command":"echo hello"}}}]},"usageMetadata":{"promptTokenCount":1500,"candidatesTokenCount":25,"totalTokenCount":1525},"finishReason":"STOP"}`))
	f.Add([]byte(`{"content":{"parts":[{"functionCall":{"name":"a","args":null,"id":"x"}}]}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		calls, err := FunctionCalls(data)
		if err != nil && len(calls) != 0 {
			t.Fatalf("%d calls with error %v", len(calls), err)
		}
	})
}
