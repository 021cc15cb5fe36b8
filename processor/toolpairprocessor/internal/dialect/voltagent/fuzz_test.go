// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package voltagent

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
)

// FuzzExtractSpan feeds OTLP traces requests, seeded with every span shape of the VoltAgent
// captures, to ExtractSpan: it must never panic, report only well-formed items, find nothing
// in a span it does not claim, and find the same when run twice (it does not modify the span).
func FuzzExtractSpan(f *testing.F) {
	dialecttest.SeedSpans(f, "voltagent/*/traces.json")
	dialecttest.FuzzSpans(f, func(t *testing.T, s ptrace.Span, inputLen int) {
		dialecttest.Extract(t, s, ExtractSpan, inputLen)
	})
}

// FuzzExtractLog does the same for ExtractLog, seeded with the log records of the VoltAgent
// captures (the step records' attribute maps and kvlist results among them).
func FuzzExtractLog(f *testing.F) {
	dialecttest.SeedLogs(f, "voltagent/*/logs.json")
	dialecttest.FuzzLogs(f, ExtractLog)
}
