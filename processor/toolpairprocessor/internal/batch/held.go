// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package batch

import (
	"sync"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/delivery"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// Latch is the latch of a held record's copy. The hold callback closes it, under the
// engine's lock; the batch opens it once the engine has returned, after copying the record in
// (Batch.FillHeld), or without a copy when a step of the batch failed before
// (Batch.Reset), so it never stays closed. Whoever releases the record (another
// pipeline's call, the ticker, a shutdown) waits for it (wait) before reading it. The zero
// Latch is open and filled: a record restored from storage.
type Latch struct {
	latch     sync.WaitGroup // one while the record waits to be copied in
	abandoned bool           // opened without a copy; written before the latch opens
	closed    bool           // the latch is closed; read and written by the holding batch only
}

// CloseLatch closes the latch of a new held record.
func (g *Latch) CloseLatch() {
	g.latch.Add(1)
	g.closed = true
}

// open opens the latch if it is closed, telling waiters whether the record was copied in.
func (g *Latch) open(filled bool) {
	if !g.closed {
		return
	}
	g.closed, g.abandoned = false, !filled
	g.latch.Done()
}

// Abandon opens the latch with no copy, if it is still closed (Held).
func (g *Latch) Abandon() { g.open(false) }

// Wait returns once the latch is open, and reports whether the record was copied in; a
// record that was not must not be read.
func (g *Latch) Wait() bool {
	g.latch.Wait()
	return !g.abandoned
}

// HeldSpan is a result span held while it waits for its use: a Traces holding just that
// span under copies of its resource and scope, and the pipeline it came through. The engine
// keeps it from the hold callback on, under its lock, but the span is copied in after the
// engine returns (see Latch).
type HeldSpan struct {
	Latch
	Traces ptrace.Traces
	Next   consumer.Traces
	// Size is the record's bytes as held (Spans.Size; the stored OTLP bytes when restored).
	Size int64
	// ID is the record's identity in the memory of deliveries (0: not remembered), whose
	// decision is settled when the record leaves.
	ID delivery.ID
	// Run is the tool's own execution time the record states (synth.Runtime), written as its
	// duration when it is released paired.
	Run synth.Run
}

// Fill stores the copy td and opens the latch (Held).
func (h *HeldSpan) Fill(td ptrace.Traces) {
	h.Traces = td
	h.open(true)
}

// Span returns the held span.
func (h *HeldSpan) Span() ptrace.Span {
	return h.Traces.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
}

// HeldLog is a result log record held while it waits for its use, with its pipeline; filled
// as in HeldSpan (see Latch).
type HeldLog struct {
	Latch
	Logs plog.Logs
	Next consumer.Logs
	// Size is the record's bytes as held (Logs.Size; the stored OTLP bytes when restored).
	Size int64
	// ID and Run are as HeldSpan's.
	ID  delivery.ID
	Run synth.Run
}

// Fill stores the copy ld and opens the latch (Held).
func (h *HeldLog) Fill(ld plog.Logs) {
	h.Logs = ld
	h.open(true)
}

// Record returns the held log record.
func (h *HeldLog) Record() plog.LogRecord {
	return h.Logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
}

// HeldSize returns the Size of a held record (a *HeldSpan or *HeldLog), 0 for any other
// value: pairing.Config.HeldSize.
func HeldSize(held any) int64 {
	switch h := held.(type) {
	case *HeldSpan:
		return h.Size
	case *HeldLog:
		return h.Size
	}
	return 0
}

// HeldID returns the ID of a held record (a *HeldSpan or *HeldLog), 0 for any other value.
func HeldID(held any) delivery.ID {
	switch h := held.(type) {
	case *HeldSpan:
		return h.ID
	case *HeldLog:
		return h.ID
	}
	return 0
}
