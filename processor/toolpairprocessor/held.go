package toolpairprocessor

import (
	"sync"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
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
