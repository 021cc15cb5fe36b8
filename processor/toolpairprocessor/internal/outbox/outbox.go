// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package outbox keeps the records a toolpair processor sent on its own and a next consumer
// refused (specification section 9): synthetic records of closed calls, held results released
// by their use or at orphan_grace, records bound for another pipeline of the component. No
// sender will send them again (the sender of a batch sends only its own records), so the
// processor does: an Outbox holds them, oldest first, within a bound in bytes, and sends them
// again (Flush) until the next consumer takes them. With storage, each is written to the
// storage extension while it waits (Persister), so that it survives a restart.
//
// The data flow: Output.Send refuses a delivery -> Add (persisted, the oldest given up past
// the bound) -> every tick, Flush, oldest first, stopping at the first refusal and then
// waiting longer each time (Backoff) -> sent (deleted from storage) or, on a permanent error,
// given up.
package outbox

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Item is one refused delivery: spans for a traces consumer, or log records for a logs
// consumer (the other pair is zero).
type Item struct {
	// Seq numbers the items of an Outbox in the order they were added (from 1); the storage
	// key of a persisted item.
	Seq      uint64
	Traces   ptrace.Traces
	ToTraces consumer.Traces
	Logs     plog.Logs
	ToLogs   consumer.Logs
	// Size is the item's OTLP protobuf size in bytes (what counts against the bound, and
	// what is stored).
	Size int64
}

// IsLogs reports whether the item holds log records.
func (it *Item) IsLogs() bool { return it.ToLogs != nil }

// Records returns the number of spans or log records of the item.
func (it *Item) Records() int {
	if it.IsLogs() {
		return it.Logs.LogRecordCount()
	}
	return it.Traces.SpanCount()
}

func (it *Item) send(ctx context.Context) error {
	if it.IsLogs() {
		return it.ToLogs.ConsumeLogs(ctx, it.Logs)
	}
	return it.ToTraces.ConsumeTraces(ctx, it.Traces)
}

// NewTraces returns the item of spans td refused by next.
func NewTraces(next consumer.Traces, td ptrace.Traces) Item {
	return Item{Traces: td, ToTraces: next, Size: int64((&ptrace.ProtoMarshaler{}).TracesSize(td))}
}

// NewLogs returns the item of log records ld refused by next.
func NewLogs(next consumer.Logs, ld plog.Logs) Item {
	return Item{Logs: ld, ToLogs: next, Size: int64((&plog.ProtoMarshaler{}).LogsSize(ld))}
}

// Reason is why records were given up.
type Reason string

const (
	// ReasonBound: the oldest records beyond Options.MaxBytes.
	ReasonBound Reason = "bound"
	// ReasonPermanent: the next consumer's error was permanent (consumererror.IsPermanent):
	// sending again cannot succeed.
	ReasonPermanent Reason = "permanent"
	// ReasonShutdown: still unsent when the component stopped without storage.
	ReasonShutdown Reason = "shutdown"
)

// Persister keeps the items while they wait (the component's storage); nil without storage.
type Persister interface {
	// Put stores item it under its Seq.
	Put(ctx context.Context, it *Item) error
	// Delete removes the item stored under seq.
	Delete(ctx context.Context, seq uint64) error
}

// Telemetry is told what an Outbox does, for the component's metrics.
type Telemetry interface {
	// Resent counts the records of an item sent again and taken.
	Resent(ctx context.Context, logs bool, n int)
	// Refused counts the records of an item sent again and refused once more.
	Refused(ctx context.Context, logs bool, n int, err error)
	// GivenUp counts the records of an item given up, and why.
	GivenUp(ctx context.Context, logs bool, n int, why Reason, err error)
}

// Options are an Outbox's bound, retry pacing and collaborators.
type Options struct {
	// MaxBytes bounds the bytes held (max_unsent_bytes); adding beyond it gives up the oldest.
	MaxBytes int64
	// MinBackoff and MaxBackoff pace the retries after a refusal: the first retry waits
	// MinBackoff, each refusal doubles the wait up to MaxBackoff, a success resets it.
	MinBackoff, MaxBackoff time.Duration
	Telemetry              Telemetry
}

// Outbox is the refused deliveries of one component, oldest first, safe for concurrent use.
type Outbox struct {
	o Options

	mu       sync.Mutex
	items    []Item
	bytes    int64
	records  int
	seq      uint64
	persist  Persister
	flushing bool      // a Flush is sending: another returns at once
	retryAt  time.Time // no retry before
	backoff  time.Duration
}

// New returns an empty Outbox.
func New(o Options) *Outbox { return &Outbox{o: o} }

// SetPersister makes the outbox store its items in p from now on (nil: none); items added
// before are stored now. Errors are returned joined; the items stay held either way.
func (b *Outbox) SetPersister(ctx context.Context, p Persister) error {
	b.mu.Lock()
	b.persist = p
	items := append([]Item(nil), b.items...)
	b.mu.Unlock()
	if p == nil {
		return nil
	}
	var errs []error
	for i := range items {
		errs = append(errs, p.Put(ctx, &items[i]))
	}
	return errors.Join(errs...)
}

// Restore adds items read back from storage (oldest first, with their Seq), before any other
// item; later items are numbered after them and after next-1 (the next number storage had
// not used). They are not stored again.
func (b *Outbox) Restore(items []Item, next uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if next > 0 {
		b.seq = max(b.seq, next-1)
	}
	for _, it := range items {
		b.items = append(b.items, it)
		b.bytes += it.Size
		b.records += it.Records()
		b.seq = max(b.seq, it.Seq)
	}
}

// Len returns the number of records waiting to be sent again.
func (b *Outbox) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.records
}

// Ahead stores it with the persister before its first send (write-ahead: a crash during the
// send leaves it stored, and the restarted component sends it again), numbering it; without a
// persister it does nothing. Done forgets it once taken; Add keeps it, already stored, when
// refused.
func (b *Outbox) Ahead(ctx context.Context, it *Item) {
	b.mu.Lock()
	p := b.persist
	if p != nil {
		b.seq++
		it.Seq = b.seq
	}
	b.mu.Unlock()
	if p != nil && p.Put(ctx, it) != nil {
		it.Seq = 0 // not stored
	}
}

// Done deletes from the persister an item stored by Ahead and taken by its next consumer.
func (b *Outbox) Done(ctx context.Context, it *Item) {
	b.mu.Lock()
	p := b.persist
	b.mu.Unlock()
	if p != nil && it.Seq != 0 {
		_ = p.Delete(ctx, it.Seq)
	}
}

// Add keeps item it, refused by its next consumer with err: given up at once when err is
// permanent; else stored (with a persister, unless Ahead stored it already) and held, the
// oldest held given up while the bytes held exceed MaxBytes (it included: an item larger than
// the bound is given up).
func (b *Outbox) Add(ctx context.Context, it Item, err error) {
	if consumererror.IsPermanent(err) {
		b.Done(ctx, &it)
		b.o.Telemetry.GivenUp(ctx, it.IsLogs(), it.Records(), ReasonPermanent, err)
		return
	}
	b.mu.Lock()
	stored := it.Seq != 0
	if !stored {
		b.seq++
		it.Seq = b.seq
	}
	b.items = append(b.items, it)
	b.bytes += it.Size
	b.records += it.Records()
	var gone []Item
	for b.bytes > b.o.MaxBytes && len(b.items) > 0 {
		gone = append(gone, b.pop())
	}
	p := b.persist
	if b.retryAt.IsZero() {
		b.retryAt = time.Now().Add(b.o.MinBackoff)
	}
	b.mu.Unlock()
	kept := true
	for i := range gone {
		b.o.Telemetry.GivenUp(ctx, gone[i].IsLogs(), gone[i].Records(), ReasonBound, err)
		if p != nil {
			_ = p.Delete(ctx, gone[i].Seq)
		}
		kept = kept && gone[i].Seq != it.Seq
	}
	if p != nil && kept && !stored {
		_ = p.Put(ctx, &it)
	}
}

// pop removes and returns the oldest item; b.mu is held.
func (b *Outbox) pop() Item {
	it := b.items[0]
	b.items[0] = Item{}
	b.items = b.items[1:]
	b.bytes -= it.Size
	b.records -= it.Records()
	return it
}

// Flush sends the held items again, oldest first, unless now is before the retry pacing
// allows or another Flush is sending: each taken is removed (and deleted from storage), the
// first refused stays first and ends the flush, and the next flush waits longer. It is never
// called with a lock held.
func (b *Outbox) Flush(ctx context.Context, now time.Time) {
	b.mu.Lock()
	if b.flushing || len(b.items) == 0 || now.Before(b.retryAt) {
		b.mu.Unlock()
		return
	}
	b.flushing = true
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.flushing = false
		b.mu.Unlock()
	}()
	for ctx.Err() == nil {
		b.mu.Lock()
		if len(b.items) == 0 {
			b.backoff, b.retryAt = 0, time.Time{}
			b.mu.Unlock()
			return
		}
		it := b.items[0]
		b.mu.Unlock()
		err := it.send(ctx)
		b.mu.Lock()
		if err != nil && !consumererror.IsPermanent(err) {
			b.backoff = min(max(2*b.backoff, b.o.MinBackoff), b.o.MaxBackoff)
			b.retryAt = now.Add(b.backoff)
			b.mu.Unlock()
			b.o.Telemetry.Refused(ctx, it.IsLogs(), it.Records(), err)
			return
		}
		// Still first: nothing but this flush removes items from the front, except Add
		// giving up the oldest past the bound.
		if len(b.items) > 0 && b.items[0].Seq == it.Seq {
			b.pop()
		}
		if err == nil {
			b.backoff = 0 // taken: the next refusal waits MinBackoff again
		}
		p := b.persist
		b.mu.Unlock()
		if err != nil {
			b.o.Telemetry.GivenUp(ctx, it.IsLogs(), it.Records(), ReasonPermanent, err)
		} else {
			b.o.Telemetry.Resent(ctx, it.IsLogs(), it.Records())
		}
		if p != nil {
			_ = p.Delete(ctx, it.Seq)
		}
	}
}

// FlushNow sends the held items again at once, whatever the pacing (a shutdown's last try).
func (b *Outbox) FlushNow(ctx context.Context) {
	b.mu.Lock()
	b.retryAt = time.Time{}
	b.mu.Unlock()
	b.Flush(ctx, time.Now())
}

// GiveUp gives up every held item (ReasonShutdown), without deleting them from storage.
func (b *Outbox) GiveUp(ctx context.Context) {
	b.mu.Lock()
	items := b.items
	b.items, b.bytes, b.records = nil, 0, 0
	b.mu.Unlock()
	for i := range items {
		b.o.Telemetry.GivenUp(ctx, items[i].IsLogs(), items[i].Records(), ReasonShutdown, nil)
	}
}
