// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package batch

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/delivery"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadata"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// Output gathers the records to send downstream after outcomes are applied, by the pipeline
// each belongs to: the pipeline its announcing record (for a synthetic record) or the record
// itself (for a released result) came through. The batch being processed, if any, takes the
// records of its own pipeline (CurTraces and Traces, or CurLogs and Logs); the others are sent
// by Send. The zero Output has no current batch.
type Output struct {
	CurTraces consumer.Traces // the pipeline of the traces batch being processed, or nil
	Traces    ptrace.Traces   // that batch
	CurLogs   consumer.Logs   // the pipeline of the logs batch being processed, or nil
	Logs      plog.Logs       // that batch
	// other pipelines
	toTraces []routedTraces
	toLogs   []routedLogs
	// Settled are the decisions of held records settled as they left (Applier.Delivered), to
	// be stored with the outcomes that released them.
	Settled []delivery.Entry
}

type routedTraces struct {
	next consumer.Traces
	td   ptrace.Traces
}

type routedLogs struct {
	next consumer.Logs
	ld   plog.Logs
}

// TracesFor returns where to put spans bound for next.
func (o *Output) TracesFor(next consumer.Traces) ptrace.Traces {
	if o.CurTraces != nil && next == o.CurTraces {
		return o.Traces
	}
	for _, r := range o.toTraces {
		if r.next == next {
			return r.td
		}
	}
	td := ptrace.NewTraces()
	o.toTraces = append(o.toTraces, routedTraces{next: next, td: td})
	return td
}

// LogsFor returns where to put log records bound for next.
func (o *Output) LogsFor(next consumer.Logs) plog.Logs {
	if o.CurLogs != nil && next == o.CurLogs {
		return o.Logs
	}
	for _, r := range o.toLogs {
		if r.next == next {
			return r.ld
		}
	}
	ld := plog.NewLogs()
	o.toLogs = append(o.toLogs, routedLogs{next: next, ld: ld})
	return ld
}

// Others reports whether records are bound for other pipelines than the current batch's.
func (o *Output) Others() bool { return len(o.toTraces)+len(o.toLogs) > 0 }

// Refused is one delivery of an Output: spans for ToTraces or log records for ToLogs (the
// other pair zero), and, once a next consumer refused it, the consumer's error.
type Refused struct {
	Traces   ptrace.Traces
	ToTraces consumer.Traces
	Logs     plog.Logs
	ToLogs   consumer.Logs
	Records  int
	Err      error
}

// Signal returns the signal of the refused records.
func (r *Refused) Signal() synth.Signal {
	if r.ToLogs != nil {
		return synth.Logs
	}
	return synth.Traces
}

// Deliveries returns the deliveries of the records bound for other pipelines than the
// current batch's (with no current batch, every record of o), one per next consumer, for the
// caller to send with no lock held; Refused.Err is nil.
func (o *Output) Deliveries() []Refused {
	var out []Refused
	for _, r := range o.toTraces {
		if n := r.td.SpanCount(); n > 0 {
			out = append(out, Refused{Traces: r.td, ToTraces: r.next, Records: n})
		}
	}
	for _, r := range o.toLogs {
		if n := r.ld.LogRecordCount(); n > 0 {
			out = append(out, Refused{Logs: r.ld, ToLogs: r.next, Records: n})
		}
	}
	return out
}

// Send delivers the records of Deliveries, handing each delivery a next consumer refused to
// refused. It returns the refusals joined. It must not be called with a lock held.
func (o *Output) Send(ctx context.Context, refused func(ctx context.Context, r Refused)) error {
	var errs []error
	for _, d := range o.Deliveries() {
		if err := d.Send(ctx); err != nil {
			d.Err = err
			refused(ctx, d)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Send delivers r's records to their next consumer.
func (r *Refused) Send(ctx context.Context) error {
	if r.ToLogs != nil {
		return r.ToLogs.ConsumeLogs(ctx, r.Logs)
	}
	return r.ToTraces.ConsumeTraces(ctx, r.Traces)
}

// InBatch annotates or drops result records that are part of the batch being processed
// (Batch).
type InBatch interface {
	// MarkResult writes the outcome r on the result record with Ref ref.
	MarkResult(ref int32, r *pairing.Resolution)
	// DropResult removes the result record with Ref ref from the batch (unless another of its
	// outcomes keeps it); r is the outcome that drops it.
	DropResult(ref int32, r *pairing.Resolution)
}

// Applier turns outcomes into records (specification section 3).
type Applier struct {
	// DropDuplicates and DropOrphans remove duplicate and orphan result records instead of
	// marking them (config keys duplicates and orphans: drop).
	DropDuplicates, DropOrphans bool
	// Synthesize makes the synthetic records of calls closed without a result (config key
	// synthesize).
	Synthesize bool
	// Engine finds the anchor span of a call announced only in logs (Engine.Anchor), within
	// AnchorGrace (ns) after a model-call span's end.
	Engine      *pairing.Engine
	AnchorGrace int64
	// Synthetic is told each synthetic record made, by signal.
	Synthetic func(synth.Signal)
	// Delivered, when set, is the memory of deliveries: a held record's decision is settled
	// there when it leaves (released with its marks, or dropped).
	Delivered *delivery.Memory
}

// drops reports whether the record of r is dropped rather than marked: its outcome may be
// dropped (pairing.Props.Drop) and the configuration says so, and, for an outcome dropped only
// from the source that resolved the call (Props.SameSourceOnly), r is of that source.
func (a *Applier) drops(r *pairing.Resolution) bool {
	p := r.Outcome.Props()
	if p.SameSourceOnly && !r.SameSource {
		return false
	}
	switch p.Drop {
	case pairing.DropOrphans:
		return a.DropOrphans
	case pairing.DropDuplicates:
		return a.DropDuplicates
	}
	return false
}

// Apply marks or drops the result records of the current batch (through b, nil outside a
// batch), marks and releases held results, and builds synthetic records (observed at now),
// all into out.
func (a *Applier) Apply(res []pairing.Resolution, out *Output, b InBatch, now time.Time) {
	for i := range res {
		r := &res[i]
		drop := a.drops(r)
		if r.ResultRef >= 0 && b != nil {
			if drop {
				b.DropResult(r.ResultRef, r)
			} else {
				b.MarkResult(r.ResultRef, r)
			}
		}
		if r.ResultPayload != nil {
			if drop {
				a.settle(out, HeldID(r.ResultPayload), delivery.Decision{Fate: delivery.FateDropped})
			} else {
				a.release(r, out)
			}
		}
		if r.Synthesize() && a.Synthesize {
			a.synthesize(r, out, now)
		}
	}
}

// release marks a held result record with its outcome and puts it in out. A record whose
// batch failed before copying it in (Wait false) has nothing to release.
func (a *Applier) release(r *pairing.Resolution, out *Output) {
	switch h := r.ResultPayload.(type) {
	case *HeldSpan:
		if h.Wait() {
			attrs := h.Span().Attributes()
			synth.MarkResult(attrs, r, h.Run)
			MarkMatched(attrs, r)
			a.settlePassed(out, h.ID, attrs, r.Matched)
			h.Traces.ResourceSpans().MoveAndAppendTo(out.TracesFor(h.Next).ResourceSpans())
		}
	case *HeldLog:
		if h.Wait() {
			attrs := h.Record().Attributes()
			synth.MarkResult(attrs, r, h.Run)
			MarkMatched(attrs, r)
			a.settlePassed(out, h.ID, attrs, r.Matched)
			h.Logs.ResourceLogs().MoveAndAppendTo(out.LogsFor(h.Next).ResourceLogs())
		}
	}
}

// settlePassed settles the decision of the held record id, released with the marks in attrs.
func (a *Applier) settlePassed(out *Output, id delivery.ID, attrs pcommon.Map, matched bool) {
	if a.Delivered == nil || id == 0 {
		return
	}
	a.settle(out, id, delivery.Decision{Fate: delivery.FatePassed, Marks: delivery.Capture(nil, attrs, MarkedKey(matched))})
}

// settle settles the decision of the held record id as d, noting it in out.Settled.
func (a *Applier) settle(out *Output, id delivery.ID, d delivery.Decision) {
	if a.Delivered == nil {
		return
	}
	if e, ok := a.Delivered.Settle(id, d); ok {
		out.Settled = append(out.Settled, e)
	}
}

// synthesize puts the synthetic records of a call closed without a result in out: one in
// each signal that announced the call; the span counts the call when there is one
// (toolpair.call.counted), else the log record. A call announced in logs only also gets a
// span in the trace of the turn it happened in, when a traces pipeline has seen a span of
// that turn.
func (a *Applier) synthesize(r *pairing.Resolution, out *Output, now time.Time) {
	o, ok := r.UsePayload.(*synth.Origin)
	if !ok {
		return
	}
	so, lo := o.ForSignal(synth.Traces), o.ForSignal(synth.Logs)
	if so != nil {
		synth.AppendSpan(out.TracesFor(so.Next.(consumer.Traces)), r, so, metadata.ScopeName, "").
			Attributes().PutInt(synth.AttrCallCounted, 1)
		a.Synthetic(synth.Traces)
	}
	if lo == nil {
		return
	}
	lr := synth.AppendLog(out.LogsFor(lo.Next.(consumer.Logs)), r, lo, metadata.ScopeName, "", now)
	a.Synthetic(synth.Logs)
	if so != nil {
		return
	}
	lr.Attributes().PutInt(synth.AttrCallCounted, 1)
	if t, ok := a.Anchor(r.Key.ConversationKey(), r.UseTime); ok {
		as := *lo
		as.Also = nil
		as.TraceID, as.SpanID, as.ParentSpanID = t.TraceID, t.SpanID, pcommon.SpanID{}
		synth.AppendSpan(out.TracesFor(t.Next), r, &as, metadata.ScopeName, "").
			Attributes().PutBool(synth.AttrSyntheticCompanion, true)
		a.Synthetic(synth.Traces)
	}
}

// Anchor returns the anchor span of conversation k to put the synthetic span of a call
// announced at time at (Unix ns) under (pairing.Engine.Anchor).
func (a *Applier) Anchor(k pairing.ConversationKey, at int64) (Anchor, bool) {
	v, ok := a.Engine.Anchor(k, at, a.AnchorGrace)
	if !ok {
		return Anchor{}, false
	}
	t, ok := v.(Anchor)
	return t, ok
}
