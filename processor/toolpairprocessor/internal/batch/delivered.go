// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package batch

// What a batch's records got, remembered by their identity (internal/delivery), and applied
// again to a record delivered again (specification section 2).

import (
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/delivery"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/timeout"
)

// Answers returns the number of items of the record with Ref ref that can take an outcome:
// its results and its echoes.
func (b *Batch[D, R, N, S]) Answers(ref int32) int { return b.refs[ref].answers }

// Delivered looks the record with Ref ref, of identity id, up in m (delivery.Memory.Reserve):
// a record delivered before gets its decision again (Again) and Delivered reports true, its
// items never to reach the engine; a record new to m is given its place, for its decision to
// be remembered (Remembers; matched as there).
func (b *Batch[D, R, N, S]) Delivered(m *delivery.Memory, ref int32, id delivery.ID, matched bool) bool {
	d, ok, place := m.Reserve(b.Now, id)
	if ok {
		b.Again(ref, d)
		return true
	}
	if place != 0 {
		b.Remembers(ref, id, place, matched)
	}
	return false
}

// Remembers gives the record with Ref ref the identity id (delivery.Span, delivery.Log) and
// the place delivery.Memory.Reserve took for it: its decision is remembered there once the
// batch's outcomes are written (Remember). matched: the
// record carries no call ID of its own, so the ID the processor writes on it is part of its
// decision.
func (b *Batch[D, R, N, S]) Remembers(ref int32, id delivery.ID, place uint64, matched bool) {
	rr := &b.refs[ref]
	rr.id, rr.place, rr.matched = id, place, matched
}

// Again applies to the record with Ref ref, a record delivered again, the decision d of its
// earlier delivery (specification section 2): its marks when it was passed on, else it leaves
// the batch (dropped as it was, or held: the engine's copy of it leaves when its use comes).
// Its items must not reach the engine.
func (b *Batch[D, R, N, S]) Again(ref int32, d delivery.Decision) {
	rr := &b.refs[ref]
	rr.again = true
	b.Redelivered++
	if d.Fate == delivery.FatePassed {
		rr.kept = true
		delivery.Apply(b.sig.Attributes(rr.rec), d.Marks)
		return
	}
	rr.dropped = true
}

// Remember remembers in m, at now (Unix ns), the decision of each record of the batch given
// an identity (Remembers) and delivered for the first time: held, dropped, or passed on with
// the marks the processor wrote. It must run once every mark is written (WriteMarks) and
// before RemoveMarked.
func (b *Batch[D, R, N, S]) Remember(m *delivery.Memory, now int64) {
	if m == nil {
		return
	}
	for i := range b.refs {
		rr := &b.refs[i]
		if rr.id == 0 || rr.again {
			continue
		}
		e := delivery.Entry{ID: rr.id, Place: rr.place}
		switch {
		case rr.held != nil:
			e.Fate = delivery.FateHeld
		case rr.removed():
			e.Fate = delivery.FateDropped
		default:
			e.Fate = delivery.FatePassed
			// The marks of every record of the batch share one array (b.marks).
			n := len(b.marks)
			b.marks = delivery.Capture(b.marks, b.sig.Attributes(rr.rec), MarkedKey(rr.matched))
			e.Marks = b.marks[n:len(b.marks):len(b.marks)]
		}
		b.decisions = append(b.decisions, e)
	}
	m.Remember(now, b.decisions)
}

// Decisions returns what the last Remember remembered, valid until the batch is reset.
func (b *Batch[D, R, N, S]) Decisions() []delivery.Entry { return b.decisions }

// MarkedKey returns whether an attribute key is one the processor writes on a result record
// (its outcome, duration, count and timeout classification; and, on a record matched without
// a call ID of its own, gen_ai.tool.call.id): what a record's decision keeps.
func MarkedKey(matched bool) func(string) bool {
	if matched {
		return markedMatched
	}
	return marked
}

func marked(k string) bool {
	if len(k) < len("toolpair.") || k[:len("toolpair.")] != "toolpair." {
		return false
	}
	switch k {
	case synth.AttrOutcome, synth.AttrCallDurationMs, synth.AttrCallElapsedMs, synth.AttrInterruptReason, synth.AttrCallCounted,
		timeout.AttrPhase, timeout.AttrActiveTools, timeout.AttrActiveToolName, timeout.AttrActiveToolCallID,
		timeout.AttrActiveToolElapsed:
		return true
	}
	return false
}

func markedMatched(k string) bool { return k == synth.AttrToolCallID || marked(k) }
