// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/batch"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/callkey"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/claim"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/delivery"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/timeout"
)

// logsProcessor is the toolpair processor of one logs pipeline. It shares its engine with
// the traces pipelines of the same component, and also delivers the synthetic log records and
// released results that outcomes decided elsewhere produce.
type logsProcessor struct {
	*shared
	ref  *componentRef // this pipeline's reference to shared
	next consumer.Logs
	pool batch.Pool[logBatch]
	// resources makes the resources of the batches' origins, one copy for as long as the
	// batches' resources stay the same.
	resources synth.ResourceCache
}

func newLogsProcessor(ref *componentRef, next consumer.Logs) *logsProcessor {
	s := ref.Value()
	if s.nextLogs == nil {
		s.nextLogs = next
	}
	return &logsProcessor{
		shared: s,
		ref:    ref,
		next:   next,
		pool:   batch.Pool[logBatch]{New: func() *logBatch { return &logBatch{} }},
	}
}

func (p *logsProcessor) start(ctx context.Context, host component.Host) error {
	return p.shared.start(ctx, host, p.ref.Holders)
}

func (p *logsProcessor) shutdown(ctx context.Context) error {
	if released, last := p.ref.Release(); released {
		return p.shared.release(ctx, last)
	}
	return nil
}

// logBatch is the per-call scratch state of processLogs, pooled.
type logBatch struct {
	batch.Batch[plog.Logs, plog.LogRecord, consumer.Logs, batch.Logs]
}

func (b *logBatch) reset() { b.Reset() }

// processLogs pairs the tool calls of a batch of log records, and classifies its timeout
// records, in one walk, as processTraces does for spans.
func (p *logsProcessor) processLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	if !p.claims.Logs() && p.tmo == nil {
		p.tel.unrecognized(ctx, synth.Logs, ld.LogRecordCount())
		return ld, nil
	}
	b := p.pool.Get()
	defer func() { b.reset(); p.pool.Put(b) }()
	b.Data, b.Next, b.Now = ld, p.next, p.clock.Now().UnixNano()

	var ids groupIDs
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		tenant := p.keys.Tenant(rl.Resource())
		fallback := p.keys.ForResource(rl.Resource())
		var resource *synth.Resource
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			sl := sls.At(j)
			ids.next(j == 0)
			lrs := sl.LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				lr := lrs.At(k)
				itemConv, _, results, again := p.extract(ctx, b, batch.Pos{Res: i, Scope: j, Rec: k}, rl, sl, lr, tenant, fallback, &resource, &ids)
				if p.tmo == nil || again {
					continue // a record delivered again has its classification already
				}
				// b.Found.Line was told before the normalization, which only sets values
				// to integers: that never makes a line a timeout line.
				var rec timeout.Record
				if results > 0 { // a tool result: the classifier needs it only as a timeout
					rec = p.tmo.Names.ResultLogIn(lr, b.Found.Line, b.Found.Attrs(lr.Attributes()))
				} else {
					rec = p.tmo.Names.LogLineIn(lr, b.Found.Line, b.Found.Attrs(lr.Attributes()))
				}
				if b.Found.ModelCall { // a custom dialect's model_call
					rec.Kind = timeout.KindModel
				}
				if !timeout.Relevant(rec) {
					continue
				}
				conv := rec.Scope
				switch {
				case itemConv != "":
					conv = itemConv // the conversation of the record's calls (a transcript line's session)
				case b.Found.ModelScope != "":
					conv = b.Found.ModelScope
				case conv == "" && rec.Transcript:
					conv = timeout.FileConversation(lr.Attributes())
				}
				if conv == "" {
					_, conv = p.keys.OfIn(b.Found.Attrs(lr.Attributes()), fallback, lr.TraceID(), nil)
				}
				b.AddTimeout(lr.Attributes(), rec, pairing.ConversationKey{Tenant: tenant, Conversation: conv})
			}
		}
	}
	p.tel.unrecognized(ctx, synth.Logs, b.Unrecognized)
	pairBatch(ctx, p.shared, &b.Batch)
	p.tel.redelivered(ctx, synth.Logs, b.Redelivered)
	if len(b.Events) == 0 {
		recordActivity(ctx, p.shared, &b.Batch)
		if b.Redelivered > 0 && b.RemoveMarked() && b.Len() == 0 {
			// Every record was delivered before and held or dropped then.
			return ld, processorhelper.ErrSkipProcessingData
		}
		return ld, nil
	}
	// The records the processor adds (synthetic records, released results) go in deliveries
	// of their own: should the next consumer refuse this batch, its sender sends only its own
	// records again, and a refused delivery of the processor's is kept and sent again.
	var out batch.Output
	if finishBatch(ctx, p.shared, &b.Batch, &out) {
		// Every record of the batch is held or dropped: nothing to forward.
		return ld, processorhelper.ErrSkipProcessingData
	}
	return ld, nil
}

// extract reads the tool calls of lr, at pos in the batch under resource group rl and scope
// group sl, with the enabled dialects, and appends their events to b; b.Found keeps what the
// dialects told of the record (its Line) until the next record. It returns the conversation of its
// calls, the number of items the dialect found (0: the record has no call, or no dialect
// recognised it; then conversation is "") and how many are results. *resource is the resource of the
// origins of rl's announcing records, made at its first use.
func (p *logsProcessor) extract(ctx context.Context, b *logBatch, pos batch.Pos, rl plog.ResourceLogs, sl plog.ScopeLogs, lr plog.LogRecord, tenant string, fallback callkey.Fallback, resource **synth.Resource, ids *groupIDs) (conv string, items, results int, again bool) {
	b.Found.Reset()
	d := p.claims.Log(ctx, rl, sl, lr, &b.Found)
	if d == nil {
		b.Unrecognized++
		return "", 0, 0, false
	}
	p.tel.malformed(ctx, d.Name, b.Found.Malformed)
	if len(b.Found.Items) == 0 {
		return "", 0, 0, false
	}
	p.tel.boundItems(ctx, d.Name, &b.Found, p.cfg.MaxCallsPerRecord)
	attrs := b.Found.Attrs(lr.Attributes()) // the record's one pass, shared with its dialect
	convAttr, conv := p.keys.ForCallsIn(d.OwnConversation, b.Found.Items, attrs, fallback, lr.TraceID(), nil)
	results = b.Found.Results()
	ref := b.AddRef(pos, lr, results)
	// The record's identity as its sender sent it, before the normalization changes it.
	var id delivery.ID
	if b.Answers(ref) > 0 {
		id = delivery.Log(ids.resource(rl.Resource()), ids.scope(sl.Scope()), lr)
	}
	if results > 0 && p.norm != nil {
		p.norm.ApplyIn(attrs)
		if lr.Body().Type() == pcommon.ValueTypeMap {
			p.norm.Apply(lr.Body().Map())
		}
	}
	if results == 1 {
		var inBody synth.Run // what the dialect read in a string body
		if b.Found.HasRun {
			inBody = synth.RunOf(b.Found.RunMs)
		}
		b.SetRun(ref, p.runtime.LogIn(lr, attrs, inBody))
	}
	if id != 0 {
		if b.Delivered(p.delivered, ref, id, b.Found.Matches()) {
			return conv, 0, results, true // what its first delivery got, without the engine
		}
	}
	var origin *synth.Origin
	if b.Announces() {
		if *resource == nil {
			*resource = p.resources.Get(rl.Resource())
		}
		origin = b.Origin(synth.Origin{
			Signal:           synth.Logs,
			Resource:         *resource,
			ConversationAttr: convAttr,
			Conversation:     conv,
			TraceID:          lr.TraceID(),
			SpanID:           lr.SpanID(),
			ToolPrefixedIDs:  b.Found.ToolPrefixedIDs,
		})
	}
	// A result event that gives its tool's duration shows when the tool started.
	var start int64
	if results > 0 {
		start = claim.LogStartIn(lr, attrs)
	}
	b.Events = b.AppendEvents(b.Events, ref, pairing.Key{Tenant: tenant, Conversation: conv}, d.Source, start, origin)
	return conv, len(b.Found.Items), results, false
}
