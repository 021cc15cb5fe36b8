package toolpairprocessor

import (
	"context"
	"slices"
	"sync"

	"go.uber.org/zap"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/aisdk"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/claudecode"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/codex"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/geminicli"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/genai"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/openinference"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/openllmetry"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// spanDialect is a dialect of spans: extract appends the tool calls of one span to f and
// reports whether the span belongs to the dialect (even when nothing usable was found).
type spanDialect struct {
	name    string
	source  uint8
	extract func(span ptrace.Span, f *dialect.Found) bool
	// late: the span's events go to the engine after the other events of its batch (a
	// companion result record, pairing.KindCompanion: handed over after its call's main
	// result record of the same batch, it is settled at once instead of being held).
	late bool
	// ownScope: the dialect gives its items a scope of their own (dialect.Item.Scope), which
	// replaces the scope_attributes lookup (keyer.callScope); a custom dialect's scope
	// expression. Route mode reads spans with the dialects only when one of them has it.
	ownScope bool
}

// spanDialects lists the span dialects built in, in the order they are tried: the vendor
// dialects before genai, whose execute_tool and invoke_agent rules would also match Claude
// Code's spans, whose chat history rule would also match Gemini CLI's, and whose chat span
// rule would read OpenLLMetry's chat spans without the match hashes its tool spans need.
var spanDialects = []spanDialect{
	{name: claudecode.Name, source: sourceClaudeCodeSpan, extract: claudecode.ExtractSpan},
	{name: claudecode.Name, source: sourceClaudeCodeExecution, extract: claudecode.ExtractExecutionSpan, late: true},
	{name: codex.Name, source: sourceCodexSpan, extract: codex.ExtractSpan},
	{name: geminicli.Name, source: sourceGeminiCLISpan, extract: geminicli.ExtractSpan},
	{name: aisdk.Name, source: sourceAISDK, extract: aisdk.ExtractSpan},
	{name: openinference.Name, source: sourceOpenInference, extract: openinference.ExtractSpan},
	{name: openllmetry.Name, source: sourceOpenLLMetry, extract: openllmetry.ExtractSpan},
	{name: genai.Name, source: sourceGenAI, extract: func(span ptrace.Span, f *dialect.Found) bool {
		return genai.ExtractSpan(span, f) != genai.Other
	}},
}

// tracesProcessor is the toolpair processor of one traces pipeline.
type tracesProcessor struct {
	*shared
	hold     pipelineHold // this pipeline's hold on shared
	next     consumer.Traces
	dialects []spanDialect
	pool     sync.Pool // *spanBatch
	// resources makes the resources of the batches' origins, one copy for as long as the
	// batches' resources stay the same.
	resources synth.ResourceCache
}

func newTracesProcessor(s *shared, next consumer.Traces) *tracesProcessor {
	if s.nextTraces == nil {
		s.nextTraces = next
	}
	return &tracesProcessor{
		shared:   s,
		next:     next,
		dialects: enabledSpanDialects(s.cfg),
		pool:     sync.Pool{New: func() any { return &spanBatch{} }},
	}
}

// enabledSpanDialects returns the span dialects cfg enables, in the order they are tried: pair
// mode and route mode (route.go) recognise spans, and scope their calls, alike.
func enabledSpanDialects(cfg *Config) []spanDialect {
	var ds []spanDialect
	for _, d := range spanDialects {
		if cfg.dialectEnabled(d.name) {
			ds = append(ds, d)
		}
	}
	return ds
}

func (p *tracesProcessor) start(ctx context.Context, host component.Host) error {
	return p.shared.start(ctx, host)
}

func (p *tracesProcessor) shutdown(ctx context.Context) error {
	return p.hold.release(ctx, p.shared)
}

// spanRef locates a recognised span in the batch.
type spanRef struct {
	rs, ss, span int
	s            ptrace.Span
	// results counts the record's result items: a record resolving several calls is never
	// held (it would be released once per call).
	results int
	// held: the engine holds the record while it waits for its use (copied out by fillHeld);
	// dropped/kept: the outcomes of its results asked to drop it / to keep it. It leaves the
	// batch when held, or when dropped and not kept.
	held          *heldSpan
	dropped, kept bool
}

// spanBatch is the per-call scratch state of processTraces, pooled.
type spanBatch struct {
	td     ptrace.Traces
	next   consumer.Traces
	refs   []spanRef
	events []pairing.Event
	late   []pairing.Event // events of late dialects, appended to events at the end
	res    []pairing.Resolution
	found  dialect.Found
	hex    traceHex
	nheld  int // refs with held set
}

func (b *spanBatch) reset() {
	b.nheld = 0
	b.td, b.next = ptrace.Traces{}, nil
	b.refs = b.refs[:0]
	clear(b.events) // drop payload references
	b.events = b.events[:0]
	clear(b.late)
	b.late = b.late[:0]
	clear(b.res)
	b.res = b.res[:0]
	b.found.Reset()
	b.hex = traceHex{}
}

func (b *spanBatch) markResult(ref int32, r *pairing.Resolution) {
	b.refs[ref].kept = true
	synth.MarkResult(b.refs[ref].s.Attributes(), r)
	if r.Matched && r.Key.CallID != "" {
		b.refs[ref].s.Attributes().PutStr(synth.AttrToolCallID, r.Key.CallID)
	}
}

func (b *spanBatch) dropResult(ref int32) {
	b.refs[ref].dropped = true
}

// hold is the engine's hold callback, called under the engine's lock: it only makes the
// empty heldSpan of a result span that must wait for its use (locked until filled); fillHeld
// copies the span into it once the engine has returned, so that no copy is made while the
// engine is locked against the component's other pipelines and its ticker.
func (b *spanBatch) hold(ev *pairing.Event) any {
	ref := &b.refs[ev.Ref]
	if ref.results > 1 {
		return nil
	}
	h := &heldSpan{next: b.next}
	h.filled.Lock()
	ref.held = h
	b.nheld++
	return h
}

// fillHeld copies each span the engine holds, with its resource and scope, out of the
// batch into its heldSpan, and unlocks it. It must run after Process and the timeout
// classifier (whose attributes the copy keeps), and before anything else reads or changes
// the batch.
func (b *spanBatch) fillHeld() {
	if b.nheld == 0 {
		return
	}
	for i := range b.refs {
		ref := &b.refs[i]
		if ref.held == nil {
			continue
		}
		rs := b.td.ResourceSpans().At(ref.rs)
		ss := rs.ScopeSpans().At(ref.ss)
		h := ref.held
		h.td = ptrace.NewTraces()
		hrs := h.td.ResourceSpans().AppendEmpty()
		rs.Resource().CopyTo(hrs.Resource())
		hrs.SetSchemaUrl(rs.SchemaUrl())
		hss := hrs.ScopeSpans().AppendEmpty()
		ss.Scope().CopyTo(hss.Scope())
		hss.SetSchemaUrl(ss.SchemaUrl())
		ref.s.CopyTo(hss.Spans().AppendEmpty())
		h.filled.Unlock()
	}
}

// processTraces pairs the tool calls of a batch: it extracts the calls each span announces
// or resolves, hands them to the engine, writes the outcomes on result spans, removes the
// spans that are held or dropped, and appends synthetic spans and released results.
func (p *tracesProcessor) processTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	if len(p.dialects) == 0 && len(p.custom.spans) == 0 {
		p.tel.unrecognized(ctx, synth.Traces, td.SpanCount())
		if p.tmo != nil {
			p.tmo.traces(ctx, td, nil, nil)
		}
		return td, nil
	}
	b := p.pool.Get().(*spanBatch)
	defer func() { b.reset(); p.pool.Put(b) }()
	b.td, b.next = td, p.next

	unrecognized := 0
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		tenant := p.keys.tenant(rs.Resource())
		rscope := p.keys.resourceScope(rs.Resource())
		var res *synth.Resource // once per resource, when it announces a call (p.resources)
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			spans := ss.Spans()
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				if turn, model := anchorKind(span); turn || model {
					_, scopeValue := p.keys.scopeHex(span.Attributes(), rscope, span.TraceID(), &b.hex)
					p.anchors.add(pairing.ScopeKey{Tenant: tenant, Scope: scopeValue}, anchor{
						traceID: span.TraceID(), spanID: span.SpanID(),
						start: int64(span.StartTimestamp()), end: int64(span.EndTimestamp()),
						next: p.next,
					}, turn)
				}
				b.found.Reset()
				var d *spanDialect
				for n := range p.dialects {
					if p.dialects[n].extract(span, &b.found) {
						d = &p.dialects[n]
						break
					}
				}
				if d == nil && len(p.custom.spans) > 0 {
					d = p.custom.extractSpan(ctx, rs, ss, span, &b.found)
				}
				if d == nil {
					unrecognized++
					continue
				}
				p.tel.malformed(ctx, d.name, b.found.Malformed)
				if len(b.found.Items) == 0 {
					continue
				}
				scopeAttr, scopeValue := p.keys.callScope(d.ownScope, b.found.Items, span.Attributes(), rscope, span.TraceID(), &b.hex)
				ref := int32(len(b.refs))
				results := b.found.Results()
				b.refs = append(b.refs, spanRef{rs: i, ss: j, span: k, s: span, results: results})
				if results > 0 && p.norm != nil {
					// Before a result can be held, so what leaves is normalized; the engine
					// reads no duration field.
					p.norm.Apply(span.Attributes())
				}
				var origin *synth.Origin
				for _, it := range b.found.Items {
					ev := pairing.Event{
						Kind:     it.Kind,
						Key:      pairing.Key{Tenant: tenant, Scope: scopeValue, CallID: it.CallID},
						Time:     it.Time,
						ToolName: it.ToolName,
						Ref:      ref,
						Source:   d.source,
						Step:     it.Step,
						Match:    it.Match,
					}
					switch it.Kind {
					case pairing.KindResult, pairing.KindAbort, pairing.KindCompanion, pairing.KindMatch:
						// A result span is the tool's own operation: its start is a time the
						// call shows, and may come before the record that announced the call.
						ev.Start = int64(span.StartTimestamp())
					}
					if it.Kind == pairing.KindEcho {
						// An echo is not a result record: a later execute_tool span of the same
						// call is kept, marked duplicate, never dropped.
						ev.Source = sourceGenAIEcho
					}
					if it.Kind == pairing.KindUse || it.Kind == pairing.KindReject {
						if origin == nil {
							if res == nil {
								res = p.resources.Get(rs.Resource())
							}
							origin = &synth.Origin{
								Next:         p.next,
								Signal:       synth.Traces,
								Resource:     res,
								ScopeAttr:    scopeAttr,
								ScopeValue:   scopeValue,
								TraceID:      span.TraceID(),
								SpanID:       span.SpanID(),
								ParentSpanID: span.ParentSpanID(),
							}
						}
						ev.Payload = origin
					}
					if d.late {
						b.late = append(b.late, ev)
					} else {
						b.events = append(b.events, ev)
					}
				}
			}
		}
	}
	b.events = append(b.events, b.late...)
	if p.observeKeys != nil {
		for i := range b.events {
			r := &b.refs[b.events[i].Ref]
			p.observeKeys(recordPos{r.rs, r.ss, r.span}, b.events[i].Key)
		}
	}
	p.tel.unrecognized(ctx, synth.Traces, unrecognized)
	if len(b.events) > 0 {
		b.res = p.engine.Process(b.events, b.hold, b.res)
	}
	if p.tmo != nil {
		// After the engine, whose copies of the keys the tracker keeps (Event.Owned), and
		// before fillHeld: a result span the engine holds leaves as a copy, with what the
		// classifier wrote on it.
		p.tmo.traces(ctx, td, b.events, b.refs)
	}
	if len(b.events) == 0 {
		return td, nil
	}
	b.fillHeld()
	// After fillHeld: a checkpoint waiting for this batch's held records holds the lock that
	// orders resolution records. Before anything leaves the processor.
	p.recordResolutions(ctx, b.res)
	out := output{curTraces: p.next, traces: td}
	p.apply(b.res, &out, b)
	b.removeMarked()
	if len(out.toTraces)+len(out.toLogs) > 0 {
		if err := p.send(ctx, &out, triggerRouted); err != nil {
			p.logger.Warn("toolpair: sending records to other pipelines failed", zap.Error(err))
		}
	}
	return td, nil
}

// removeMarked removes the spans marked for removal (held or dropped) from the batch, and
// the scope and resource groups left empty by it. It must run after every other use of the
// refs' indexes.
func (b *spanBatch) removeMarked() {
	if !slices.ContainsFunc(b.refs, func(r spanRef) bool { return r.held != nil || (r.dropped && !r.kept) }) {
		return
	}
	rss := b.td.ResourceSpans()
	next := 0 // index into refs of the next candidate
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			k := -1
			sss.At(j).Spans().RemoveIf(func(ptrace.Span) bool {
				k++
				for next < len(b.refs) && before(b.refs[next].rs, b.refs[next].ss, b.refs[next].span, i, j, k) {
					next++
				}
				if next < len(b.refs) {
					r := b.refs[next]
					if r.rs == i && r.ss == j && r.span == k {
						return r.held != nil || (r.dropped && !r.kept)
					}
				}
				return false
			})
		}
	}
	rss.RemoveIf(func(rs ptrace.ResourceSpans) bool {
		rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool { return ss.Spans().Len() == 0 })
		return rs.ScopeSpans().Len() == 0
	})
}
