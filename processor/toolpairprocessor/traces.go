package toolpairprocessor

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/callkey"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/timeout"
)

// tracesProcessor is the toolpair processor of one traces pipeline.
type tracesProcessor struct {
	*shared
	hold pipelineHold // this pipeline's hold on shared
	next consumer.Traces
	pool sync.Pool // *spanBatch
	// resources makes the resources of the batches' origins, one copy for as long as the
	// batches' resources stay the same.
	resources synth.ResourceCache
}

func newTracesProcessor(s *shared, next consumer.Traces) *tracesProcessor {
	if s.nextTraces == nil {
		s.nextTraces = next
	}
	return &tracesProcessor{
		shared: s,
		next:   next,
		pool:   sync.Pool{New: func() any { return &spanBatch{} }},
	}
}

func (p *tracesProcessor) start(ctx context.Context, host component.Host) error {
	return p.shared.start(ctx, host)
}

func (p *tracesProcessor) shutdown(ctx context.Context) error {
	return p.hold.release(ctx, p.shared)
}

// spanSignal is the recordSignal of spans.
type spanSignal struct{}

func (spanSignal) attributes(s ptrace.Span) pcommon.Map { return s.Attributes() }

func (spanSignal) newHeld(next consumer.Traces) heldRecord[ptrace.Traces] {
	h := &heldSpan{next: next}
	h.closeLatch()
	return h
}

func (spanSignal) copyOut(td ptrace.Traces, pos recordPos, s ptrace.Span) ptrace.Traces {
	rs := td.ResourceSpans().At(pos.res)
	ss := rs.ScopeSpans().At(pos.scope)
	out := ptrace.NewTraces()
	ors := out.ResourceSpans().AppendEmpty()
	rs.Resource().CopyTo(ors.Resource())
	ors.SetSchemaUrl(rs.SchemaUrl())
	oss := ors.ScopeSpans().AppendEmpty()
	ss.Scope().CopyTo(oss.Scope())
	oss.SetSchemaUrl(ss.SchemaUrl())
	s.CopyTo(oss.Spans().AppendEmpty())
	return out
}

func (spanSignal) removeIf(td ptrace.Traces, m remover) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			k := -1
			sss.At(j).Spans().RemoveIf(func(ptrace.Span) bool {
				k++
				return m.removes(recordPos{i, j, k})
			})
		}
	}
	rss.RemoveIf(func(rs ptrace.ResourceSpans) bool {
		rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool { return ss.Spans().Len() == 0 })
		return rs.ScopeSpans().Len() == 0
	})
}

func (spanSignal) count(td ptrace.Traces) int { return td.SpanCount() }

func (spanSignal) signal() synth.Signal { return synth.Traces }

// spanRef locates a recognised span in the batch.
type spanRef = recordRef[ptrace.Traces, ptrace.Span]

// spanBatch is the per-call scratch state of processTraces, pooled.
type spanBatch struct {
	recordBatch[ptrace.Traces, ptrace.Span, consumer.Traces, spanSignal]
	late []pairing.Event // events of late dialects, appended to events at the end
	hex  callkey.TraceHex
}

func (b *spanBatch) reset() {
	b.resetBatch()
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
	b := p.pool.Get().(*spanBatch)
	defer func() { b.reset(); p.pool.Put(b) }()
	b.data, b.next = td, p.next

	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		tenant := p.keys.Tenant(rs.Resource())
		rscope := p.keys.ForResource(rs.Resource())
		var res *synth.Resource // once per resource, when it announces a call (p.resources)
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			spans := ss.Spans()
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				// The span's own scope (scope_attributes, else its trace), looked up once for
				// an anchor span that is also a model call.
				var own string
				ownDone := false
				if turn, model := anchorKind(span); turn || model {
					_, own = p.keys.Of(span.Attributes(), rscope, span.TraceID(), &b.hex)
					ownDone = true
					b.acts = append(b.acts, anchorActivity(pairing.ScopeKey{Tenant: tenant, Scope: own}, span, turn, p.next))
				}
				scope, items, results := p.extract(ctx, b, recordPos{i, j, k}, rs, ss, span, tenant, rscope, &res)
				if p.tmo == nil {
					continue
				}
				rec := p.tmo.Names.Span(span)
				if results > 0 {
					rec.Kind = timeout.KindTool // a dialect found a tool result in it
				}
				if !timeout.Relevant(rec) {
					continue
				}
				if items == 0 {
					if !ownDone {
						_, own = p.keys.Of(span.Attributes(), rscope, span.TraceID(), &b.hex)
					}
					scope = own
				}
				b.addTimeout(span.Attributes(), rec, pairing.ScopeKey{Tenant: tenant, Scope: scope})
			}
		}
	}
	b.events = append(b.events, b.late...)
	p.tel.unrecognized(ctx, synth.Traces, b.unrecognized)
	b.pair(ctx, p.shared)
	if len(b.events) == 0 {
		return td, nil
	}
	out := output{curTraces: p.next, traces: td}
	if b.settle(ctx, p.shared, &out) {
		// Every record of the batch is held or dropped: nothing to forward.
		return td, processorhelper.ErrSkipProcessingData
	}
	return td, nil
}

// extract reads the tool calls of span, at pos in the batch under resource group rs and scope
// group ss, with the enabled dialects, and appends their events to b. It returns the scope of
// its calls, the number of items the dialect found (0: the span has no call, or no dialect
// recognised it; then scope is "") and how many are results. *res is the resource of the
// origins of rs's announcing spans, made at its first use.
func (p *tracesProcessor) extract(ctx context.Context, b *spanBatch, pos recordPos, rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, span ptrace.Span, tenant string, rscope callkey.Fallback, res **synth.Resource) (scope string, items, results int) {
	b.found.Reset()
	d := p.claims.Span(ctx, rs, ss, span, &b.found)
	if d == nil {
		b.unrecognized++
		return "", 0, 0
	}
	if !b.claimed(ctx, p.tel, d.Name) {
		return "", 0, 0
	}
	scopeAttr, scope := p.keys.ForCalls(d.OwnConversation, b.found.Items, span.Attributes(), rscope, span.TraceID(), &b.hex)
	results = b.found.Results()
	ref := b.addRef(pos, span, results)
	if results > 0 && p.norm != nil {
		// Before a result can be held, so what leaves is normalized; the engine reads no
		// duration field.
		p.norm.Apply(span.Attributes())
	}
	var origin *synth.Origin
	if b.announces() {
		if *res == nil {
			*res = p.resources.Get(rs.Resource())
		}
		origin = &synth.Origin{
			Next:         p.next,
			Signal:       synth.Traces,
			Resource:     *res,
			ScopeAttr:    scopeAttr,
			ScopeValue:   scope,
			TraceID:      span.TraceID(),
			SpanID:       span.SpanID(),
			ParentSpanID: span.ParentSpanID(),
		}
	}
	// A result span is the tool's own operation: its start is a time the call shows.
	key, start := pairing.Key{Tenant: tenant, Scope: scope}, int64(span.StartTimestamp())
	if d.Late {
		b.late = b.appendEvents(b.late, ref, key, d.Source, start, origin)
	} else {
		b.events = b.appendEvents(b.events, ref, key, d.Source, start, origin)
	}
	return scope, len(b.found.Items), results
}
