// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package batch is one batch of records on its way through a toolpair processor: the
// records dialects recognised (Ref), the events they give the engine, the result records the
// engine holds while they wait for their use (HeldSpan, HeldLog), the outcomes written on
// records (MarkResult, WriteMarks), the records that leave the batch (RemoveMarked), and the
// output of outcomes into records and pipelines (Output, Applier). Spans and log records go
// through the same code (Batch), parameterised by their Signal (Spans, Logs).
package batch

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/delivery"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/timeout"
)

// Pos is the position of a record in its batch: the indexes of its resource group, scope
// group and record.
type Pos struct{ Res, Scope, Rec int }

// Signal is what a batch path needs to know of one signal: D is its batch (ptrace.Traces,
// plog.Logs), R one record of it (ptrace.Span, plog.LogRecord), N the next consumer of its
// pipeline. Spans and log records are held, marked, dropped and released by the same code
// (Batch); only these operations differ. Implementations are empty structs.
type Signal[D, R, N any] interface {
	// Attributes returns the record's attributes, where outcomes are written.
	Attributes(r R) pcommon.Map
	// NewHeld returns an empty held record bound for next, of size bytes, remembered under
	// id (0: not remembered), stating the tool's run time run, its latch closed (Fill).
	NewHeld(next N, size int64, id delivery.ID, run synth.Run) Held[D]
	// Size returns an estimate of the bytes of the record r at pos of d held with copies of
	// its resource and scope: the lengths of names, strings and byte values, 8 per other
	// scalar (see size.go).
	Size(d D, pos Pos, r R) int64
	// CopyOut returns a new batch holding a copy of r, the record at pos of d, under copies
	// of its resource and scope groups.
	CopyOut(d D, pos Pos, r R) D
	// RemoveIf removes from d each record m.removes reports true for, then the scope and
	// resource groups left empty. m.removes is called once per record, in batch order.
	RemoveIf(d D, m Remover)
	// Count returns the number of records of d.
	Count(d D) int
	// Signal returns the signal, as the engine's Event.Signal numbers it.
	Signal() synth.Signal
}

// Remover tells which records of a batch leave it (Signal.removeIf).
type Remover interface {
	// Removes reports whether the record at pos leaves the batch; called in batch order.
	Removes(pos Pos) bool
}

// heldRecord is a record the engine holds while it waits for its use (*HeldSpan, *HeldLog):
// the batch that held it fills it, or abandons it when it cannot (see Fill).
type Held[D any] interface {
	// Fill stores the one-record batch d and opens the latch.
	Fill(d D)
	// Abandon opens the latch with nothing stored, if it is still closed.
	Abandon()
}

// Ref locates a recognised record of a batch.
type Ref[D, R any] struct {
	pos Pos
	rec R
	// results counts the record's result items: a record resolving several calls is never
	// held (it would be released once per call). answers counts its items that can take an
	// outcome: its results and its echoes.
	results, answers int
	// held: the engine holds the record while it waits for its use (copied out by fillHeld);
	// dropped/kept: the outcomes of its results asked to drop it / to keep it. It leaves the
	// batch when held, or when dropped and not kept.
	held          Held[D]
	dropped, kept bool
	// mark gathers the outcomes of the calls the record resolved, written by writeMarks.
	mark synth.Mark
	// run is the tool's own execution time the record states (SetRun), for a record of one
	// result item.
	run synth.Run
	// id is the record's identity when its delivery is remembered (a record that can take an
	// outcome), else 0; again: it is a delivery again of a record remembered under id, whose
	// decision was applied (Again) and whose items never reached the engine; matched: it
	// carries no call ID of its own (the processor writes gen_ai.tool.call.id on it).
	id      delivery.ID
	place   uint64
	again   bool
	matched bool
}

// removed reports whether the record leaves its batch.
func (r *Ref[D, R]) removed() bool { return r.held != nil || (r.dropped && !r.kept) }

// Batch is the per-call scratch state of one batch of either signal, pooled with the
// signal's batch type (spanBatch, logBatch) that embeds it.
type Batch[D, R, N any, S Signal[D, R, N]] struct {
	sig S
	// Data is the batch; Next the next consumer of its pipeline; Now the collector's clock
	// when the batch came in (Unix ns).
	Data        D
	Next        N
	Now         int64
	refs        []Ref[D, R] // in batch order
	touched     int         // what ReadAhead read, kept so that its reads are not optimized away
	Events      []pairing.Event
	Resolutions []pairing.Resolution
	Found       dialect.Found
	nheld       int // refs with held set
	nmarks      int // outcomes added to the marks of records of several result items (writeMarks)
	cursor      int // into refs: removeMarked's next candidate
	// acts is what the batch's records tell of their scopes besides tool calls: anchor
	// spans, and (with timeout classification) model calls and compactions; the engine
	// observes it before it processes the events.
	Acts []pairing.Activity
	// timeouts are the batch's timeout records, classified once the engine has processed
	// the events (timeouts.classify).
	Timeouts []timeout.Pending
	// unrecognized counts the records no dialect recognised.
	Unrecognized int
	// origin is the origin made last for a record of the batch (Origin).
	origin *synth.Origin
	// Redelivered counts the records of the batch delivered again (Again); decisions is the
	// scratch of Remember.
	Redelivered int
	decisions   []delivery.Entry
	marks       []delivery.Mark
}

// Reset abandons the held records not filled (a step that failed before fillHeld must
// not leave their releasers waiting) and clears the batch for reuse.
func (b *Batch[D, R, N, S]) Reset() {
	if b.nheld > 0 {
		for i := range b.refs {
			if h := b.refs[i].held; h != nil {
				h.Abandon()
			}
		}
	}
	b.nheld, b.nmarks = 0, 0
	var zd D
	var zn N
	b.Data, b.Next, b.Now = zd, zn, 0
	clear(b.refs) // drop record and held references
	b.refs = b.refs[:0]
	clear(b.Events) // drop payload references
	b.Events = b.Events[:0]
	clear(b.Resolutions)
	b.Resolutions = b.Resolutions[:0]
	b.Found.Release()
	clear(b.Acts) // drop anchor payloads and key strings
	b.Acts = b.Acts[:0]
	clear(b.Timeouts)
	b.Timeouts = b.Timeouts[:0]
	b.Unrecognized = 0
	b.origin = nil
	b.Redelivered = 0
	clear(b.decisions) // drop mark strings
	b.decisions = b.decisions[:0]
	clear(b.marks)
	b.marks = b.marks[:0]
}

// Origin returns the origin of an announcing record of b, o with Next set to the batch's
// pipeline: the one made for the batch's previous announcing record when the two are equal,
// else a new one. Claude Code's events carry no trace or span ID, so the uses of a session's
// run of events share one origin instead of allocating one each; origins are never changed
// once made (synth.MergeOrigins copies), so any number of calls can share one.
func (b *Batch[D, R, N, S]) Origin(o synth.Origin) *synth.Origin {
	o.Next = b.Next
	// The IDs first: spans differ there, and comparing them reads no other memory.
	if l := b.origin; l != nil && l.SpanID == o.SpanID && l.TraceID == o.TraceID && l.ParentSpanID == o.ParentSpanID &&
		l.Resource == o.Resource && l.Signal == o.Signal && l.Also == o.Also &&
		l.ConversationAttr == o.ConversationAttr && l.Conversation == o.Conversation && l.ToolPrefixedIDs == o.ToolPrefixedIDs {
		return l // Next is the batch's in both
	}
	b.origin = new(synth.Origin)
	*b.origin = o // a copy: o itself stays on the caller's stack when shared
	return b.origin
}

// AddRef records the record r at pos, whose items are in b.Found, and returns its Ref.
func (b *Batch[D, R, N, S]) AddRef(pos Pos, r R, results int) int32 {
	ref := int32(len(b.refs))
	answers := results
	for i := range b.Found.Items {
		if b.Found.Items[i].Kind == pairing.KindEcho {
			answers++
		}
	}
	b.refs = append(b.refs, Ref[D, R]{pos: pos, rec: r, results: results, answers: answers})
	return ref
}

// SetRun records the tool's own execution time that the record with Ref ref states
// (synth.Runtime): its duration when it is paired, if it is the record of one result and no
// echo (the tool's own record, not a history repeating results).
func (b *Batch[D, R, N, S]) SetRun(ref int32, run synth.Run) {
	if rr := &b.refs[ref]; rr.results == 1 && rr.answers == 1 {
		rr.run = run
	}
}

// AppendEvents appends to dst the events of the items of b.Found, those of the record with
// Ref ref: key gives their tenant and scope, start the start of the operation a result
// record shows (Unix ns, 0 when unknown), origin the record synthetic records of its uses
// and rejections derive from (nil when it announces none). It is the one place where items
// become events, for spans and log records alike.
func (b *Batch[D, R, N, S]) AppendEvents(dst []pairing.Event, ref int32, key pairing.Key, source uint8, start int64, origin *synth.Origin) []pairing.Event {
	for _, it := range b.Found.Items {
		ev := pairing.Event{
			Kind:     it.Kind,
			Key:      pairing.Key{Tenant: key.Tenant, Conversation: key.Conversation, CallID: it.CallID},
			Time:     it.Time,
			ToolName: it.ToolName,
			Ref:      ref,
			Source:   source,
			Step:     it.Step,
			Match:    it.Match,
			Abort:    it.Abort,
			Signal:   uint8(b.sig.Signal()),
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
			if b.sig.Signal() == synth.Logs {
				ev.Source = dialect.SourceEchoLog
			}
		case pairing.KindUse, pairing.KindReject:
			ev.Payload = origin
		}
		dst = append(dst, ev)
	}
	return dst
}

// Announces reports whether b.Found holds a use or a rejection, whose synthetic records need
// an origin.
func (b *Batch[D, R, N, S]) Announces() bool {
	for i := range b.Found.Items {
		if k := b.Found.Items[i].Kind; k == pairing.KindUse || k == pairing.KindReject {
			return true
		}
	}
	return false
}

// MarkResult writes the outcome r on the result record with Ref ref (inBatch): at once on a
// record of one result item (one outcome), else added to the record's mark, which writeMarks
// writes once every outcome of the batch is known.
func (b *Batch[D, R, N, S]) MarkResult(ref int32, r *pairing.Resolution) {
	rr := &b.refs[ref]
	rr.kept = true
	attrs := b.sig.Attributes(rr.rec)
	if rr.answers <= 1 {
		synth.MarkResult(attrs, r, rr.run)
	} else {
		rr.mark.Add(r, synth.Run{})
		b.nmarks++
	}
	MarkMatched(attrs, r)
}

// WriteMarks writes on each result record of several result items the outcomes of the calls
// it resolved (synth.Mark): such a record carries toolpair.outcome only when they share it, and
// toolpair.call.duration_ms only when it resolves one call (specification section 3).
func (b *Batch[D, R, N, S]) WriteMarks() {
	if b.nmarks == 0 {
		return
	}
	for i := range b.refs {
		if rr := &b.refs[i]; !rr.mark.Empty() && !rr.removed() {
			rr.mark.Write(b.sig.Attributes(rr.rec))
		}
	}
}

// MarkMatched writes on a result record that carries no call ID of its own (r.Matched: it
// was matched by tool name and arguments) the ID of the call it resolved, whether it is
// marked in its batch or released after being held.
func MarkMatched(attrs pcommon.Map, r *pairing.Resolution) {
	if r.Matched && r.Key.CallID != "" {
		attrs.PutStr(synth.AttrToolCallID, r.Key.CallID)
	}
}

// DropResult marks the result record with Ref ref for removal (inBatch).
func (b *Batch[D, R, N, S]) DropResult(ref int32, r *pairing.Resolution) {
	rr := &b.refs[ref]
	rr.dropped = true
	if rr.answers > 1 {
		rr.mark.Add(r, synth.Run{})
		b.nmarks++
	}
}

// Hold is the engine's hold callback, called under the engine's lock: it only makes the
// empty held record of a result record that must wait for its use (its latch closed until
// filled); fillHeld copies the record into it once the engine has returned, so that no copy
// is made while the engine is locked against the component's other pipelines and its ticker.
func (b *Batch[D, R, N, S]) Hold(ev *pairing.Event) any {
	ref := &b.refs[ev.Ref]
	if ref.results > 1 {
		return nil
	}
	h := b.sig.NewHeld(b.Next, b.sig.Size(b.Data, ref.pos, ref.rec), ref.id, ref.run)
	ref.held = h
	b.nheld++
	return h
}

// FillHeld copies each record the engine holds, with its resource and scope, out of the batch
// into its held record, and opens its latch. It must run after Process and the timeout
// classifier (whose attributes the copy keeps), and before anything else reads or changes the
// batch.
func (b *Batch[D, R, N, S]) FillHeld() {
	if b.nheld == 0 {
		return
	}
	for i := range b.refs {
		ref := &b.refs[i]
		if ref.held != nil {
			ref.held.Fill(b.sig.CopyOut(b.Data, ref.pos, ref.rec))
		}
	}
}

// AddTimeout takes what the timeout classifier needs of one record: its reading rec (a model
// call or a compaction becomes an Activity of scope key; a timeout record is classified after
// the engine has run), attrs where the classification is written. Records rec says nothing
// of for classification (timeoutRelevant false) are not passed.
func (b *Batch[D, R, N, S]) AddTimeout(attrs pcommon.Map, rec timeout.Record, key pairing.ConversationKey) {
	switch rec.Kind {
	case timeout.KindModel:
		b.Acts = append(b.Acts, pairing.Activity{Kind: pairing.ActivityModel, Key: key, Start: rec.Start, End: rec.End})
	case timeout.KindCompaction:
		b.Acts = append(b.Acts, pairing.Activity{Kind: pairing.ActivityCompaction, Key: key, Start: rec.Start, End: rec.End})
	}
	if rec.Timeout {
		b.Timeouts = append(b.Timeouts, timeout.Pending{Attrs: attrs, Rec: rec, Key: key})
	}
}

// RemoveMarked removes the records marked for removal (held or dropped) from the batch, and
// the scope and resource groups left empty by it, and reports whether it removed any. It
// must run after every other use of the refs' positions.
func (b *Batch[D, R, N, S]) RemoveMarked() bool {
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
	b.sig.RemoveIf(b.Data, b)
	return true
}

// removes reports whether the record at pos leaves the batch (Remover): it must be called in
// batch order, from removeMarked.
func (b *Batch[D, R, N, S]) Removes(pos Pos) bool {
	for b.cursor < len(b.refs) && b.refs[b.cursor].pos.Before(pos) {
		b.cursor++
	}
	return b.cursor < len(b.refs) && b.refs[b.cursor].pos == pos && b.refs[b.cursor].removed()
}

// Before reports whether p comes before q in batch order.
func (p Pos) Before(q Pos) bool {
	return before(p.Res, p.Scope, p.Rec, q.Res, q.Scope, q.Rec)
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

// PosOf returns the position of the record with Ref ref.
func (b *Batch[D, R, N, S]) PosOf(ref int32) Pos { return b.refs[ref].pos }

// Len returns the number of records left in the batch.
func (b *Batch[D, R, N, S]) Len() int { return b.sig.Count(b.Data) }

// ReadAhead reads the attributes of the result records res will mark, in a loop of loads
// alone, so that their cache misses overlap before MarkResult scans them one by one.
func (b *Batch[D, R, N, S]) ReadAhead(res []pairing.Resolution) {
	n := 0
	for i := range res {
		if ref := res[i].ResultRef; ref >= 0 {
			n += b.sig.Attributes(b.refs[ref].rec).Len()
		}
	}
	for i := range res {
		if ref := res[i].ResultRef; ref >= 0 {
			for k := range b.sig.Attributes(b.refs[ref].rec).All() {
				n += len(k)
			}
		}
	}
	b.touched = n
}
