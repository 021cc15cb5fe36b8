package toolpairprocessor

import (
	"errors"
	"sync"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/statefile"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// heldFill is the latch of a held record's copy. The hold callback closes it, under the
// engine's lock; the batch opens it once the engine has returned, after copying the record in
// (recordBatch.fillHeld), or without a copy when a step of the batch failed before
// (recordBatch.resetBatch), so it never stays closed. Whoever releases the record (another
// pipeline's call, the ticker, a shutdown) waits for it (wait) before reading it. The zero
// heldFill is open and filled: a record restored from storage.
type heldFill struct {
	latch     sync.WaitGroup // one while the record waits to be copied in
	abandoned bool           // opened without a copy; written before the latch opens
	closed    bool           // the latch is closed; read and written by the holding batch only
}

// closeLatch closes the latch of a new held record.
func (g *heldFill) closeLatch() {
	g.latch.Add(1)
	g.closed = true
}

// open opens the latch if it is closed, telling waiters whether the record was copied in.
func (g *heldFill) open(filled bool) {
	if !g.closed {
		return
	}
	g.closed, g.abandoned = false, !filled
	g.latch.Done()
}

// abandon opens the latch with no copy, if it is still closed (heldRecord).
func (g *heldFill) abandon() { g.open(false) }

// wait returns once the latch is open, and reports whether the record was copied in; a
// record that was not must not be read.
func (g *heldFill) wait() bool {
	g.latch.Wait()
	return !g.abandoned
}

// heldSpan is a result span held while it waits for its use: a Traces holding just that
// span under copies of its resource and scope, and the pipeline it came through. The engine
// keeps it from the hold callback on, under its lock, but the span is copied in after the
// engine returns (see heldFill).
type heldSpan struct {
	heldFill
	td   ptrace.Traces
	next consumer.Traces
}

// fill stores the copy td and opens the latch (heldRecord).
func (h *heldSpan) fill(td ptrace.Traces) {
	h.td = td
	h.open(true)
}

func (h *heldSpan) span() ptrace.Span {
	return h.td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
}

// heldLog is a result log record held while it waits for its use, with its pipeline; filled
// as in heldSpan (see heldFill).
type heldLog struct {
	heldFill
	ld   plog.Logs
	next consumer.Logs
}

// fill stores the copy ld and opens the latch (heldRecord).
func (h *heldLog) fill(ld plog.Logs) {
	h.ld = ld
	h.open(true)
}

func (h *heldLog) record() plog.LogRecord {
	return h.ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
}

// marshalHeld serialises a held record (a *heldSpan or *heldLog) for the stored state, as a
// statefile.Held: the engine's Snapshot calls it under its lock. It waits for the record to
// be copied in (heldFill.wait); nil for any other payload, or a record that was not copied.
func marshalHeld(p any) any {
	switch h := p.(type) {
	case *heldSpan:
		if !h.wait() {
			return nil
		}
		b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(h.td)
		if err != nil {
			return nil
		}
		return statefile.Held{Signal: synth.Traces, OTLP: b}
	case *heldLog:
		if !h.wait() {
			return nil
		}
		b, err := (&plog.ProtoMarshaler{}).MarshalLogs(h.ld)
		if err != nil {
			return nil
		}
		return statefile.Held{Signal: synth.Logs, OTLP: b}
	}
	return nil
}

// stateSinks binds a restored state to the component's next consumers: origins and held
// records of each signal go to next of that signal (nil when the component has no pipeline of
// that signal now: the origin or record is then dropped). A held record that is not one span
// or one log record at the position heldSpan.span and heldLog.record read is refused, which
// discards the state.
func stateSinks(traces consumer.Traces, logs consumer.Logs) statefile.Sinks {
	return statefile.Sinks{Traces: traces, Logs: logs, Held: func(sig synth.Signal, data []byte) (any, error) {
		switch sig {
		case synth.Traces:
			td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(data)
			if err != nil || !oneSpan(td) {
				return nil, errors.New("a held span that is not one span")
			}
			if traces == nil {
				return nil, nil
			}
			return &heldSpan{td: td, next: traces}, nil
		case synth.Logs:
			ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(data)
			if err != nil || !oneLogRecord(ld) {
				return nil, errors.New("a held log record that is not one log record")
			}
			if logs == nil {
				return nil, nil
			}
			return &heldLog{ld: ld, next: logs}, nil
		}
		return nil, errors.New("a held record of no known signal")
	}}
}

// oneSpan reports whether td has the only shape a held span may have: one ResourceSpans
// holding one ScopeSpans holding one span (heldSpan.span reads that position).
func oneSpan(td ptrace.Traces) bool {
	if td.ResourceSpans().Len() != 1 {
		return false
	}
	ss := td.ResourceSpans().At(0).ScopeSpans()
	return ss.Len() == 1 && ss.At(0).Spans().Len() == 1
}

// oneLogRecord reports whether ld has the only shape a held log record may have: one
// ResourceLogs holding one ScopeLogs holding one record (heldLog.record reads that position).
func oneLogRecord(ld plog.Logs) bool {
	if ld.ResourceLogs().Len() != 1 {
		return false
	}
	sl := ld.ResourceLogs().At(0).ScopeLogs()
	return sl.Len() == 1 && sl.At(0).LogRecords().Len() == 1
}
