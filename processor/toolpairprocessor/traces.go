// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/batch"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/callkey"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/delivery"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/timeout"
)

// tracesProcessor is the toolpair processor of one traces pipeline.
type tracesProcessor struct {
	*shared
	ref  *componentRef // this pipeline's reference to shared
	next consumer.Traces
	pool batch.Pool[spanBatch]
	// resources makes the resources of the batches' origins, one copy for as long as the
	// batches' resources stay the same.
	resources synth.ResourceCache
}

func newTracesProcessor(ref *componentRef, next consumer.Traces) *tracesProcessor {
	s := ref.Value()
	if s.nextTraces == nil {
		s.nextTraces = next
	}
	return &tracesProcessor{
		shared: s,
		ref:    ref,
		next:   next,
		pool:   batch.Pool[spanBatch]{New: func() *spanBatch { return &spanBatch{} }},
	}
}

func (p *tracesProcessor) start(ctx context.Context, host component.Host) error {
	return p.shared.start(ctx, host, p.ref.Holders)
}

func (p *tracesProcessor) shutdown(ctx context.Context) error {
	if released, last := p.ref.Release(); released {
		return p.shared.release(ctx, last)
	}
	return nil
}

// spanBatch is the per-call scratch state of processTraces, pooled.
type spanBatch struct {
	batch.Batch[ptrace.Traces, ptrace.Span, consumer.Traces, batch.Spans]
	late []pairing.Event // events of late dialects, appended to events at the end
	hex  callkey.TraceHex
}

func (b *spanBatch) reset() {
	b.Reset()
	clear(b.late)
	b.late = b.late[:0]
	b.hex = callkey.TraceHex{}
}

// processTraces pairs the tool calls of a batch in one walk over its spans: it extracts the
// calls each span announces or resolves, the anchor spans and (with timeout classification)
// the model calls, compactions and timeout spans, hands them to the engine, classifies the
// timeout spans, writes the outcomes on result spans, removes the spans that are held or
// dropped, and appends synthetic spans and released results.
func (p *tracesProcessor) processTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	b := p.pool.Get()
	defer func() { b.reset(); p.pool.Put(b) }()
	b.Data, b.Next, b.Now = td, p.next, p.clock.Now().UnixNano()

	var ids groupIDs
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		tenant := p.keys.Tenant(rs.Resource())
		fallback := p.keys.ForResource(rs.Resource())
		var resource *synth.Resource // once per resource, when it announces a call (p.resources)
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			ids.next(j == 0)
			spans := ss.Spans()
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				// A new record: its attributes are read in one pass (b.Found.Attrs) that its
				// conversation, its dialects and the timeout classifier share.
				b.Found.Reset()
				// The span's own conversation (scope_attributes, else its trace), looked up once for
				// an anchor span that is also a model call.
				var own string
				ownDone := false
				if turn, model := batch.AnchorKind(span); turn || model {
					_, own = p.keys.OfIn(b.Found.Attrs(span.Attributes()), fallback, span.TraceID(), &b.hex)
					ownDone = true
					b.Acts = append(b.Acts, batch.AnchorActivity(pairing.ConversationKey{Tenant: tenant, Conversation: own}, span, turn, p.next))
				}
				conv, items, results, again := p.extract(ctx, b, batch.Pos{Res: i, Scope: j, Rec: k}, rs, ss, span, tenant, fallback, &resource, &ids)
				if p.tmo == nil || again {
					continue // a span delivered again has its classification already
				}
				var rec timeout.Record
				if results > 0 { // a dialect found a tool result in it: needed only as a timeout
					rec = p.tmo.Names.ResultSpanIn(span, b.Found.Attrs(span.Attributes()))
				} else {
					rec = p.tmo.Names.SpanIn(span, b.Found.Attrs(span.Attributes()))
				}
				if b.Found.ModelCall { // a custom dialect's model_call
					rec.Kind = timeout.KindModel
				}
				if !timeout.Relevant(rec) {
					continue
				}
				if items == 0 {
					if !ownDone {
						_, own = p.keys.OfIn(b.Found.Attrs(span.Attributes()), fallback, span.TraceID(), &b.hex)
					}
					conv = own
					if b.Found.ModelScope != "" {
						conv = b.Found.ModelScope
					}
				}
				b.AddTimeout(span.Attributes(), rec, pairing.ConversationKey{Tenant: tenant, Conversation: conv})
			}
		}
	}
	b.Events = append(b.Events, b.late...)
	p.tel.unrecognized(ctx, synth.Traces, b.Unrecognized)
	pairBatch(ctx, p.shared, &b.Batch)
	p.tel.redelivered(ctx, synth.Traces, b.Redelivered)
	if len(b.Events) == 0 {
		recordActivity(ctx, p.shared, &b.Batch)
		if b.Redelivered > 0 && b.RemoveMarked() && b.Len() == 0 {
			// Every record was delivered before and held or dropped then.
			return td, processorhelper.ErrSkipProcessingData
		}
		return td, nil
	}
	// The records the processor adds (synthetic records, released results) go in deliveries
	// of their own: should the next consumer refuse this batch, its sender sends only its own
	// records again, and a refused delivery of the processor's is kept and sent again.
	var out batch.Output
	if finishBatch(ctx, p.shared, &b.Batch, &out) {
		// Every record of the batch is held or dropped: nothing to forward.
		return td, processorhelper.ErrSkipProcessingData
	}
	return td, nil
}

// extract reads the tool calls of span, at pos in the batch under resource group rs and scope
// group ss, with the enabled dialects, and appends their events to b; b.Found must be reset
// for span. It returns the conversation of
// its calls, the number of items the dialect found (0: the span has no call, or no dialect
// recognised it; then conversation is "") and how many are results. *resource is the resource of the
// origins of rs's announcing spans, made at its first use.
func (p *tracesProcessor) extract(ctx context.Context, b *spanBatch, pos batch.Pos, rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, span ptrace.Span, tenant string, fallback callkey.Fallback, resource **synth.Resource, ids *groupIDs) (conv string, items, results int, again bool) {
	d := p.claims.Span(ctx, rs, ss, span, &b.Found)
	if d == nil {
		b.Unrecognized++
		return "", 0, 0, false
	}
	p.tel.malformed(ctx, d.Name, b.Found.Malformed)
	if len(b.Found.Items) == 0 {
		return "", 0, 0, false
	}
	p.tel.boundItems(ctx, d.Name, &b.Found, p.cfg.MaxCallsPerRecord)
	convAttr, conv := p.keys.ForCallsIn(d.OwnConversation, b.Found.Items, b.Found.Attrs(span.Attributes()), fallback, span.TraceID(), &b.hex)
	results = b.Found.Results()
	ref := b.AddRef(pos, span, results)
	if results > 0 && p.norm != nil {
		// Before a result can be held, so what leaves is normalized; the engine reads no
		// duration field.
		p.norm.ApplyIn(b.Found.Attrs(span.Attributes()))
	}
	if results == 1 {
		b.SetRun(ref, p.runtime.SpanIn(span, b.Found.Attrs(span.Attributes())))
	}
	if b.Answers(ref) > 0 {
		id := delivery.Span(ids.resource(rs.Resource()), ids.scope(ss.Scope()), span)
		if b.Delivered(p.delivered, ref, id, b.Found.Matches()) {
			return conv, 0, results, true // what its first delivery got, without the engine
		}
	}
	var origin *synth.Origin
	if b.Announces() {
		if *resource == nil {
			*resource = p.resources.Get(rs.Resource())
		}
		origin = b.Origin(synth.Origin{
			Signal:           synth.Traces,
			Resource:         *resource,
			ConversationAttr: convAttr,
			Conversation:     conv,
			TraceID:          span.TraceID(),
			SpanID:           span.SpanID(),
			ParentSpanID:     span.ParentSpanID(),
			ToolPrefixedIDs:  b.Found.ToolPrefixedIDs,
		})
	}
	// A result span is the tool's own operation: its start is a time the call shows.
	key, start := pairing.Key{Tenant: tenant, Conversation: conv}, int64(span.StartTimestamp())
	if d.Late {
		b.late = b.AppendEvents(b.late, ref, key, d.Source, start, origin)
	} else {
		b.Events = b.AppendEvents(b.Events, ref, key, d.Source, start, origin)
	}
	return conv, len(b.Found.Items), results, false
}
