// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/claim"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
)

func readClaude(t *testing.T, scenario string) (ptrace.Traces, plog.Logs) {
	t.Helper()
	dir := filepath.Join("..", "..", "testdata", "claude", scenario)
	td, err := golden.ReadTraces(filepath.Join(dir, "traces.json"))
	require.NoError(t, err)
	ld, err := golden.ReadLogs(filepath.Join(dir, "logs.json"))
	require.NoError(t, err)
	return td, ld
}

func allLogs(sink *consumertest.LogsSink) []plog.LogRecord {
	var out []plog.LogRecord
	for _, ld := range sink.AllLogs() {
		out = append(out, dialecttest.LogRecordsOf(ld)...)
	}
	return out
}

func logAttr(lr plog.LogRecord, k string) string {
	if v, ok := lr.Attributes().Get(k); ok {
		return v.AsString()
	}
	return ""
}

// logAgent describes how an agent's log events name a tool call, for the tests that run its
// real captures.
type logAgent struct {
	dir                string // under testdata/
	decision, result   string // event.name values
	idAttr, scopeAttr  string
	time               func(plog.LogRecord) int64
	interruptedMessage string // body of the synthetic record of interrupt_sigterm's call
}

var logAgents = []logAgent{
	{
		dir: "claude", decision: "tool_decision", result: "tool_result", idAttr: "tool_use_id", scopeAttr: "session.id",
		time:               func(lr plog.LogRecord) int64 { return int64(lr.Timestamp()) },
		interruptedMessage: "tool call toolu_mock_interrupt_01 (Bash) interrupted: expired",
	},
	{
		dir: "codex", decision: "codex.tool_decision", result: "codex.tool_result", idAttr: "call_id", scopeAttr: "conversation.id",
		// Codex sends timeUnixNano 0: its observed time is the record's time.
		time:               func(lr plog.LogRecord) int64 { return int64(lr.ObservedTimestamp()) },
		interruptedMessage: "tool call call_mock_interrupt_01 (exec_command) interrupted: expired",
	},
}

func readAgentLogs(t *testing.T, dir, scenario string) plog.Logs {
	t.Helper()
	ld, err := golden.ReadLogs(filepath.Join("..", "..", "testdata", dir, scenario, "logs.json"))
	require.NoError(t, err)
	return ld
}

// TestAgentLogsPairDecisionWithResult runs the real Claude Code and Codex log captures: every
// result event is paired, timed from the earlier of its decision event and the start its own
// duration_ms shows (so never shorter than the tool's own duration), and nothing is added or
// lost.
func TestAgentLogsPairDecisionWithResult(t *testing.T) {
	for _, a := range logAgents {
		for _, scenario := range []string{"normal", "parallel", "tool_timeout_nobg"} {
			if _, err := os.Stat(filepath.Join("..", "..", "testdata", a.dir, scenario)); err != nil {
				continue // not captured for this agent
			}
			t.Run(a.dir+"/"+scenario, func(t *testing.T) {
				b := newRig(t)
				ld := readAgentLogs(t, a.dir, scenario)
				n := ld.LogRecordCount()
				require.NoError(t, b.logs.ConsumeLogs(context.Background(), ld))
				b.shutdown()
				logs := allLogs(b.lsink)
				assert.Len(t, logs, n, "nothing dropped, nothing added")
				decided := map[string]int64{}
				for _, lr := range logs {
					if logAttr(lr, "event.name") == a.decision {
						decided[logAttr(lr, a.idAttr)] = a.time(lr)
					}
				}
				require.NotEmpty(t, decided)
				results := 0
				for _, lr := range logs {
					if logAttr(lr, "event.name") != a.result {
						continue
					}
					results++
					id := logAttr(lr, a.idAttr)
					assert.Equal(t, "paired", logAttr(lr, "toolpair.outcome"), id)
					d, _ := lr.Attributes().Get("toolpair.call.duration_ms")
					assert.Equal(t, ownDurationMs(lr), d.Int(), "%s: the agent's own duration_ms", id)
					start := decided[id]
					if own := claim.LogStart(lr); own > 0 {
						start = min(start, own)
					}
					elapsed := elapsedMsOf(lr.Attributes())
					assert.Equal(t, roundedMs(a.time(lr)-start), elapsed, id)
					assert.GreaterOrEqual(t, elapsed, ownDurationMs(lr), id)
				}
				assert.Equal(t, len(decided), results)
			})
		}
	}
}

// ownDurationMs is a result event's own duration_ms (an int or a decimal string), else 0.
func ownDurationMs(lr plog.LogRecord) int64 {
	v, ok := lr.Attributes().Get("duration_ms")
	if !ok {
		return 0
	}
	if v.Type() == pcommon.ValueTypeInt {
		return v.Int()
	}
	n, _ := strconv.ParseInt(v.Str(), 10, 64)
	return n
}

// TestAgentInterruptedCallGetsSyntheticLogRecord: the process was killed during the tool, so
// only the decision event exists; after pairing_timeout the call gets one synthetic record,
// and not a second one at shutdown.
func TestAgentInterruptedCallGetsSyntheticLogRecord(t *testing.T) {
	for _, a := range logAgents {
		t.Run(a.dir, func(t *testing.T) {
			b := newRig(t)
			ld := readAgentLogs(t, a.dir, "interrupt_sigterm")
			n := ld.LogRecordCount()
			require.NoError(t, b.logs.ConsumeLogs(context.Background(), ld))
			b.advance(10 * time.Minute)
			var synthetic []plog.LogRecord
			for _, lr := range allLogs(b.lsink) {
				if lr.EventName() == "toolpair.tool_call.interrupted" {
					synthetic = append(synthetic, lr)
				}
			}
			require.Len(t, synthetic, 1)
			lr := synthetic[0]
			assert.Equal(t, a.interruptedMessage, lr.Body().Str())
			assert.Equal(t, plog.SeverityNumberWarn, lr.SeverityNumber())
			assert.Equal(t, "expired", logAttr(lr, "toolpair.interrupt.reason"))
			assert.NotEmpty(t, logAttr(lr, a.scopeAttr), "the scope attribute that keyed the call")
			b.shutdown()
			assert.Len(t, allLogs(b.lsink), n+1, "not synthesised again at shutdown")
		})
	}
}

// TestCrossSignalPairing feeds Claude Code's spans before its logs through one component:
// the claude_code.tool span (a result in traces) waits for the tool_decision log (the use),
// pairs with it, and the tool_result log, a second result in another signal, is kept and
// marked duplicate.
func TestCrossSignalPairing(t *testing.T) {
	b := newRig(t)
	td, ld := readClaude(t, "normal")
	require.NoError(t, b.traces.ConsumeTraces(context.Background(), td))
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), ld))
	b.shutdown()

	var toolSpans []ptrace.Span
	for _, td := range b.tsink.AllTraces() {
		for _, s := range allSpans(td) {
			if s.Name() == "claude_code.tool" {
				toolSpans = append(toolSpans, s)
			}
		}
	}
	require.Len(t, toolSpans, 1)
	assert.Equal(t, "paired", strAttr(toolSpans[0], "toolpair.outcome"))
	var resultLogs []plog.LogRecord
	for _, lr := range allLogs(b.lsink) {
		if logAttr(lr, "event.name") == "tool_result" {
			resultLogs = append(resultLogs, lr)
		}
	}
	require.Len(t, resultLogs, 1)
	assert.Equal(t, "paired", logAttr(resultLogs[0], "toolpair.outcome"), "its source's first record of the call (section 2)")
}

// TestRejectedCallHasNoSyntheticRecord: a Claude Code decision "reject" resolves its call as
// rejected; no synthetic record follows, even at shutdown.
func TestRejectedCallHasNoSyntheticRecord(t *testing.T) {
	b := newRig(t)
	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.Body().SetStr("claude_code.tool_decision")
	lr.SetTimestamp(1_000_000)
	require.NoError(t, lr.Attributes().FromRaw(map[string]any{
		"event.name": "tool_decision", "tool_use_id": "toolu_r", "tool_name": "Bash", "decision": "reject", "session.id": "s",
	}))
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), ld))
	b.advance(11 * time.Minute)
	b.shutdown()
	assert.Len(t, allLogs(b.lsink), 1, "the decision only")
	s := b.stats()
	assert.Equal(t, uint64(1), s.Rejected)
	assert.Zero(t, s.InterruptedTotal())
}
