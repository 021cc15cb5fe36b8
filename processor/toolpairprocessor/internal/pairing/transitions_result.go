// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// transitions_result.go holds what a result does to its call (the Result and Companion
// rows of the table in transitions.go): paired, held for its use, a duplicate, or settled
// orphan or standalone.

package pairing

import "strings"

func (e *Engine) result(ev *Event, now int64, hold func(*Event) any, out []Resolution) []Resolution {
	ent, h := e.findEvent(ev)
	if ent != nil {
		own(ev, ent)
		ent.scope.saw(now, ev.Time)
		switch {
		case ent.state == statePending, ent.state == statePendingHeld:
			// A pending call (whose companion a restored state may hold): this record answers it.
			e.stats.ResultsSeen++
			ev.Verdict = VerdictResolved
			dup, held := e.takeCompanion(ent)
			r := e.pairPending(ent, ev, now)
			r.ResultRef = ev.Ref
			out = append(out, r)
			if held {
				out = append(out, dup)
			}
			return out
		case ent.state == stateWaiting && ev.Kind != KindRefused && !e.reportedBy(ent, ev.Source):
			// Another source's record of a result held for its use: held with it, to be
			// released with its own outcome.
			if held := e.callHold(hold, ev); held != nil {
				e.holdReport(ent, ev, held)
				return out
			}
		case ent.state == stateResolved && ent.answered() && ev.Kind != KindRefused && !e.reportedBy(ent, ev.Source):
			// A refusal after another record answered the call contradicts it: a duplicate.
			return append(out, e.report(ent, ev))
		}
		// Already reported by this record's source (an export retry, a repeated delivery), or
		// closed without a result (its synthetic record has left): not a new answer.
		e.stats.ResultsSeen++
		return append(out, e.duplicate(ent, ev))
	}
	e.stats.ResultsSeen++
	held := e.callHold(hold, ev)
	if held == nil {
		// The record cannot wait: it is settled at once.
		sc := e.conversationOf(ev.Key.ConversationKey(), now)
		sc.saw(now, ev.Time)
		ev.Verdict = VerdictResolved
		r := Resolution{Key: ev.Key, ToolName: ev.ToolName, ResultTime: ev.Time, UseRef: -1, ResultRef: ev.Ref}
		e.settleUnmatched(&r, e.sawUse(sc), false, ev.aborts())
		ent = &entry{scope: sc, callID: strings.Clone(ev.Key.CallID), toolName: e.name(ev.ToolName), useTime: ev.Start, resultTime: ev.Time}
		e.firstReport(ent, ev.Source, r.Outcome)
		e.insertResolved(ent, now)
		own(ev, ent)
		return append(out, r)
	}
	// Make room before looking the scope up: an eviction may forget the scope.
	out = e.makeRoom(now, out, ev.Key.Tenant)
	sc := e.conversationOf(ev.Key.ConversationKey(), now)
	sc.saw(now, ev.Time)
	ent = &entry{scope: sc, callID: strings.Clone(ev.Key.CallID), toolName: e.name(ev.ToolName)}
	e.insertHashed(ent, nil, h)
	own(ev, ent)
	e.holdResult(ent, ev, held, now)
	e.stats.Waiting++
	return out
}

// callHold returns hold's copy of ev's record, or nil when there is no hold callback, and
// counts its bytes among the held ones.
func (e *Engine) callHold(hold func(*Event) any, ev *Event) any {
	if hold == nil {
		return nil
	}
	held := hold(ev)
	if held != nil {
		e.heldBytes += e.heldSize(held)
	}
	return held
}

// holdResult makes ent, indexed and in no list, the waiting result ev whose record is held,
// at the back of the waiting list.
func (e *Engine) holdResult(ent *entry, ev *Event, held any, now int64) {
	ent.state = stateWaiting
	ent.payload = held
	// No use yet: useTime keeps the earliest start the call's results showed.
	ent.useTime = earliest(ent.useTime, ev.Start)
	ent.resultTime = ev.Time
	ent.deadline = now + int64(e.cfg.OrphanGrace)
	ent.source = ev.Source
	ent.set(flagAborted, ev.aborts())
	if ent.toolName == nil {
		ent.toolName = e.name(ev.ToolName)
	}
	e.seq++
	ent.seq = e.seq
	e.waiting.pushBack(ent)
	ev.Verdict = VerdictHeld
}

// pairPending resolves a pending entry with the result ev: paired, or interrupted/aborted
// when ev is a KindAbort.
func (e *Engine) pairPending(ent *entry, ev *Event, now int64) Resolution {
	end := ev.Time
	if ent.state == statePendingHeld && ent.resultTime > 0 && ent.resultTime < end {
		// Its held companion showed an earlier end (InFlightAt): the call ended at the
		// earliest, as when the companion comes after the main result.
		end = ent.resultTime
	}
	r := Resolution{
		Outcome:    OutcomePaired,
		Key:        ent.key(),
		ToolName:   firstNonEmpty(ent.tool(), ev.ToolName),
		UseTime:    earliest(e.useFor(ent, ev.Signal), ev.Start),
		ResultTime: ev.Time,
		UseRef:     -1,
		UsePayload: ent.payload,
	}
	e.removePending(ent)
	if ev.aborts() {
		e.countAborted(&r)
	} else {
		e.stats.Paired++
	}
	ent.resultTime = end
	e.firstReport(ent, ev.Source, r.Outcome)
	e.toResolved(ent, now)
	return r
}

// countAborted turns a pairing resolution into interrupted/aborted: the call (use side) is
// interrupted and its result record (result side) is counted as aborted.
func (e *Engine) countAborted(r *Resolution) {
	r.Outcome, r.Reason = OutcomeInterrupted, ReasonAborted
	r.EndTime = r.ResultTime
	e.stats.Interrupted[ReasonAborted]++
	e.stats.Aborted++
}

// settleUnmatched decides the outcome of a result that never met its use: interrupted/aborted
// when the record says its call was aborted (aborted: the call is counted as seen through it,
// on both sides of the conservation), else orphan when its scope saw a use (usesSeen), else
// standalone. matched says the result is a KindMatch (also counted in Stats.UnmatchedOrphan or
// Stats.Unmatched unless aborted).
func (e *Engine) settleUnmatched(r *Resolution, usesSeen, matched, aborted bool) {
	switch {
	case aborted:
		e.stats.UsesSeen++
		e.countAborted(r)
	case usesSeen:
		r.Outcome = OutcomeOrphan
		e.stats.Orphan++
		if matched {
			e.stats.UnmatchedOrphan++
		}
	default:
		r.Outcome = OutcomeStandalone
		e.stats.Standalone++
		if matched {
			e.stats.Unmatched++
		}
	}
}

// duplicate counts the result ev of the call of ent, already resolved or waiting, as a
// duplicate and returns its resolution.
func (e *Engine) duplicate(ent *entry, ev *Event) Resolution {
	ev.Verdict = VerdictResolved
	e.stats.Duplicate++
	if ent.state == stateResolved && ev.Time > 0 && ev.Time < ent.resultTime {
		// A copy showing an earlier end than the record that resolved the call (the
		// result arriving after an echo of it): the call ended at the earliest (InFlightAt).
		ent.resultTime = ev.Time
	}
	same := ent.source == 0 || e.reportedBy(ent, ev.Source)
	if ent.has(flagRejected) && ent.source == 0 {
		// The first result of a refused call: no result resolved it, and this record is its
		// source's only record of the call (Codex answers a denied call with "exec command
		// rejected by user"). Later copies from the same source are retries.
		same = false
		ent.source = ev.Source
	}
	return Resolution{
		Outcome:    OutcomeDuplicate,
		Key:        ev.Key,
		ToolName:   firstNonEmpty(ev.ToolName, ent.tool()),
		UseTime:    ent.useTime,
		ResultTime: ev.Time,
		UseRef:     -1,
		ResultRef:  ev.Ref,
		SameSource: same,
		Matched:    ev.Kind == KindMatch,
	}
}
