package toolpairprocessor

import (
	"context"

	"go.uber.org/zap"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/timeout"
)

// recordSignal is what a batch path needs to know of one signal: D is its batch (ptrace.Traces,
// plog.Logs), R one record of it (ptrace.Span, plog.LogRecord), N the next consumer of its
// pipeline. Spans and log records are held, marked, dropped and released by the same code
// (recordBatch); only these operations differ. Implementations are empty structs.
type recordSignal[D, R, N any] interface {
	// attributes returns the record's attributes, where outcomes are written.
	attributes(r R) pcommon.Map
	// newHeld returns an empty held record bound for next, its latch closed (heldFill).
	newHeld(next N) heldRecord[D]
	// copyOut returns a new batch holding a copy of r, the record at pos of d, under copies
	// of its resource and scope groups.
	copyOut(d D, pos recordPos, r R) D
	// removeIf removes from d each record m.removes reports true for, then the scope and
	// resource groups left empty. m.removes is called once per record, in batch order.
	removeIf(d D, m remover)
	// count returns the number of records of d.
	count(d D) int
	// signal returns the signal, as the engine's Event.Signal numbers it.
	signal() synth.Signal
}

// remover tells which records of a batch leave it (recordSignal.removeIf).
type remover interface {
	// removes reports whether the record at pos leaves the batch; called in batch order.
	removes(pos recordPos) bool
}

// heldRecord is a record the engine holds while it waits for its use (*heldSpan, *heldLog):
// the batch that held it fills it, or abandons it when it cannot (see heldFill).
type heldRecord[D any] interface {
	// fill stores the one-record batch d and opens the latch.
	fill(d D)
	// abandon opens the latch with nothing stored, if it is still closed.
	abandon()
}

// recordRef locates a recognised record of a batch.
type recordRef[D, R any] struct {
	pos recordPos
	rec R
	// results counts the record's result items: a record resolving several calls is never
	// held (it would be released once per call). answers counts its items that can take an
	// outcome: its results and its echoes.
	results, answers int
	// held: the engine holds the record while it waits for its use (copied out by fillHeld);
	// dropped/kept: the outcomes of its results asked to drop it / to keep it. It leaves the
	// batch when held, or when dropped and not kept.
	held          heldRecord[D]
	dropped, kept bool
	// mark gathers the outcomes of the calls the record resolved, written by writeMarks.
	mark synth.Mark
}

// removed reports whether the record leaves its batch.
func (r *recordRef[D, R]) removed() bool { return r.held != nil || (r.dropped && !r.kept) }

// recordBatch is the per-call scratch state of one batch of either signal, pooled with the
// signal's batch type (spanBatch, logBatch) that embeds it.
type recordBatch[D, R, N any, S recordSignal[D, R, N]] struct {
	sig    S
	data   D
	next   N
	refs   []recordRef[D, R] // in batch order
	events []pairing.Event
	res    []pairing.Resolution
	found  dialect.Found
	nheld  int // refs with held set
	nmarks int // outcomes added to the marks of records of several result items (writeMarks)
	cursor int // into refs: removeMarked's next candidate
	// acts is what the batch's records tell of their scopes besides tool calls: anchor
	// spans, and (with timeout classification) model calls and compactions; the engine
	// observes it before it processes the events.
	acts []pairing.Activity
	// timeouts are the batch's timeout records, classified once the engine has processed
	// the events (timeouts.classify).
	timeouts []timeout.Pending
	// unrecognized counts the records no dialect recognised.
	unrecognized int
}

// resetBatch abandons the held records not filled (a step that failed before fillHeld must
// not leave their releasers waiting) and clears the batch for reuse.
func (b *recordBatch[D, R, N, S]) resetBatch() {
	if b.nheld > 0 {
		for i := range b.refs {
			if h := b.refs[i].held; h != nil {
				h.abandon()
			}
		}
	}
	b.nheld, b.nmarks = 0, 0
	var zd D
	var zn N
	b.data, b.next = zd, zn
	clear(b.refs) // drop record and held references
	b.refs = b.refs[:0]
	clear(b.events) // drop payload references
	b.events = b.events[:0]
	clear(b.res)
	b.res = b.res[:0]
	b.found.Reset()
	clear(b.acts) // drop anchor payloads and key strings
	b.acts = b.acts[:0]
	clear(b.timeouts)
	b.timeouts = b.timeouts[:0]
	b.unrecognized = 0
}

// claimed takes stock of a record a dialect claimed (name: the dialect's; b.found: what it
// found): its malformed pieces are counted under the dialect's name. It reports whether the
// record has tool items to pair.
func (b *recordBatch[D, R, N, S]) claimed(ctx context.Context, tel *telemetry, name string) bool {
	tel.malformed(ctx, name, b.found.Malformed)
	return len(b.found.Items) > 0
}

// addRef records the record r at pos, whose items are in b.found, and returns its Ref.
func (b *recordBatch[D, R, N, S]) addRef(pos recordPos, r R, results int) int32 {
	ref := int32(len(b.refs))
	answers := results
	for i := range b.found.Items {
		if b.found.Items[i].Kind == pairing.KindEcho {
			answers++
		}
	}
	b.refs = append(b.refs, recordRef[D, R]{pos: pos, rec: r, results: results, answers: answers})
	return ref
}

// appendEvents appends to dst the events of the items of b.found, those of the record with
// Ref ref: key gives their tenant and scope, start the start of the operation a result
// record shows (Unix ns, 0 when unknown), origin the record synthetic records of its uses
// and rejections derive from (nil when it announces none). It is the one place where items
// become events, for spans and log records alike.
func (b *recordBatch[D, R, N, S]) appendEvents(dst []pairing.Event, ref int32, key pairing.Key, source uint8, start int64, origin *synth.Origin) []pairing.Event {
	for _, it := range b.found.Items {
		ev := pairing.Event{
			Kind:     it.Kind,
			Key:      pairing.Key{Tenant: key.Tenant, Scope: key.Scope, CallID: it.CallID},
			Time:     it.Time,
			ToolName: it.ToolName,
			Ref:      ref,
			Source:   source,
			Step:     it.Step,
			Match:    it.Match,
			Signal:   uint8(b.sig.signal()),
		}
		switch it.Kind {
		case pairing.KindResult, pairing.KindAbort, pairing.KindCompanion, pairing.KindMatch:
			// A result record that shows when its tool started (a span's start, a duration
			// field): that time may come before the record that announced the call.
			ev.Start = start
		case pairing.KindEcho:
			// An echo is not a result record: the history of each signal is a source of
			// its own (specification section 2).
			ev.Source = dialect.SourceEcho
			if b.sig.signal() == synth.Logs {
				ev.Source = dialect.SourceEchoLog
			}
		case pairing.KindUse, pairing.KindReject:
			ev.Payload = origin
		}
		dst = append(dst, ev)
	}
	return dst
}

// announces reports whether b.found holds a use or a rejection, whose synthetic records need
// an origin.
func (b *recordBatch[D, R, N, S]) announces() bool {
	for i := range b.found.Items {
		if k := b.found.Items[i].Kind; k == pairing.KindUse || k == pairing.KindReject {
			return true
		}
	}
	return false
}

// markResult writes the outcome r on the result record with Ref ref (inBatch): at once on a
// record of one result item (one outcome), else added to the record's mark, which writeMarks
// writes once every outcome of the batch is known.
func (b *recordBatch[D, R, N, S]) markResult(ref int32, r *pairing.Resolution) {
	rr := &b.refs[ref]
	rr.kept = true
	attrs := b.sig.attributes(rr.rec)
	if rr.answers <= 1 {
		synth.MarkResult(attrs, r)
	} else {
		rr.mark.Add(r)
		b.nmarks++
	}
	markMatched(attrs, r)
}

// writeMarks writes on each result record of several result items the outcomes of the calls
// it resolved (synth.Mark): such a record carries toolpair.outcome only when they share it, and
// toolpair.call.duration_ms only when it resolves one call (specification section 3).
func (b *recordBatch[D, R, N, S]) writeMarks() {
	if b.nmarks == 0 {
		return
	}
	for i := range b.refs {
		if rr := &b.refs[i]; !rr.mark.Empty() && !rr.removed() {
			rr.mark.Write(b.sig.attributes(rr.rec))
		}
	}
}

// markMatched writes on a result record that carries no call ID of its own (r.Matched: it
// was matched by tool name and arguments) the ID of the call it resolved, whether it is
// marked in its batch or released after being held.
func markMatched(attrs pcommon.Map, r *pairing.Resolution) {
	if r.Matched && r.Key.CallID != "" {
		attrs.PutStr(synth.AttrToolCallID, r.Key.CallID)
	}
}

// dropResult marks the result record with Ref ref for removal (inBatch).
func (b *recordBatch[D, R, N, S]) dropResult(ref int32, r *pairing.Resolution) {
	rr := &b.refs[ref]
	rr.dropped = true
	if rr.answers > 1 {
		rr.mark.Add(r)
		b.nmarks++
	}
}

// hold is the engine's hold callback, called under the engine's lock: it only makes the
// empty held record of a result record that must wait for its use (its latch closed until
// filled); fillHeld copies the record into it once the engine has returned, so that no copy
// is made while the engine is locked against the component's other pipelines and its ticker.
func (b *recordBatch[D, R, N, S]) hold(ev *pairing.Event) any {
	ref := &b.refs[ev.Ref]
	if ref.results > 1 {
		return nil
	}
	h := b.sig.newHeld(b.next)
	ref.held = h
	b.nheld++
	return h
}

// fillHeld copies each record the engine holds, with its resource and scope, out of the batch
// into its held record, and opens its latch. It must run after Process and the timeout
// classifier (whose attributes the copy keeps), and before anything else reads or changes the
// batch.
func (b *recordBatch[D, R, N, S]) fillHeld() {
	if b.nheld == 0 {
		return
	}
	for i := range b.refs {
		ref := &b.refs[i]
		if ref.held != nil {
			ref.held.fill(b.sig.copyOut(b.data, ref.pos, ref.rec))
		}
	}
}

// addTimeout takes what the timeout classifier needs of one record: its reading rec (a model
// call or a compaction becomes an Activity of scope key; a timeout record is classified after
// the engine has run), attrs where the classification is written. Records rec says nothing
// of for classification (timeoutRelevant false) are not passed.
func (b *recordBatch[D, R, N, S]) addTimeout(attrs pcommon.Map, rec timeout.Record, key pairing.ScopeKey) {
	switch rec.Kind {
	case timeout.KindModel:
		b.acts = append(b.acts, pairing.Activity{Kind: pairing.ActivityModel, Key: key, Start: rec.Start, End: rec.End})
	case timeout.KindCompaction:
		b.acts = append(b.acts, pairing.Activity{Kind: pairing.ActivityCompaction, Key: key, Start: rec.Start, End: rec.End})
	}
	if rec.Timeout {
		b.timeouts = append(b.timeouts, timeout.Pending{Attrs: attrs, Rec: rec, Key: key})
	}
}

// pair hands the batch to the engine and classifies its timeout records. The activity goes
// first, so that an eviction inside Process can put a synthetic span under an anchor of this
// very batch; the classification last, so that it sees the calls Process recorded. It runs
// before settle, whose fillHeld copies held records with what the classifier wrote on them.
func (b *recordBatch[D, R, N, S]) pair(ctx context.Context, s *shared) {
	if len(b.acts) > 0 {
		s.engine.Observe(b.acts)
	}
	b.observe(s)
	if len(b.events) > 0 {
		b.res = s.engine.Process(b.events, b.hold, b.res)
	}
	if s.tmo != nil && len(b.timeouts) > 0 {
		s.tmo.Classify(ctx, s.engine, b.timeouts)
	}
}

// observe tells s.observeKeys, when set, the key and position of each event of the batch.
func (b *recordBatch[D, R, N, S]) observe(s *shared) {
	if s.observeKeys == nil {
		return
	}
	for i := range b.events {
		s.observeKeys(b.refs[b.events[i].Ref].pos, b.events[i].Key)
	}
}

// settle finishes a batch whose events went through the engine and the timeout classifier (pair):
// it fills the held records, records the resolutions, applies the outcomes (out holds the
// batch's pipeline and its data), removes the held and dropped records, and sends what goes
// to other pipelines. It reports whether records were removed and none is left, a batch that
// must not be forwarded.
func (b *recordBatch[D, R, N, S]) settle(ctx context.Context, s *shared, out *output) (emptied bool) {
	b.fillHeld()
	// After fillHeld: a checkpoint waiting for this batch's held records holds the lock that
	// orders resolution records. Before anything leaves the processor.
	if err := s.recordResolutions(ctx, b.res); err != nil {
		s.logger.Error("toolpair: the outcomes of a batch leave without being stored", zap.Error(err))
	}
	s.apply(b.res, out, b)
	b.writeMarks()
	removed := b.removeMarked()
	if len(out.toTraces)+len(out.toLogs) > 0 {
		if err := s.send(ctx, out, triggerRouted); err != nil {
			s.logger.Warn("toolpair: sending records to other pipelines failed", zap.Error(err))
		}
	}
	return removed && b.sig.count(b.data) == 0
}

// removeMarked removes the records marked for removal (held or dropped) from the batch, and
// the scope and resource groups left empty by it, and reports whether it removed any. It
// must run after every other use of the refs' positions.
func (b *recordBatch[D, R, N, S]) removeMarked() bool {
	marked := false
	for i := range b.refs {
		if b.refs[i].removed() {
			marked = true
			break
		}
	}
	if !marked {
		return false
	}
	b.cursor = 0
	b.sig.removeIf(b.data, b)
	return true
}

// removes reports whether the record at pos leaves the batch (remover): it must be called in
// batch order, from removeMarked.
func (b *recordBatch[D, R, N, S]) removes(pos recordPos) bool {
	for b.cursor < len(b.refs) && b.refs[b.cursor].pos.before(pos) {
		b.cursor++
	}
	return b.cursor < len(b.refs) && b.refs[b.cursor].pos == pos && b.refs[b.cursor].removed()
}

// before reports whether p comes before q in batch order.
func (p recordPos) before(q recordPos) bool {
	return before(p.res, p.scope, p.rec, q.res, q.scope, q.rec)
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
