package toolpairprocessor

import (
	"context"
	"slices"
	"sync"

	"go.uber.org/zap"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/claudecode"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/codex"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/geminicli"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/genaievents"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/transcript"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// logDialect is a dialect of log records: extract appends the tool calls of one record to f
// and reports whether the record belongs to the dialect (even when nothing usable was found).
type logDialect struct {
	name    string
	source  uint8
	extract func(lr plog.LogRecord, f *dialect.Found) bool
	// ownScope: the dialect gives its items a scope of their own (dialect.Item.Scope), which
	// replaces the scope_attributes lookup (keyer.callScope): a transcript line's session or
	// file, a custom dialect's scope expression.
	ownScope bool
}

// Sources tell the engine which dialect a result came from: a duplicate from another source
// than the result that resolved its call is kept (see README, Dialects).
const (
	sourceGenAI uint8 = iota + 1
	sourceClaudeCode
	sourceTranscript
	sourceCodex
	sourceGenAIEcho
	sourceClaudeCodeSpan
	sourceClaudeCodeExecution
	sourceCodexSpan
	sourceGenAIEvents
	sourceGeminiCLISpan
	sourceGeminiCLI
	sourceAISDK
	sourceOpenInference
	sourceOpenLLMetry
)

// logDialects lists the log dialects built in, in the order they are tried: gemini_cli
// before genai_events, which would also read Gemini CLI's operation details events.
var logDialects = []logDialect{
	{name: claudecode.Name, source: sourceClaudeCode, extract: claudecode.ExtractLog},
	{name: codex.Name, source: sourceCodex, extract: codex.ExtractLog},
	{name: geminicli.Name, source: sourceGeminiCLI, extract: geminicli.ExtractLog},
	{name: genaievents.Name, source: sourceGenAIEvents, extract: genaievents.ExtractLog},
	{name: transcript.Name, source: sourceTranscript, extract: transcript.ExtractLog, ownScope: true},
}

// logsProcessor is the toolpair processor of one logs pipeline. It shares its engine with
// the traces pipelines of the same component, and also delivers the synthetic log records and
// released results that outcomes decided elsewhere produce.
type logsProcessor struct {
	*shared
	next     consumer.Logs
	dialects []logDialect
	pool     sync.Pool // *logBatch
	// resources makes the resources of the batches' origins, one copy for as long as the
	// batches' resources stay the same.
	resources synth.ResourceCache
}

func newLogsProcessor(s *shared, next consumer.Logs) *logsProcessor {
	if s.nextLogs == nil {
		s.nextLogs = next
	}
	return &logsProcessor{
		shared:   s,
		next:     next,
		dialects: enabledLogDialects(s.cfg),
		pool:     sync.Pool{New: func() any { return &logBatch{} }},
	}
}

// enabledLogDialects returns the log dialects cfg enables, in the order they are tried: pair
// mode and route mode (route.go) recognise records, and scope their calls, alike.
func enabledLogDialects(cfg *Config) []logDialect {
	var ds []logDialect
	for _, d := range logDialects {
		if cfg.dialectEnabled(d.name) {
			ds = append(ds, d)
		}
	}
	return ds
}

func (p *logsProcessor) start(ctx context.Context, host component.Host) error {
	return p.shared.start(ctx, host)
}

func (p *logsProcessor) shutdown(ctx context.Context) error {
	return p.shared.shutdown(ctx)
}

type logRef struct {
	rl, sl, lr int
	r          plog.LogRecord
	// results counts the record's result items: a record resolving several calls is never
	// held (it would be released once per call).
	results int
	// held: the engine holds the record while it waits for its use (copied out by fillHeld);
	// dropped/kept: the outcomes of its results asked to drop it / to keep it. It leaves the
	// batch when held, or when dropped and not kept.
	held          *heldLog
	dropped, kept bool
}

// logBatch is the per-call scratch state of processLogs, pooled.
type logBatch struct {
	ld     plog.Logs
	next   consumer.Logs
	refs   []logRef
	events []pairing.Event
	res    []pairing.Resolution
	found  dialect.Found
	// lines holds what the dialects told of each record of the batch, in batch order, for
	// the timeout classifier (only when it is enabled).
	lines []dialect.Line
	nheld int // refs with held set
}

func (b *logBatch) reset() {
	b.nheld = 0
	b.ld, b.next = plog.Logs{}, nil
	b.refs = b.refs[:0]
	clear(b.events)
	b.events = b.events[:0]
	clear(b.res)
	b.res = b.res[:0]
	b.found.Reset()
	b.lines = b.lines[:0]
}

func (b *logBatch) markResult(ref int32, r *pairing.Resolution) {
	b.refs[ref].kept = true
	synth.MarkResult(b.refs[ref].r.Attributes(), r)
}

func (b *logBatch) dropResult(ref int32) {
	b.refs[ref].dropped = true
}

// hold is the engine's hold callback, as spanBatch.hold: under the engine's lock it only
// makes the empty heldLog (locked until filled); fillHeld copies the record into it.
func (b *logBatch) hold(ev *pairing.Event) any {
	ref := &b.refs[ev.Ref]
	if ref.results > 1 {
		return nil
	}
	h := &heldLog{next: b.next}
	h.filled.Lock()
	ref.held = h
	b.nheld++
	return h
}

// fillHeld copies each log record the engine holds, with its resource and scope, out of the
// batch into its heldLog, and unlocks it. It must run after Process and the timeout
// classifier (whose attributes the copy keeps), and before anything else reads or changes
// the batch.
func (b *logBatch) fillHeld() {
	if b.nheld == 0 {
		return
	}
	for i := range b.refs {
		ref := &b.refs[i]
		if ref.held == nil {
			continue
		}
		rl := b.ld.ResourceLogs().At(ref.rl)
		sl := rl.ScopeLogs().At(ref.sl)
		h := ref.held
		h.ld = plog.NewLogs()
		hrl := h.ld.ResourceLogs().AppendEmpty()
		rl.Resource().CopyTo(hrl.Resource())
		hrl.SetSchemaUrl(rl.SchemaUrl())
		hsl := hrl.ScopeLogs().AppendEmpty()
		sl.Scope().CopyTo(hsl.Scope())
		hsl.SetSchemaUrl(sl.SchemaUrl())
		ref.r.CopyTo(hsl.LogRecords().AppendEmpty())
		h.filled.Unlock()
	}
}

// processLogs pairs the tool calls of a batch of log records, as processTraces does for
// spans.
func (p *logsProcessor) processLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	if len(p.dialects) == 0 && len(p.custom.logs) == 0 {
		p.tel.unrecognized(ctx, synth.Logs, ld.LogRecordCount())
		if p.tmo != nil {
			p.tmo.logs(ctx, ld, nil, nil, nil)
		}
		return ld, nil
	}
	b := p.pool.Get().(*logBatch)
	defer func() { b.reset(); p.pool.Put(b) }()
	b.ld, b.next = ld, p.next

	unrecognized := 0
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		tenant := p.keys.tenant(rl.Resource())
		rscope := p.keys.resourceScope(rl.Resource())
		var res *synth.Resource
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			sl := sls.At(j)
			lrs := sl.LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				lr := lrs.At(k)
				b.found.Reset()
				var d *logDialect
				for n := range p.dialects {
					if p.dialects[n].extract(lr, &b.found) {
						d = &p.dialects[n]
						break
					}
				}
				if d == nil && len(p.custom.logs) > 0 {
					d = p.custom.extractLog(ctx, rl, sl, lr, &b.found)
				}
				if p.tmo != nil {
					// Told before the normalization below, which only sets values to
					// integers: that never makes a line a timeout line.
					b.lines = append(b.lines, b.found.Line)
				}
				if d == nil {
					unrecognized++
					continue
				}
				p.tel.malformed(ctx, d.name, b.found.Malformed)
				if len(b.found.Items) == 0 {
					continue
				}
				scopeAttr, scopeValue := p.keys.callScope(d.ownScope, b.found.Items, lr.Attributes(), rscope, lr.TraceID(), nil)
				ref := int32(len(b.refs))
				results := b.found.Results()
				b.refs = append(b.refs, logRef{rl: i, sl: j, lr: k, r: lr, results: results})
				if results > 0 && p.norm != nil {
					p.norm.Apply(lr.Attributes())
					if lr.Body().Type() == pcommon.ValueTypeMap {
						p.norm.Apply(lr.Body().Map())
					}
				}
				var origin *synth.Origin
				var start int64 // of the record's operation, for its results (logStart)
				if results > 0 {
					start = logStart(lr)
				}
				for _, it := range b.found.Items {
					ev := pairing.Event{
						Kind:     it.Kind,
						Key:      pairing.Key{Tenant: tenant, Scope: scopeValue, CallID: it.CallID},
						Time:     it.Time,
						ToolName: it.ToolName,
						Ref:      ref,
						Source:   d.source,
						Step:     it.Step,
					}
					switch it.Kind {
					case pairing.KindResult, pairing.KindAbort, pairing.KindCompanion, pairing.KindMatch:
						// A result event that gives its tool's duration shows when the tool
						// started, which may come before the record that announced the call.
						ev.Start = start
					}
					if it.Kind == pairing.KindUse || it.Kind == pairing.KindReject {
						if origin == nil {
							if res == nil {
								res = p.resources.Get(rl.Resource())
							}
							origin = &synth.Origin{
								Next:       p.next,
								Signal:     synth.Logs,
								Resource:   res,
								ScopeAttr:  scopeAttr,
								ScopeValue: scopeValue,
								TraceID:    lr.TraceID(),
								SpanID:     lr.SpanID(),
							}
						}
						ev.Payload = origin
					}
					b.events = append(b.events, ev)
				}
			}
		}
	}
	p.tel.unrecognized(ctx, synth.Logs, unrecognized)
	if p.observeKeys != nil {
		for i := range b.events {
			r := &b.refs[b.events[i].Ref]
			p.observeKeys(recordPos{r.rl, r.sl, r.lr}, b.events[i].Key)
		}
	}
	if len(b.events) > 0 {
		b.res = p.engine.Process(b.events, b.hold, b.res)
	}
	if p.tmo != nil {
		// After the engine, whose copies of the keys the tracker keeps (Event.Owned), and
		// before fillHeld: a result record the engine holds leaves as a copy, with what the
		// classifier wrote on it.
		p.tmo.logs(ctx, ld, b.events, b.refs, b.lines)
	}
	if len(b.events) == 0 {
		return ld, nil
	}
	b.fillHeld()
	// After fillHeld: a checkpoint waiting for this batch's held records holds the lock that
	// orders resolution records. Before anything leaves the processor.
	p.recordResolutions(ctx, b.res)
	out := output{curLogs: p.next, logs: ld}
	p.apply(b.res, &out, b)
	b.removeMarked()
	if len(out.toTraces)+len(out.toLogs) > 0 {
		if err := p.send(ctx, &out, triggerRouted); err != nil {
			p.logger.Warn("toolpair: sending records to other pipelines failed", zap.Error(err))
		}
	}
	return ld, nil
}

// removeMarked removes the log records marked for removal, and the groups left empty.
func (b *logBatch) removeMarked() {
	if !slices.ContainsFunc(b.refs, func(r logRef) bool { return r.held != nil || (r.dropped && !r.kept) }) {
		return
	}
	rls := b.ld.ResourceLogs()
	next := 0
	for i := 0; i < rls.Len(); i++ {
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			k := -1
			sls.At(j).LogRecords().RemoveIf(func(plog.LogRecord) bool {
				k++
				for next < len(b.refs) && before(b.refs[next].rl, b.refs[next].sl, b.refs[next].lr, i, j, k) {
					next++
				}
				if next < len(b.refs) {
					r := b.refs[next]
					if r.rl == i && r.sl == j && r.lr == k {
						return r.held != nil || (r.dropped && !r.kept)
					}
				}
				return false
			})
		}
	}
	rls.RemoveIf(func(rl plog.ResourceLogs) bool {
		rl.ScopeLogs().RemoveIf(func(sl plog.ScopeLogs) bool { return sl.LogRecords().Len() == 0 })
		return rl.ScopeLogs().Len() == 0
	})
}

// before reports whether position (a1, a2, a3) comes before (b1, b2, b3) in batch order.
func before(a1, a2, a3, b1, b2, b3 int) bool {
	if a1 != b1 {
		return a1 < b1
	}
	if a2 != b2 {
		return a2 < b2
	}
	return a3 < b3
}
