// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/plogtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
)

// assertGoldenLogs fails t unless got equals the expected logs output of a capture,
// testdata/{agent}/{scenario}/expected_logs.yaml, whatever the order of its resources, scopes
// and records; with -update it first rewrites that file with got.
func assertGoldenLogs(t *testing.T, got plog.Logs, agent, scenario string) {
	t.Helper()
	expected := filepath.Join("..", "..", "testdata", agent, scenario, "expected_logs.yaml")
	if *update {
		require.NoError(t, golden.WriteLogs(t, expected, got))
	}
	want, err := golden.ReadLogs(expected)
	require.NoError(t, err)
	require.NoError(t, plogtest.CompareLogs(want, got,
		plogtest.IgnoreResourceLogsOrder(), plogtest.IgnoreScopeLogsOrder(), plogtest.IgnoreLogRecordsOrder()))
}

// mergedTraces and mergedLogs move everything a pipeline's sink received into one batch (the
// sink's batches are left empty).
func mergedTraces(b *rig) ptrace.Traces {
	out := ptrace.NewTraces()
	for _, td := range b.tsink.AllTraces() {
		td.ResourceSpans().MoveAndAppendTo(out.ResourceSpans())
	}
	return out
}

func mergedLogs(b *rig) plog.Logs {
	out := plog.NewLogs()
	for _, ld := range b.lsink.AllLogs() {
		ld.ResourceLogs().MoveAndAppendTo(out.ResourceLogs())
	}
	return out
}

// TestGoldenClaudeAgentSDKCapture runs a Claude Agent SDK program's real capture (its bundled
// Claude Code's spans and log events, read by claude_code), spans first, through one
// component: the call announced by the tool_decision event is paired on its claude_code.tool
// span, with the time from the span's start (before the decision) to its end; the
// claude_code.tool.execution span and the tool_result event, sources of their own, are paired
// too, each with its own duration (specification section 2); nothing is added or dropped.
func TestGoldenClaudeAgentSDKCapture(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "claudesdk", "normal")
	td, err := golden.ReadTraces(filepath.Join(dir, "traces.json"))
	require.NoError(t, err)
	ld, err := golden.ReadLogs(filepath.Join(dir, "logs.json"))
	require.NoError(t, err)
	nSpans, nLogs := td.SpanCount(), ld.LogRecordCount()
	b := newRig(t)
	b.consumeBoth(td, ld, false)
	b.advance(11 * time.Minute)
	b.shutdown()
	gotTraces, gotLogs := mergedTraces(b), mergedLogs(b)
	require.Equal(t, nSpans, gotTraces.SpanCount())
	require.Equal(t, nLogs, gotLogs.LogRecordCount())

	outcomes := map[string]string{}
	var tool ptrace.Span
	for _, s := range allSpans(gotTraces) {
		if o := strAttr(s, "toolpair.outcome"); o != "" {
			outcomes[s.Name()] = o
		}
		if s.Name() == "claude_code.tool" {
			tool = s
		}
	}
	for _, lr := range dialecttest.LogRecordsOf(gotLogs) {
		if o := logAttr(lr, "toolpair.outcome"); o != "" {
			outcomes[logAttr(lr, "event.name")] = o
		}
	}
	assert.Equal(t, map[string]string{
		"claude_code.tool": "paired", "claude_code.tool.execution": "paired", "tool_result": "paired",
	}, outcomes)
	assert.Equal(t, "toolu_mock_normal_01", strAttr(tool, "tool_use_id"))
	d, ok := tool.Attributes().Get("toolpair.call.duration_ms")
	require.True(t, ok)
	assert.Equal(t, (int64(tool.EndTimestamp())-int64(tool.StartTimestamp()))/1e6, d.Int())

	assertGoldenTraces(t, gotTraces, "claudesdk", "normal")
	assertGoldenLogs(t, gotLogs, "claudesdk", "normal")
}
