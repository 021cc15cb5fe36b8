// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestCodexToolSpanStartsBeforeDecision runs Codex's real captures with the codex.tool_result
// logs removed, so that the exec_command span is each call's result record. Codex starts that
// span before it writes the codex.tool_decision event that announces the call (specification
// section 3): the paired duration runs from the span's start, so it is never shorter than the
// span's own.
func TestCodexToolSpanStartsBeforeDecision(t *testing.T) {
	for _, scenario := range []string{"normal", "parallel"} {
		t.Run(scenario, func(t *testing.T) {
			dir := filepath.Join("..", "..", "testdata", "codex", scenario)
			td, err := golden.ReadTraces(filepath.Join(dir, "traces.json"))
			require.NoError(t, err)
			ld, err := golden.ReadLogs(filepath.Join(dir, "logs.json"))
			require.NoError(t, err)
			decided := map[string]int64{}
			ld.ResourceLogs().RemoveIf(func(rl plog.ResourceLogs) bool {
				rl.ScopeLogs().RemoveIf(func(sl plog.ScopeLogs) bool {
					sl.LogRecords().RemoveIf(func(lr plog.LogRecord) bool {
						switch logAttr(lr, "event.name") {
						case "codex.tool_decision":
							decided[logAttr(lr, "call_id")] = logTime(lr)
						case "codex.tool_result":
							return true
						}
						return false
					})
					return sl.LogRecords().Len() == 0
				})
				return rl.ScopeLogs().Len() == 0
			})
			require.NotEmpty(t, decided)
			b := newRig(t)
			require.NoError(t, b.logs.ConsumeLogs(context.Background(), ld))
			require.NoError(t, b.traces.ConsumeTraces(context.Background(), td))
			b.advance(time.Minute)
			b.shutdown()
			paired := 0
			for _, s := range tracesOut(b) {
				id := strAttr(s, "call_id")
				if s.Name() != strAttr(s, "tool_name") || id == "" {
					continue
				}
				require.Equal(t, "paired", strAttr(s, "toolpair.outcome"), id)
				paired++
				start := int64(s.StartTimestamp())
				require.Less(t, start, decided[id], "the capture's span starts before the decision")
				d, ok := s.Attributes().Get("toolpair.call.duration_ms")
				require.True(t, ok)
				// The tool's own time is the span's; the call started when the span did, so
				// the time from its start is the same and no elapsed_ms is written.
				assert.Equal(t, roundedMs(int64(s.EndTimestamp())-start), d.Int(), id)
				_, differs := s.Attributes().Get("toolpair.call.elapsed_ms")
				assert.False(t, differs, id)
			}
			assert.Equal(t, len(decided), paired)
		})
	}
}

// logTime is a log record's time as the dialects read it.
func logTime(lr plog.LogRecord) int64 {
	if t := lr.Timestamp(); t != 0 {
		return int64(t)
	}
	if t := lr.ObservedTimestamp(); t != 0 {
		return int64(t)
	}
	ts, err := time.Parse(time.RFC3339Nano, logAttr(lr, "event.timestamp"))
	if err != nil {
		return 0
	}
	return ts.UnixNano()
}

// elapsedMsOf returns the time from a paired call's start to its result that a result
// record's attributes carry: toolpair.call.elapsed_ms, or toolpair.call.duration_ms where the
// two agree (elapsed_ms is then not written; specification section 3).
func elapsedMsOf(attrs pcommon.Map) int64 {
	if v, ok := attrs.Get("toolpair.call.elapsed_ms"); ok {
		return v.Int()
	}
	v, _ := attrs.Get("toolpair.call.duration_ms")
	return v.Int()
}

// runMsOf is the tool's execution time a result span states (specification section 3): its
// duration_ms attribute (Claude Code's and Qwen Code's tool spans), else its own length
// rounded to the nearest millisecond.
func runMsOf(s ptrace.Span) int64 {
	if v, ok := s.Attributes().Get("duration_ms"); ok && v.Type() == pcommon.ValueTypeInt {
		return v.Int()
	}
	return roundedMs(int64(s.EndTimestamp() - s.StartTimestamp()))
}

// assertSpanDurations fails t unless the paired result span s carries the tool's own
// execution time (runMsOf) as toolpair.call.duration_ms and the time from useTime (Unix ns)
// to its end as its elapsed time (elapsedMsOf).
func assertSpanDurations(t *testing.T, s ptrace.Span, useTime int64, msgAndArgs ...any) {
	t.Helper()
	d, ok := s.Attributes().Get("toolpair.call.duration_ms")
	require.True(t, ok, msgAndArgs...)
	assert.Equal(t, runMsOf(s), d.Int(), msgAndArgs...)
	assert.Equal(t, roundedMs(int64(s.EndTimestamp())-useTime), elapsedMsOf(s.Attributes()), msgAndArgs...)
}

// roundedMs is ns rounded to the nearest millisecond, as toolpair.call.duration_ms and
// elapsed_ms are (specification section 3).
func roundedMs(ns int64) int64 { return (ns + int64(time.Millisecond)/2) / int64(time.Millisecond) }
