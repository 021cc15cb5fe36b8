package toolpairprocessor

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/inflight"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/timeout"
)

// Attributes written on timeout records (specification section 4).
const (
	// AttrTimeoutPhase is toolpair.timeout.phase: tool_execution, provider, compaction or
	// unknown.
	AttrTimeoutPhase = "toolpair.timeout.phase"
	// AttrTimeoutActiveTools is toolpair.timeout.active_tools (int): the tool calls of the
	// record's scope in flight at its instant.
	AttrTimeoutActiveTools = "toolpair.timeout.active_tools"
	// AttrTimeoutActiveToolName is toolpair.timeout.active_tool.name: the tool of the most
	// recently started call in flight (written only when its name is known).
	AttrTimeoutActiveToolName = "toolpair.timeout.active_tool.name"
	// AttrTimeoutActiveToolCallID is toolpair.timeout.active_tool.call_id.
	AttrTimeoutActiveToolCallID = "toolpair.timeout.active_tool.call_id"
	// AttrTimeoutActiveToolElapsed is toolpair.timeout.active_tool.elapsed_ms (int, ms): the
	// record's end minus the call's announcement or start, truncated.
	AttrTimeoutActiveToolElapsed = "toolpair.timeout.active_tool.elapsed_ms"
)

// settle is how long after its end a model call or compaction still counts as in flight for
// a turn-level timeout: the timeout error of a model call ends the records of the step, turn
// and agent that wait on it within milliseconds (0.5 ms for the Vercel AI SDK, 9 ms for
// Claude Code in the corpus captures).
const settle = time.Second

// timeouts classifies the timeout records of a component (specification section 4). It is nil
// when timeout_classification is disabled.
type timeouts struct {
	names  *timeout.Names
	flight *inflight.Tracker
	keys   *keyer
	tel    *telemetry
	pool   sync.Pool // *timeoutBatch
}

// timeoutBatch is the per-batch scratch state, pooled: the updates for the tracker and the
// timeout records to classify once they are applied.
type timeoutBatch struct {
	updates []inflight.Update
	pending []pendingTimeout
	scopes  []string // logs: the scope a dialect gave each ref
	keys    []refKey // traces: the scope key of each ref's events
	hex     traceHex
	fed     int // events fed so far (see feed)
}

func (b *timeoutBatch) reset() {
	clear(b.updates)
	b.updates = b.updates[:0]
	clear(b.pending)
	b.pending = b.pending[:0]
	clear(b.scopes)
	b.scopes = b.scopes[:0]
	clear(b.keys)
	b.keys = b.keys[:0]
	b.hex = traceHex{}
	b.fed = 0
}

// refKey is the scope key of a record's events, and whether its strings are the engine's
// (pairing.Event.Owned).
type refKey struct {
	key   pairing.ScopeKey
	owned bool
}

// pendingTimeout is a timeout record of the batch, classified once every operation of the
// batch has been recorded.
type pendingTimeout struct {
	attrs pcommon.Map
	rec   timeout.Record
	key   pairing.ScopeKey
}

func newTimeouts(cfg *TimeoutClassificationConfig, keys *keyer, tel *telemetry, clock pairing.Clock) (*timeouts, error) {
	if !cfg.Enabled {
		return nil, nil
	}
	names, err := timeout.NewNames(cfg.CompactionSpanNames, cfg.CompactionEventNames)
	if err != nil {
		return nil, err
	}
	flight, err := inflight.New(inflight.Config{
		Retention:     cfg.Retention,
		MaxOperations: cfg.MaxTrackedOperations,
		Settle:        settle,
		Now:           clock.Now,
	})
	if err != nil {
		return nil, err
	}
	t := &timeouts{names: names, flight: flight, keys: keys, tel: tel}
	t.pool.New = func() any { return &timeoutBatch{} }
	return t, nil
}

// feed adds the tool calls that a batch's events announce and resolve to b, for the events
// from b.fed on whose record comes at or before ref in the batch (all of them for ref -1),
// so that the updates of a record and of the records near it, mostly of one scope, stay
// together for the tracker. start returns the start of the operation of a result record (a
// span's start; a log's time minus its duration), 0 when unknown.
func (b *timeoutBatch) feed(events []pairing.Event, ref int32, start func(ref int32) int64) {
	for ; b.fed < len(events) && (ref < 0 || events[b.fed].Ref <= ref); b.fed++ {
		ev := &events[b.fed]
		u := inflight.Update{Scope: ev.Key.ScopeKey(), CallID: ev.Key.CallID, Tool: ev.ToolName, Owned: ev.Owned}
		switch ev.Kind {
		case pairing.KindUse:
			u.Op, u.Start = inflight.OpAnnounce, ev.Time
		case pairing.KindResult, pairing.KindAbort, pairing.KindCompanion, pairing.KindMatch:
			if ev.Key.CallID == "" {
				continue // a KindMatch that found no call
			}
			if s := start(ev.Ref); s > 0 {
				a := u
				a.Op, a.Start = inflight.OpAnnounce, s
				b.updates = append(b.updates, a)
			}
			u.Op, u.End = inflight.OpResolve, ev.Time
		case pairing.KindEcho, pairing.KindReject, pairing.KindRefused:
			u.Op, u.End = inflight.OpResolve, ev.Time
		default:
			continue
		}
		b.updates = append(b.updates, u)
	}
}

// resolved records the end of the calls the engine interrupted, at the instant the
// interruption ended them (the boundary, the session end, or when it was detected), and of
// the calls paired by a held result without a call ID when their use arrived (the result's
// record named no call when it came in): from the call's start to the result's time.
func (t *timeouts) resolved(res []pairing.Resolution) {
	b := t.pool.Get().(*timeoutBatch)
	defer func() { b.reset(); t.pool.Put(b) }()
	for i := range res {
		r := &res[i]
		switch {
		case r.Outcome == pairing.OutcomeInterrupted && r.EndTime > 0:
			b.updates = append(b.updates, inflight.Update{Op: inflight.OpResolve, Scope: r.Key.ScopeKey(), CallID: r.Key.CallID, Tool: r.ToolName, End: r.EndTime})
		case r.Outcome == pairing.OutcomePaired && r.Matched && r.ResultPayload != nil && r.Key.CallID != "":
			u := inflight.Update{Scope: r.Key.ScopeKey(), CallID: r.Key.CallID, Tool: r.ToolName}
			a := u
			a.Op, a.Start = inflight.OpAnnounce, r.UseTime
			u.Op, u.End = inflight.OpResolve, r.ResultTime
			b.updates = append(b.updates, a, u)
		}
	}
	t.flight.Apply(b.updates)
}

// traces classifies the timeout spans of td, after recording the batch's tool calls
// (events, whose Refs index refs) and its model-call and compaction spans. The events have
// been through the engine: the tracker keeps the engine's copies of their keys.
func (t *timeouts) traces(ctx context.Context, td ptrace.Traces, events []pairing.Event, refs []spanRef) {
	b := t.pool.Get().(*timeoutBatch)
	defer func() { b.reset(); t.pool.Put(b) }()
	start := func(ref int32) int64 { return int64(refs[ref].rec.StartTimestamp()) }
	// The scope key of each span with tool items, the engine's copy when it kept one: the
	// same key as tenant and scopeHex give the span.
	b.keys = slices.Grow(b.keys, len(refs))[:len(refs)]
	for i := range events {
		if k := &b.keys[events[i].Ref]; !k.owned {
			*k = refKey{key: events[i].Key.ScopeKey(), owned: events[i].Owned}
		}
	}
	next := 0 // cursor into refs, which are in batch order
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		var tenant string
		tenantDone := false
		rscope := t.keys.resourceScope(rs.Resource())
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				rec := t.names.Span(span)
				for next < len(refs) && refs[next].pos.before(recordPos{i, j, k}) {
					next++
				}
				var rk *refKey
				if next < len(refs) && refs[next].pos == (recordPos{i, j, k}) {
					b.feed(events, int32(next), start)
					if refs[next].results > 0 {
						rec.Kind = timeout.KindTool // a dialect found a tool result in it
					}
					rk = &b.keys[next]
				}
				if !rec.Timeout && rec.Kind != timeout.KindModel && rec.Kind != timeout.KindCompaction {
					continue
				}
				if rk != nil {
					b.addOwned(span.Attributes(), rec, rk.key, rk.owned)
					continue
				}
				if !tenantDone {
					tenant, tenantDone = t.keys.tenant(rs.Resource()), true
				}
				_, scope := t.keys.scopeHex(span.Attributes(), rscope, span.TraceID(), &b.hex)
				b.add(span.Attributes(), rec, pairing.ScopeKey{Tenant: tenant, Scope: scope})
			}
		}
	}
	b.feed(events, -1, start)
	t.flight.Apply(b.updates)
	t.classify(ctx, b.pending)
}

// logs classifies the timeout log records of ld, as traces does for spans. lines holds what
// the dialects told of each record's body (dialect.Line), in batch order; it may be shorter
// than the batch (nil when no dialect ran), the records past its end being unread.
func (t *timeouts) logs(ctx context.Context, ld plog.Logs, events []pairing.Event, refs []logRef, lines []dialect.Line) {
	b := t.pool.Get().(*timeoutBatch)
	defer func() { b.reset(); t.pool.Put(b) }()
	start := func(ref int32) int64 { return logStart(refs[ref].rec) }
	// The scope a dialect gave each record with tool items (a transcript line's session).
	b.scopes = slices.Grow(b.scopes, len(refs))[:len(refs)]
	for i := range events {
		b.scopes[events[i].Ref] = events[i].Key.Scope
	}
	next, n := 0, 0 // n: the record's index in the batch, into lines
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		var tenant string
		tenantDone := false
		rscope := t.keys.resourceScope(rl.Resource())
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				lr := lrs.At(k)
				line := dialect.LineUnread
				if n < len(lines) {
					line = lines[n]
				}
				n++
				rec := t.names.LogLine(lr, line)
				for next < len(refs) && refs[next].pos.before(recordPos{i, j, k}) {
					next++
				}
				var itemScope string
				if next < len(refs) && refs[next].pos == (recordPos{i, j, k}) {
					b.feed(events, int32(next), start)
					if refs[next].results > 0 {
						rec.Kind = timeout.KindTool
					}
					itemScope = b.scopes[next]
				}
				if !rec.Timeout && rec.Kind != timeout.KindModel && rec.Kind != timeout.KindCompaction {
					continue
				}
				scope := rec.Scope
				switch {
				case itemScope != "":
					scope = itemScope
				case scope == "" && rec.Transcript:
					scope = transcriptFileScope(lr.Attributes())
				}
				if scope == "" {
					_, scope = t.keys.scope(lr.Attributes(), rscope, lr.TraceID())
				}
				if !tenantDone {
					tenant, tenantDone = t.keys.tenant(rl.Resource()), true
				}
				b.add(lr.Attributes(), rec, pairing.ScopeKey{Tenant: tenant, Scope: scope})
			}
		}
	}
	b.feed(events, -1, start)
	t.flight.Apply(b.updates)
	t.classify(ctx, b.pending)
}

// add records a model call or compaction record as an interval of its scope, and a timeout
// record for classification.
func (b *timeoutBatch) add(attrs pcommon.Map, rec timeout.Record, key pairing.ScopeKey) {
	b.addOwned(attrs, rec, key, false)
}

// addOwned is add for a key whose strings may be kept as they are when owned is set
// (inflight.Update.Owned).
func (b *timeoutBatch) addOwned(attrs pcommon.Map, rec timeout.Record, key pairing.ScopeKey, owned bool) {
	switch rec.Kind {
	case timeout.KindModel:
		b.updates = append(b.updates, inflight.Update{Op: inflight.OpInterval, Kind: inflight.Model, Scope: key, Start: rec.Start, End: rec.End, Owned: owned})
	case timeout.KindCompaction:
		b.updates = append(b.updates, inflight.Update{Op: inflight.OpInterval, Kind: inflight.Compaction, Scope: key, Start: rec.Start, End: rec.End, Owned: owned})
	}
	if rec.Timeout {
		b.pending = append(b.pending, pendingTimeout{attrs: attrs, rec: rec, key: key})
	}
}

// classify writes the phase and the calls in flight on each timeout record, and counts it.
func (t *timeouts) classify(ctx context.Context, pending []pendingTimeout) {
	for i := range pending {
		p := &pending[i]
		at := p.rec.End
		if p.rec.Kind == timeout.KindTool && at > 0 {
			// A tool record's instant is just before its own end, so its own call, resolved
			// at that end, is counted and is the active tool.
			at--
		}
		snap := t.flight.At(p.key, at)
		phase := timeout.Classify(p.rec.Kind, timeout.InFlight{Tools: snap.Tools, Model: snap.Model, Compaction: snap.Compaction})
		writeTimeout(p.attrs, phase, snap, p.rec.End)
		t.tel.timeout(ctx, phase)
	}
}

// writeTimeout writes the specification section 4 attributes; the active tool's elapsed time runs
// to end, the record's end.
func writeTimeout(attrs pcommon.Map, phase timeout.Phase, snap inflight.Snapshot, end int64) {
	attrs.PutStr(AttrTimeoutPhase, phase.String())
	attrs.PutInt(AttrTimeoutActiveTools, int64(snap.Tools))
	if snap.Tools == 0 {
		return
	}
	if snap.Latest.Tool != "" {
		attrs.PutStr(AttrTimeoutActiveToolName, snap.Latest.Tool)
	}
	attrs.PutStr(AttrTimeoutActiveToolCallID, snap.Latest.CallID)
	attrs.PutInt(AttrTimeoutActiveToolElapsed, (end-snap.Latest.Start)/int64(time.Millisecond))
}

// logStart is the start of the tool call a result log record reports: its time minus its
// duration_ms (Claude Code and Codex tool_result events, an int or a decimal string), else 0.
func logStart(lr plog.LogRecord) int64 {
	v, ok := fields.Get(lr.Attributes(), "duration_ms")
	if !ok {
		return 0
	}
	var ms int64
	switch v.Type() {
	case pcommon.ValueTypeInt:
		ms = v.Int()
	case pcommon.ValueTypeStr:
		n, err := strconv.ParseInt(v.Str(), 10, 64)
		if err != nil {
			return 0
		}
		ms = n
	default:
		return 0
	}
	end := dialect.LogTime(lr)
	if ms < 0 || end <= ms*int64(time.Millisecond) {
		return 0
	}
	return end - ms*int64(time.Millisecond)
}

// transcriptFileScope is the scope of a transcript line that names no session (pi, OpenClaw):
// the file it came from, log.file.path else log.file.name as the filelog receiver sets them
// (specification section 8); "" when neither is set.
func transcriptFileScope(attrs pcommon.Map) string {
	for _, k := range [...]string{"log.file.path", "log.file.name"} {
		if v, ok := fields.Get(attrs, k); ok && v.Str() != "" {
			return v.Str()
		}
	}
	return ""
}
