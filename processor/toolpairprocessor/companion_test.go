// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-agent/otelcol-agent/internal/otlpsplit"
)

// splitLogs returns the log records of ld for which keep is true, under copies of their
// resource and scope.
func splitLogs(ld plog.Logs, keep func(plog.LogRecord) bool) plog.Logs {
	out := plog.NewLogs()
	ld.CopyTo(out)
	out.ResourceLogs().RemoveIf(func(rl plog.ResourceLogs) bool {
		rl.ScopeLogs().RemoveIf(func(sl plog.ScopeLogs) bool {
			sl.LogRecords().RemoveIf(func(lr plog.LogRecord) bool { return !keep(lr) })
			return sl.LogRecords().Len() == 0
		})
		return rl.ScopeLogs().Len() == 0
	})
	return out
}

// TestClaudeCodeExecutionSpanOrder runs Claude Code's real normal and parallel captures with
// each span exported on its own (the claude_code.tool.execution span of a call comes before
// its claude_code.tool span in the captures), in file order and reversed, with the log events
// before, after, or around the spans (tool_decision first, tool_result last): the
// claude_code.tool span of every call is the one marked paired, and its execution span a kept
// duplicate, whatever the order. The tool_result log event is paired only when it arrives
// before both spans.
func TestClaudeCodeExecutionSpanOrder(t *testing.T) {
	isResult := func(lr plog.LogRecord) bool { return logAttr(lr, "event.name") == "tool_result" }
	for _, scenario := range []string{"normal", "parallel"} {
		for _, logs := range []string{"logs_after", "decisions_around", "logs_first"} {
			for _, reversed := range []bool{false, true} {
				name := scenario + "/" + logs + map[bool]string{false: "/file_order", true: "/reversed"}[reversed]
				t.Run(name, func(t *testing.T) {
					td, ld := readClaude(t, scenario)
					nSpans, nLogs := td.SpanCount(), ld.LogRecordCount()
					batches := otlpsplit.Spans(td)
					if reversed {
						slices.Reverse(batches)
					}
					b := newRig(t)
					ctx := context.Background()
					switch logs {
					case "logs_first":
						require.NoError(t, b.logs.ConsumeLogs(ctx, ld))
					case "decisions_around":
						require.NoError(t, b.logs.ConsumeLogs(ctx, splitLogs(ld, func(lr plog.LogRecord) bool { return !isResult(lr) })))
					}
					for _, one := range batches {
						require.NoError(t, b.traces.ConsumeTraces(ctx, one))
					}
					switch logs {
					case "logs_after":
						require.NoError(t, b.logs.ConsumeLogs(ctx, ld))
					case "decisions_around":
						require.NoError(t, b.logs.ConsumeLogs(ctx, splitLogs(ld, isResult)))
					}
					b.advance(time.Minute)
					b.shutdown()
					spans, records := tracesOut(b), allLogs(b.lsink)
					require.Len(t, spans, nSpans)
					require.Len(t, records, nLogs)
					got := map[string]string{}
					for _, s := range spans {
						if s.Name() == "claude_code.tool" || s.Name() == "claude_code.tool.execution" {
							got[s.Name()+" "+strAttr(s, "tool_use_id")] = strAttr(s, "toolpair.outcome")
						}
					}
					for _, lr := range records {
						if isResult(lr) {
							got["tool_result "+logAttr(lr, "tool_use_id")] = logAttr(lr, "toolpair.outcome")
						}
					}
					// Each source's first record of a call is paired, whatever the order
					// (specification section 2).
					want := map[string]string{}
					for id := range got {
						want[id] = "paired"
					}
					require.Len(t, got, map[string]int{"normal": 3, "parallel": 6}[scenario])
					assert.Equal(t, want, got)
				})
			}
		}
	}
}
