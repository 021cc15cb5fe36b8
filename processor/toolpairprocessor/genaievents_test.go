// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// TestGeminiInferenceDetailsPair runs Gemini CLI's real normal capture (logs): the call
// announced by one gen_ai.client.inference.operation.details record (in Gemini's
// "<tool>__<id>" form) is resolved by the tool_call_response of the next request's input
// messages (the wire ID), an echo: paired, nothing added or dropped. That record is the
// call's only result record, so it is the one marked paired, with the call's duration.
func TestGeminiInferenceDetailsPair(t *testing.T) {
	b := newRig(t)
	ld := readAgentLogs(t, "gemini", "normal")
	want := plog.NewLogs()
	ld.CopyTo(want)
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), ld))
	b.advance(11 * time.Minute)
	s := b.stats()
	assert.Equal(t, uint64(1), s.UsesSeen)
	assert.Equal(t, uint64(1), s.Paired)
	assert.Zero(t, s.Pending)
	assert.Zero(t, s.InterruptedTotal())
	b.shutdown()
	assert.Empty(t, syntheticLogs(b))
	assert.Equal(t, want.LogRecordCount(), len(allLogs(b.lsink)))
	var marked []plog.LogRecord
	for _, lr := range allLogs(b.lsink) {
		if logAttr(lr, "toolpair.outcome") != "" {
			marked = append(marked, lr)
		}
	}
	require.Len(t, marked, 1)
	assert.Equal(t, "gen_ai.client.inference.operation.details", logAttr(marked[0], "event.name"))
	assert.Equal(t, "paired", logAttr(marked[0], "toolpair.outcome"))
	assert.NotEmpty(t, logAttr(marked[0], "toolpair.call.duration_ms"))
}

// TestGeminiInterruptedCall: killed during the tool, Gemini CLI leaves only the details record
// announcing the call; after pairing_timeout it gets one synthetic record, keyed by session.id.
func TestGeminiInterruptedCall(t *testing.T) {
	b := newRig(t)
	ld := readAgentLogs(t, "gemini", "interrupt_sigterm")
	n := ld.LogRecordCount()
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), ld))
	b.advance(11 * time.Minute)
	logs := syntheticLogs(b)
	require.Len(t, logs, 1)
	assert.Equal(t, "tool call run_shell_command__run_shell_command_1795323400327_0 (run_shell_command) interrupted: expired", logs[0].Body().Str())
	assert.Equal(t, "99842fde-5e88-40a7-84db-a0b1a99e68bc", logAttr(logs[0], "session.id"))
	b.shutdown()
	assert.Len(t, allLogs(b.lsink), n+1)
}

// TestSemconvEventsEchoDoesNotDropTheToolSpan: a gen_ai.choice announces a call, its
// execute_tool span resolves it, and the gen_ai.tool.message of the next request (history)
// is its source's first record of the result: paired too, never dropped, and not counting
// the call (specification section 2); the choice is not marked.
func TestSemconvEventsEchoDoesNotDropTheToolSpan(t *testing.T) {
	b := newRig(t)
	events := func(recs ...func(plog.LogRecord)) plog.Logs {
		ld := plog.NewLogs()
		rl := ld.ResourceLogs().AppendEmpty()
		rl.Resource().Attributes().PutStr("service.name", "py-agent")
		lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
		for _, r := range recs {
			lr := lrs.AppendEmpty()
			lr.Attributes().PutStr("gen_ai.conversation.id", "conv")
			r(lr)
		}
		return ld
	}
	choice := func(lr plog.LogRecord) {
		lr.SetEventName("gen_ai.choice")
		lr.SetTimestamp(ctTS(1000))
		_ = lr.Body().SetEmptyMap().FromRaw(map[string]any{"index": 0, "message": map[string]any{
			"tool_calls": []any{map[string]any{"id": "call_w", "function": map[string]any{"name": "get_weather"}}}}})
	}
	toolMsg := func(lr plog.LogRecord) {
		lr.SetEventName("gen_ai.tool.message")
		lr.SetTimestamp(ctTS(3000))
		_ = lr.Body().SetEmptyMap().FromRaw(map[string]any{"id": "call_w", "content": "sunny"})
	}
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), events(choice)))
	spec := toolSpan(1, "call_w", 2000)
	spec.service = "py-agent"
	spec.attrs["gen_ai.conversation.id"] = "conv"
	td := spanBatchOf(spec)
	require.NoError(t, b.traces.ConsumeTraces(context.Background(), td))
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), events(toolMsg)))
	b.advance(time.Minute)
	b.shutdown()
	spans := tracesOut(b)
	require.Len(t, spans, 1)
	assert.Equal(t, "paired", strAttr(spans[0], "toolpair.outcome"))
	logs := allLogs(b.lsink)
	require.Len(t, logs, 2)
	for _, lr := range logs {
		want := map[string]string{"gen_ai.tool.message": "paired"}[lr.EventName()]
		assert.Equal(t, want, logAttr(lr, "toolpair.outcome"), lr.EventName())
		_, counted := lr.Attributes().Get(synth.AttrCallCounted)
		assert.False(t, counted, "the span counts the call")
	}
}
