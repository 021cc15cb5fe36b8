// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
)

// FuzzExtractSpan feeds OTLP traces requests, seeded with every span of the Claude Code and
// Claude Agent SDK captures, to ExtractSpan and ExtractExecutionSpan: they must never panic,
// report only well-formed items, never both claim a span, find nothing in a span they do not
// claim, and find the same items when run twice.
func FuzzExtractSpan(f *testing.F) {
	dialecttest.SeedSpans(f, "claude/*/traces.json", "claudesdk/*/traces.json")
	dialecttest.FuzzSpans(f, func(t *testing.T, s ptrace.Span, inputLen int) {
		claimed, _ := dialecttest.Extract(t, s, ExtractSpan, inputLen)
		execClaimed, _ := dialecttest.Extract(t, s, ExtractExecutionSpan, inputLen)
		if claimed && execClaimed {
			t.Fatal("a span claimed by both extractors")
		}
	})
}
