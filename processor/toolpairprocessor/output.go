package toolpairprocessor

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadata"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// output gathers the records to send downstream after applying outcomes, by the pipeline
// each belongs to: the pipeline its announcing record (for a synthetic record) or the record
// itself (for a released result) came through. The batch being processed, if any, takes the
// records of its own pipeline; the others are sent separately.
type output struct {
	curTraces consumer.Traces // the pipeline of the traces batch being processed, or nil
	traces    ptrace.Traces   // that batch
	curLogs   consumer.Logs
	logs      plog.Logs
	// other pipelines
	toTraces []routedTraces
	toLogs   []routedLogs
}

type routedTraces struct {
	next consumer.Traces
	td   ptrace.Traces
}

type routedLogs struct {
	next consumer.Logs
	ld   plog.Logs
}

// tracesFor returns where to put spans bound for next.
func (o *output) tracesFor(next consumer.Traces) ptrace.Traces {
	if o.curTraces != nil && next == o.curTraces {
		return o.traces
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

// logsFor returns where to put log records bound for next.
func (o *output) logsFor(next consumer.Logs) plog.Logs {
	if o.curLogs != nil && next == o.curLogs {
		return o.logs
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

// send delivers the records bound for other pipelines than the current batch's, and counts
// those a next consumer refused (otelcol_processor_toolpair_send_failed), by what triggered
// the send. It is never called with a lock held.
func (s *shared) send(ctx context.Context, out *output, trigger sendTrigger) error {
	var errs []error
	for _, r := range out.toTraces {
		if n := r.td.SpanCount(); n > 0 {
			if err := r.next.ConsumeTraces(ctx, r.td); err != nil {
				s.tel.sendFailed(ctx, synth.Traces, trigger, n)
				errs = append(errs, err)
			}
		}
	}
	for _, r := range out.toLogs {
		if n := r.ld.LogRecordCount(); n > 0 {
			if err := r.next.ConsumeLogs(ctx, r.ld); err != nil {
				s.tel.sendFailed(ctx, synth.Logs, trigger, n)
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// inBatch annotates or drops result records that are part of the batch being processed.
type inBatch interface {
	// markResult writes the outcome on the result record with Ref ref.
	markResult(ref int32, r *pairing.Resolution)
	// dropResult removes the result record with Ref ref from the batch (unless another of its
	// outcomes keeps it); r is the outcome that drops it.
	dropResult(ref int32, r *pairing.Resolution)
}

// apply turns outcomes into records: it marks or drops result records of the current batch
// (through b, nil outside a batch), marks and releases held results, and builds synthetic
// records, all into out. It also counts every outcome.
func (s *shared) apply(res []pairing.Resolution, out *output, b inBatch) {
	now := s.clock.Now()
	for i := range res {
		r := &res[i]
		// A duplicate from another signal than the result that resolved the call is that
		// pipeline's only record of the result: it is marked, never dropped.
		drop := (r.Outcome == pairing.OutcomeDuplicate && r.SameSource && s.cfg.Duplicates == DispositionDrop) ||
			(r.Outcome == pairing.OutcomeOrphan && s.cfg.Orphans == DispositionDrop)
		if r.ResultRef >= 0 && b != nil {
			if drop {
				b.dropResult(r.ResultRef, r)
			} else {
				b.markResult(r.ResultRef, r)
			}
		}
		if r.ResultPayload != nil && !drop {
			switch h := r.ResultPayload.(type) {
			// A record whose batch failed before copying it in (wait false) has nothing to
			// release.
			case *heldSpan:
				if h.wait() {
					synth.MarkResult(h.span().Attributes(), r)
					markMatched(h.span().Attributes(), r)
					h.td.ResourceSpans().MoveAndAppendTo(out.tracesFor(h.next).ResourceSpans())
				}
			case *heldLog:
				if h.wait() {
					synth.MarkResult(h.record().Attributes(), r)
					markMatched(h.record().Attributes(), r)
					h.ld.ResourceLogs().MoveAndAppendTo(out.logsFor(h.next).ResourceLogs())
				}
			}
		}
		if r.Synthesize() && s.cfg.Synthesize {
			o, ok := r.UsePayload.(*synth.Origin)
			if !ok {
				continue
			}
			// A synthetic record in each signal that announced the call; the span counts the
			// call when there is one (toolpair.call.counted), else the log record.
			so, lo := o.ForSignal(synth.Traces), o.ForSignal(synth.Logs)
			if so != nil {
				synth.AppendSpan(out.tracesFor(so.Next.(consumer.Traces)), r, so, metadata.ScopeName, "").
					Attributes().PutInt(synth.AttrCallCounted, 1)
				s.tel.synthetic(synth.Traces)
			}
			if lo != nil {
				lr := synth.AppendLog(out.logsFor(lo.Next.(consumer.Logs)), r, lo, metadata.ScopeName, "", now)
				s.tel.synthetic(synth.Logs)
				if so != nil {
					continue
				}
				lr.Attributes().PutInt(synth.AttrCallCounted, 1)
				// Announced in logs only: also a span in the trace of the turn it happened
				// in, when a traces pipeline has seen a span of that turn.
				if t, ok := s.anchor(r.Key.ScopeKey(), r.UseTime); ok {
					as := *lo
					as.Also = nil
					as.TraceID, as.SpanID, as.ParentSpanID = t.traceID, t.spanID, pcommon.SpanID{}
					synth.AppendSpan(out.tracesFor(t.next), r, &as, metadata.ScopeName, "").
						Attributes().PutBool(synth.AttrSyntheticCompanion, true)
					s.tel.synthetic(synth.Traces)
				}
			}
		}
	}
}

// anchor returns the anchor span of scope k to put the synthetic span of a call announced at
// time at (Unix ns) under (pairing.Engine.Anchor, within orphan_grace after a model-call
// span's end).
func (s *shared) anchor(k pairing.ScopeKey, at int64) (anchor, bool) {
	a, ok := s.engine.Anchor(k, at, int64(s.cfg.OrphanGrace))
	if !ok {
		return anchor{}, false
	}
	t, ok := a.(anchor)
	return t, ok
}
