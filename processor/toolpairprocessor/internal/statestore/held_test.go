// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package statestore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/batch"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/statefile"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// TestStateHeldRecords: a held span and a held log record stored by marshalHeld come back
// through sinks as the records themselves, sent to the component's consumer of their
// signal (and dropped when the component has none), filled (wait returns at once).
func TestStateHeldRecords(t *testing.T) {
	td := ptrace.NewTraces()
	td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().Attributes().PutStr("gen_ai.tool.call.id", "w1")
	ld := plog.NewLogs()
	ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr("claude_code.tool_result")
	span := MarshalHeld(&batch.HeldSpan{Traces: td}).(statefile.Held)
	log := MarshalHeld(&batch.HeldLog{Logs: ld}).(statefile.Held)
	assert.Equal(t, synth.Traces, span.Signal)
	assert.Equal(t, synth.Logs, log.Signal)
	assert.Nil(t, MarshalHeld("other"))

	traces, logs := new(consumertest.TracesSink), new(consumertest.LogsSink)
	snk := sinks(traces, logs)
	p, err := snk.Held(span)
	require.NoError(t, err)
	hs := p.(*batch.HeldSpan)
	assert.Equal(t, "w1", hs.Span().Attributes().AsRaw()["gen_ai.tool.call.id"])
	assert.Same(t, traces, hs.Next)
	assert.True(t, hs.Wait())
	p, err = snk.Held(log)
	require.NoError(t, err)
	hl := p.(*batch.HeldLog)
	assert.Equal(t, "claude_code.tool_result", hl.Record().Body().Str())
	assert.Same(t, logs, hl.Next)

	p, err = sinks(traces, nil).Held(log)
	assert.NoError(t, err)
	assert.Nil(t, p, "no logs pipeline: the record is dropped")
}

// TestStateRefusesMisshapenHeld: a held record whose single span or log record is not in the
// first ScopeSpans/ScopeLogs (a shape the processor never writes) is refused, which discards
// the state, instead of being restored and read out of range later.
func TestStateRefusesMisshapenHeld(t *testing.T) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.ScopeSpans().AppendEmpty()
	rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName("execute_tool")
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.ScopeLogs().AppendEmpty()
	rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr("tool_result")
	snk := sinks(new(consumertest.TracesSink), new(consumertest.LogsSink))
	for name, h := range map[string]any{
		"span in second scope":       MarshalHeld(&batch.HeldSpan{Traces: td}),
		"log record in second scope": MarshalHeld(&batch.HeldLog{Logs: ld}),
		"no known signal":            statefile.Held{Signal: 9},
		"not OTLP":                   statefile.Held{Signal: synth.Traces, OTLP: []byte{0xff}},
	} {
		held := h.(statefile.Held)
		p, err := snk.Held(held)
		assert.Error(t, err, name)
		assert.Nil(t, p, name)
	}
}
