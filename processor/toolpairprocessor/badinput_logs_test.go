// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/plogtest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadatatest"
)

// badLogs builds a batch of log records whose tool input is malformed in the ways each log
// dialect can meet (non-JSON and truncated lines, IDs of the wrong type or missing, numbers
// and booleans as strings), plus records that are no tool records at all.
func badLogs() plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "bad-agent")
	lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
	add := func(body any, attrs map[string]any) {
		lr := lrs.AppendEmpty()
		lr.SetObservedTimestamp(1_000_000_000)
		switch b := body.(type) {
		case string:
			lr.Body().SetStr(b)
		case map[string]any:
			_ = lr.Body().SetEmptyMap().FromRaw(b)
		}
		_ = lr.Attributes().FromRaw(attrs)
	}
	file := map[string]any{"log.file.path": "/s/a.jsonl"}
	// not tool records
	add("2026-02-10 INFO not JSON at all", file)
	add(`{"type":"session","version":3,"id":"x"}`, file)
	// transcript
	add(`{"type":"user","sessionId":"s1","message":{"content":[{"type":"tool_res`, file)
	add(`{"type":"message","id":"e","message":{"role":"toolResult","toolCallId":"t","content":[{"ty`, file)
	add(`{"type":"message","id":"e","message":{"role":"toolResult","isError":"true","timestamp":"1795326787629"}}`, file)
	add(`{"type":"assistant","sessionId":"s1","message":{"content":[{"type":"tool_use","id":42,"name":"Bash"}]}}`, file)
	// claude_code: strings for numbers are normal; the ID is what must be a string
	add("claude_code.tool_result", map[string]any{"event.name": "tool_result", "tool_use_id": int64(7), "success": "true", "duration_ms": "31"})
	add("claude_code.tool_decision", map[string]any{"event.name": "tool_decision", "decision": "accept", "duration_ms": "x"})
	// codex
	add(nil, map[string]any{"event.name": "codex.tool_result", "call_id": "", "duration_ms": "48", "success": "true"})
	// genai_events
	add(map[string]any{"index": 0, "message": map[string]any{"tool_calls": []any{map[string]any{"id": int64(5)}}}}, map[string]any{"event.name": "gen_ai.choice"})
	add(`{"id":"call_1","content":"sun`, map[string]any{"event.name": "gen_ai.tool.message"})
	add(nil, map[string]any{"event.name": "gen_ai.client.inference.operation.details", "gen_ai.output.messages": `[{"parts":[{"type":"tool_call","id":null}]}]`})
	return ld
}

func TestBadLogsPassThroughAndAreCounted(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	f := newFactoryWithClock(newTestClock())
	cfg := f.CreateDefaultConfig().(*Config)
	sink := new(consumertest.LogsSink)
	proc, err := f.CreateLogs(context.Background(), metadatatest.NewSettings(tel), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, proc.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, proc.ConsumeLogs(context.Background(), badLogs()))
	require.NoError(t, proc.Shutdown(context.Background()))

	got := plog.NewLogs()
	for _, ld := range sink.AllLogs() {
		ld.ResourceLogs().MoveAndAppendTo(got.ResourceLogs())
	}
	require.NoError(t, plogtest.CompareLogs(badLogs(), got), "passed through unchanged, nothing added")

	point := func(d, reason string, n int64) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{
			Attributes: attribute.NewSet(attribute.String("toolpair.dialect", d), attribute.String("reason", reason)),
			Value:      n,
		}
	}
	metadatatest.AssertEqualProcessorToolpairMalformed(t, tel, []metricdata.DataPoint[int64]{
		point("transcript", "invalid_json", 2),
		point("transcript", "missing_call_id", 1),
		point("transcript", "invalid_call_id", 1),
		point("claude_code", "invalid_call_id", 1),
		point("claude_code", "missing_call_id", 1),
		point("codex", "missing_call_id", 1),
		point("genai_events", "invalid_call_id", 1),
		point("genai_events", "invalid_json", 1),
		point("genai_events", "null_call_id", 1),
	}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorToolpairRecordsUnrecognized(t, tel, []metricdata.DataPoint[int64]{{
		Attributes: attribute.NewSet(attribute.String("otel.signal", "logs")),
		Value:      2, // the plain log line and the session header
	}}, metricdatatest.IgnoreTimestamp())
}
