// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"testing"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
)

// FuzzExtractLog feeds OTLP logs requests, seeded with every log record of the Claude Code and
// Claude Agent SDK captures, to ExtractLog: it must never panic, report only well-formed
// items, find nothing in a record it does not claim, and find the same items when run twice.
func FuzzExtractLog(f *testing.F) {
	dialecttest.SeedLogs(f, "claude/*/logs.json", "claudesdk/*/logs.json")
	dialecttest.FuzzLogs(f, ExtractLog)
}
