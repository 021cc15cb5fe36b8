// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/batch"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/delivery"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/outbox"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/statestore"
	"go.uber.org/zap"
)

// batchflow.go: a batch's way through the engine (pairBatch, finishBatch) and the outcomes decided
// between batches (emit), out to the pipelines (send).

// emit sends outcomes decided outside a pipeline call (expiry, shutdown: the trigger)
// downstream: the synthetic records and the released results, each to its own signal's
// pipeline. With storage, res is recorded first (with the decisions of the held records it
// releases) when record is set.
func (s *shared) emit(ctx context.Context, res []pairing.Resolution, trigger sendTrigger, record bool) error {
	var out batch.Output
	s.applier.Apply(res, &out, nil, s.clock.Now())
	if record && s.store != nil {
		// What the calls it resolved are, as a checkpoint keeps them (orphan and standalone
		// settled here included), so that a crash changes none of their further reports.
		if err := s.record(ctx, res, s.engine.AddedBatch(nil, nil, res, nil), out.Settled); err != nil {
			s.logger.Error("toolpair: expired calls and released results leave without being stored", zap.Error(err))
		}
	}
	return s.send(ctx, &out, trigger)
}

// send delivers the records of out (those the processor adds to the pipelines on its own:
// synthetic records, released results, records for another pipeline), and counts those a next
// consumer refused (otelcol_processor_toolpair_send_failed), by what triggered the send, and
// keeps them in the outbox to be sent again: no sender sends them again. With storage each
// delivery is stored before it is sent and deleted once taken (outbox.Ahead, Done): the outcomes
// that made it are stored already, so a crash during the send must not lose it. It is never
// called with a lock held.
func (s *shared) send(ctx context.Context, out *batch.Output, trigger sendTrigger) error {
	var errs []error
	for _, d := range out.Deliveries() {
		var it outbox.Item
		if d.ToLogs != nil {
			it = outbox.NewLogs(d.ToLogs, d.Logs)
		} else {
			it = outbox.NewTraces(d.ToTraces, d.Traces)
		}
		if s.store != nil {
			s.outbox.Ahead(ctx, &it)
		}
		if err := d.Send(ctx); err != nil {
			s.tel.sendFailed(ctx, d.Signal(), trigger, d.Records)
			s.outbox.Add(ctx, it, err)
			errs = append(errs, err)
			continue
		}
		s.outbox.Done(ctx, &it)
	}
	return errors.Join(errs...)
}

// pairBatch hands a batch to the engine and classifies its timeout records. The activity goes
// first, so that an eviction inside Process can put a synthetic span under an anchor of this
// very batch; the classification last, so that it sees the calls Process recorded. It runs
// before finishBatch, whose FillHeld copies held records with what the classifier wrote on
// them.
func pairBatch[D, R, N any, S batch.Signal[D, R, N]](ctx context.Context, s *shared, b *batch.Batch[D, R, N, S]) {
	if len(b.Acts) > 0 {
		s.engine.Observe(b.Acts)
	}
	if s.observeKeys != nil {
		for i := range b.Events {
			s.observeKeys(b.PosOf(b.Events[i].Ref), b.Events[i].Key)
		}
	}
	if len(b.Events) > 0 {
		b.Resolutions = s.engine.Process(b.Events, b.Hold, b.Resolutions)
	}
	if s.tmo != nil && len(b.Timeouts) > 0 {
		s.tmo.Classify(ctx, s.engine, b.Timeouts)
	}
}

// finishBatch finishes a batch whose events went through the engine and the timeout
// classifier (pairBatch): it fills the held records, records the resolutions, applies the
// outcomes (out holds the batch's pipeline and its data), removes the held and dropped
// records, and sends what goes to other pipelines. It reports whether records were removed
// and none is left, a batch that must not be forwarded.
func finishBatch[D, R, N any, S batch.Signal[D, R, N]](ctx context.Context, s *shared, b *batch.Batch[D, R, N, S], out *batch.Output) (emptied bool) {
	b.FillHeld()
	// After FillHeld: a checkpoint waiting for this batch's held records holds the engine's
	// lock, which Added takes, and the lock that orders resolution records. Before anything
	// leaves the processor.
	var added *pairing.Snapshot
	if s.store != nil {
		added = s.engine.AddedBatch(b.Events, b.Acts, b.Resolutions, statestore.MarshalHeld)
	}
	b.ReadAhead(b.Resolutions)
	now := s.clock.Now()
	s.applier.Apply(b.Resolutions, out, b, now)
	b.WriteMarks()
	b.Remember(s.delivered, now.UnixNano())
	// Before anything leaves the processor (Apply only gathers what goes out).
	if err := s.record(ctx, b.Resolutions, added, append(b.Decisions(), out.Settled...)); err != nil {
		s.logger.Error("toolpair: the outcomes and new calls of a batch leave without being stored", zap.Error(err))
	}
	removed := b.RemoveMarked()
	if out.Others() {
		if err := s.send(ctx, out, triggerRouted); err != nil {
			s.logger.Warn("toolpair: records the processor added to the pipelines were refused; they are kept and sent again", zap.Error(err))
		}
	}
	return removed && b.Len() == 0
}

// recordActivity writes, with storage, the record of a batch that gave the engine no tool
// event but brought anchor spans (a turn's or a model request's span of a call announced
// only in logs): what a synthetic span needs must survive a crash like the rest (specification
// section 9).
func recordActivity[D, R, N any, S batch.Signal[D, R, N]](ctx context.Context, s *shared, b *batch.Batch[D, R, N, S]) {
	if s.store == nil || len(b.Acts) == 0 {
		return
	}
	if added := s.engine.Added(nil, b.Acts); added != nil {
		if err := s.record(ctx, nil, added, nil); err != nil {
			s.logger.Error("toolpair: the anchor spans of a batch leave without being stored", zap.Error(err))
		}
	}
}

// record writes the resolution record of outcomes res, additions added and deliveries dels
// with storage (see statestore.Store.RecordBatch); nothing without.
func (s *shared) record(ctx context.Context, res []pairing.Resolution, added *pairing.Snapshot, dels []delivery.Entry) error {
	if s.store == nil {
		return nil
	}
	return s.store.RecordBatch(ctx, res, added, dels)
}

// groupIDs caches the hashes of the resource and scope groups a batch's records are under, the
// parts of their identities (delivery.Span, delivery.Log) they share: each made at its first
// use, once per group.
type groupIDs struct {
	res, scp         uint64
	haveRes, haveScp bool
}

// next forgets the scope's hash (a new scope group), and with res the resource's.
func (c *groupIDs) next(res bool) {
	c.haveScp = false
	if res {
		c.haveRes = false
	}
}

func (c *groupIDs) resource(r pcommon.Resource) uint64 {
	if !c.haveRes {
		c.res, c.haveRes = delivery.Resource(r), true
	}
	return c.res
}

func (c *groupIDs) scope(s pcommon.InstrumentationScope) uint64 {
	if !c.haveScp {
		c.scp, c.haveScp = delivery.Scope(s), true
	}
	return c.scp
}
