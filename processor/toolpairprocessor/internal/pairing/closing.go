// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// closing.go holds the closings of a scope: step boundaries (KindBoundary) and session ends
// (KindSessionEnd), queued for Config.CloseDelay in their scope's list and in the engine's
// FIFO of deadlines, then applied to the scope's pending calls: a pending call is
// interrupted (next_step or session_end), one whose companion is held is paired with it.

package pairing

import "slices"

// queuedClosing is a step boundary (KindBoundary) or session end (KindSessionEnd) waiting
// in its scope's list: what closeScope needs of its Event, in a quarter of the space.
type queuedClosing struct {
	time int64
	step *string // the engine's copy (see Engine.step), nil for ""
	kind Kind
}

// closing is an entry of the closings FIFO: a step boundary or session end of scope, at
// record time time, waiting until deadline (engine clock, Unix ns).
type closing struct {
	scope    *conversation
	time     int64
	deadline int64
}

// closingChunk is the number of entries in a chunk of a closingQueue (96 KiB).
const closingChunk = 4096

// closingQueue is a FIFO of closings stored in fixed chunks of closingChunk entries. It grows
// by one chunk at a time and never copies its entries; the chunk emptied last is kept for the
// next growth, so a queue that takes as many entries as it gives allocates nothing. (A slice
// reclaimed by copying and grown by doubling would reach 224,000 entries at the default bound
// of 100,000 closings: 5 MiB of pointers for the GC to scan.)
type closingQueue struct {
	chunks [][]closing // chunks[0][head:], chunks[1], ...: oldest first
	head   int
	spare  []closing // an emptied chunk, length 0, or nil
}

// empty reports whether the queue holds no closing.
func (q *closingQueue) empty() bool { return len(q.chunks) == 0 }

// front returns the oldest closing. The queue must not be empty.
func (q *closingQueue) front() *closing { return &q.chunks[0][q.head] }

// push appends c.
func (q *closingQueue) push(c closing) {
	n := len(q.chunks)
	if n == 0 || len(q.chunks[n-1]) == closingChunk {
		chunk := q.spare
		q.spare = nil
		if chunk == nil {
			chunk = make([]closing, 0, closingChunk)
		}
		q.chunks = append(q.chunks, chunk)
		n++
	}
	q.chunks[n-1] = append(q.chunks[n-1], c)
}

// pop removes and returns the oldest closing. The queue must not be empty.
func (q *closingQueue) pop() closing {
	first := q.chunks[0]
	c := first[q.head]
	first[q.head] = closing{}
	q.head++
	if q.head == len(first) {
		// The first chunk is used up (only the last chunk can be short): it becomes the spare.
		q.head = 0
		q.spare = first[:0]
		n := copy(q.chunks, q.chunks[1:])
		q.chunks[n] = nil
		q.chunks = q.chunks[:n]
	}
	return c
}

// reset empties the queue and releases its storage.
func (q *closingQueue) reset() { *q = closingQueue{} }

// deferClose queues a step boundary or session end for CloseDelay, or applies it at once
// when CloseDelay is zero. A queued event gets VerdictPending.
//
// A queued closing waits in its scope's list, sorted by record time, and in the engine's
// FIFO of deadlines. When one falls due, every closing of its scope with a record time at or
// before its own is applied, earliest first: each pending call is closed by the first
// boundary or session end that follows it in time, whatever order they arrived in.
func (e *Engine) deferClose(ev *Event, now int64, out []Resolution) []Resolution {
	if e.cfg.CloseDelay <= 0 {
		sc := e.conversations[ev.Key.ConversationKey()]
		if sc == nil {
			ev.Verdict = VerdictIgnored
			return out
		}
		ownConversation(ev, sc)
		sc.saw(now, ev.Time)
		out, closed := e.closeConversation(sc, ev.Kind, ev.Time, ev.Step, now, out)
		ev.Verdict = VerdictIgnored
		if closed {
			ev.Verdict = VerdictResolved
		}
		return out
	}
	ev.Verdict = VerdictPending
	for e.closingsQueued >= e.cfg.MaxPending && !e.closings.empty() {
		out = e.applyClosing(now, out)
	}
	sc := e.conversationOf(ev.Key.ConversationKey(), now)
	ownConversation(ev, sc)
	sc.saw(now, ev.Time)
	// Keep sc.closings sorted by Time; consecutive lines of one message (a transcript)
	// repeat the same boundary, queued once.
	i := len(sc.closings)
	for i > 0 && sc.closings[i-1].time > ev.Time {
		i--
	}
	for j := i - 1; j >= 0 && sc.closings[j].time == ev.Time; j-- {
		if c := &sc.closings[j]; c.kind == ev.Kind && deref(c.step) == ev.Step {
			return out
		}
	}
	// The uses of the model request whose start this is share its step: e.step keeps one
	// copy for both.
	if sc.closings == nil {
		// A scope's closings come a few at a time (the steps of a turn, its end): room for
		// four in one allocation rather than growing by one, two, then four.
		sc.closings = make([]queuedClosing, 0, 4)
	}
	sc.closings = slices.Insert(sc.closings, i, queuedClosing{kind: ev.Kind, time: ev.Time, step: e.step(ev.Step)})
	sc.refs++
	e.closingsQueued++
	e.closings.push(closing{scope: sc, time: ev.Time, deadline: now + int64(e.cfg.CloseDelay)})
	return out
}

// applyClosing takes the oldest entry of the closings FIFO and applies the closings of its
// scope up to its record time.
func (e *Engine) applyClosing(now int64, out []Resolution) []Resolution {
	c := e.closings.pop()
	sc := c.scope
	n := 0
	for n < len(sc.closings) && sc.closings[n].time <= c.time {
		q := &sc.closings[n]
		out, _ = e.closeConversation(sc, q.kind, q.time, deref(q.step), now, out)
		n++
	}
	if n == 0 {
		return out // applied already, with a later closing of the scope
	}
	clear(sc.closings[:n])
	sc.closings = sc.closings[n:]
	if len(sc.closings) == 0 {
		sc.closings = nil
	}
	e.closingsQueued -= n
	sc.refs -= n
	if sc.refs <= 0 {
		e.forgetConversation(sc)
	}
	return out
}

// closeConversation applies a step boundary (kind KindBoundary) or a session end at record time
// at, of step step, to the pending calls of scope sc, and reports whether it closed any.
func (e *Engine) closeConversation(sc *conversation, kind Kind, at int64, step string, now int64, out []Resolution) ([]Resolution, bool) {
	sc.lastSeen = now
	reason := ReasonSessionEnd
	if kind == KindBoundary {
		reason = ReasonNextStep
	}
	closed := false
	for p := sc.entries; p != nil && (p.state == statePending || p.state == statePendingHeld); {
		next := p.snext
		if p.useTime <= at && closesStep(kind == KindBoundary, step, p.stepID()) {
			if p.state == statePendingHeld {
				// The call ran: its companion answers it.
				out = e.closeWithCompanion(p, now, out)
			} else {
				out = e.interruptPending(p, reason, now, at, out)
			}
			closed = true
		}
		p = next
	}
	return out, closed
}
