// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package statestore

import (
	"errors"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/batch"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/delivery"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/statefile"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// MarshalHeld serialises a held record (a *batch.HeldSpan or *batch.HeldLog) for the stored state, as a
// statefile.Held: the engine's Snapshot calls it under its lock. It waits for the record to
// be copied in (batch.Latch.Wait); nil for any other payload, or a record that was not copied.
func MarshalHeld(p any) any {
	switch h := p.(type) {
	case *batch.HeldSpan:
		if !h.Wait() {
			return nil
		}
		b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(h.Traces)
		if err != nil {
			return nil
		}
		return statefile.Held{Signal: synth.Traces, OTLP: b, ID: uint64(h.ID), Run: h.Run}
	case *batch.HeldLog:
		if !h.Wait() {
			return nil
		}
		b, err := (&plog.ProtoMarshaler{}).MarshalLogs(h.Logs)
		if err != nil {
			return nil
		}
		return statefile.Held{Signal: synth.Logs, OTLP: b, ID: uint64(h.ID), Run: h.Run}
	}
	return nil
}

// sinks binds a restored state to the component's next consumers: origins and held
// records of each signal go to next of that signal, anchor spans (batch.Anchor) to traces
// (nil when the component has no pipeline of that signal now: the origin, record or anchor is
// then dropped). A held record that is not one span or one log record at the position
// batch.HeldSpan.Span and batch.HeldLog.Record read is refused, which discards the state.
func sinks(traces consumer.Traces, logs consumer.Logs) statefile.Sinks {
	var anchor func(pcommon.TraceID, pcommon.SpanID, int64, int64) any
	if traces != nil {
		anchor = func(tid pcommon.TraceID, sid pcommon.SpanID, start, end int64) any {
			return batch.Anchor{TraceID: tid, SpanID: sid, Start: start, End: end, Next: traces}
		}
	}
	return statefile.Sinks{Traces: traces, Logs: logs, Anchor: anchor, Held: func(h statefile.Held) (any, error) {
		data, id := h.OTLP, delivery.ID(h.ID)
		switch h.Signal {
		case synth.Traces:
			td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(data)
			if err != nil || !oneSpan(td) {
				return nil, errors.New("a held span that is not one span")
			}
			if traces == nil {
				return nil, nil
			}
			return &batch.HeldSpan{Traces: td, Next: traces, Size: int64(len(data)), ID: id, Run: h.Run}, nil
		case synth.Logs:
			ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(data)
			if err != nil || !oneLogRecord(ld) {
				return nil, errors.New("a held log record that is not one log record")
			}
			if logs == nil {
				return nil, nil
			}
			return &batch.HeldLog{Logs: ld, Next: logs, Size: int64(len(data)), ID: id, Run: h.Run}, nil
		}
		return nil, errors.New("a held record of no known signal")
	}}
}

// oneSpan reports whether td has the only shape a held span may have: one ResourceSpans
// holding one ScopeSpans holding one span (batch.HeldSpan.Span reads that position).
func oneSpan(td ptrace.Traces) bool {
	if td.ResourceSpans().Len() != 1 {
		return false
	}
	ss := td.ResourceSpans().At(0).ScopeSpans()
	return ss.Len() == 1 && ss.At(0).Spans().Len() == 1
}

// oneLogRecord reports whether ld has the only shape a held log record may have: one
// ResourceLogs holding one ScopeLogs holding one record (batch.HeldLog.Record reads that position).
func oneLogRecord(ld plog.Logs) bool {
	if ld.ResourceLogs().Len() != 1 {
		return false
	}
	sl := ld.ResourceLogs().At(0).ScopeLogs()
	return sl.Len() == 1 && sl.At(0).LogRecords().Len() == 1
}
