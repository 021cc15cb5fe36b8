// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// transitions.go holds the transition rules: Process and what each event does to the call
// its key names. A call is in one of five states: none (never seen, or forgotten), pending,
// waiting (a result held for its use), answered (resolved by a report: a result or an echo,
// paired or aborted, or a result settled orphan or standalone) and closed (resolved without
// one: interrupted and synthesized, or refused). By state (columns) and the event's Kind
// (rows), the outcome reported and the call's next state:
//
//	           none      pending     waiting       answered     closed
//	Use        pending   repeated    paired (2)    repeated     repeated
//	Result     held (1)  paired (2)  held+ (3)     report (4)   duplicate (5)
//	Companion  held (1)  paired      held+ (3)     report (4)   duplicate (5)
//	Echo       ignored   paired      ignored       report (4)   ignored
//	Reject     rejected  rejected    rejected, d   repeated     repeated
//	Refused    rejected  rejected    rejected, d   duplicate    duplicate (5)
//
// held, held+ and pending name the call's next state (held+: still waiting); report, repeated,
// duplicate and ignored leave the call as it was; every other outcome leaves it answered (paired)
// or closed (rejected). "d": the held records are released as kept duplicates (SameSource
// false). KindAbort is a Result whose paired outcome is interrupted/aborted.
//  (1) The hold callback keeps the record, which waits. When it cannot, the result settles
//      at once as orphan (its scope saw a use) or standalone.
//  (2) Interrupted/aborted when the result held or arriving is a KindAbort. The records held
//      with the result (3) are released as further reports with their own outcomes.
//  (3) A record of another Source than the held result's is held with it, and released with
//      it as a further report (Resolution.Report) with its own outcome; a record of a source
//      that has reported the call already (an export retry), or one the hold callback cannot
//      keep, is a duplicate.
//  (4) The first record of its Source for the call: a further report, with the outcome its
//      own content shows (specification section 2); a record of a source that has reported the
//      call already is a duplicate, and an echo of a call answered orphan or standalone is
//      ignored.
//  (5) SameSource false for the first result of a refused call (see KindReject).
// Two more states exist only in a state stored by an earlier version (see companion.go): a
// pending call whose companion record is held, and a companion held for its use.
// A new pending call or held result first makes room (see makeRoom in bounds_expiry.go). KindMatch
// results (match.go) find their call by Match rather than by key; step boundaries and
// session ends act on a scope (closing.go).

package pairing

import "strings"

// Process applies a batch of events in order and appends the outcomes it decided to out,
// which it returns. Each event's Verdict is set, and its Key replaced by the engine's copy
// of the call's key when it keeps the call (a KindMatch learns its call ID so). For each result that must wait for its use,
// hold is called once, under the engine's lock, and returns the caller's holder of the
// record (the engine hands it back as a ResultPayload when it releases the result, possibly
// from another goroutine's call), which the caller then removes from its batch; or nil when
// the record cannot wait (then the result is settled at once as orphan or standalone). hold
// must be quick: it runs under the lock that serialises the engine's callers. hold itself
// may be nil.
func (e *Engine) Process(events []Event, hold func(*Event) any, out []Resolution) []Resolution {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.cfg.Clock.Now().UnixNano()
	from := len(out)
	e.hashEvents(events)
	for i := range events {
		if i%prefetchChunk == 0 {
			e.readAhead(events[i:min(i+prefetchChunk, len(events))])
		}
		ev := &events[i]
		if ev.Key.CallID == "" && ev.Kind != KindBoundary && ev.Kind != KindSessionEnd && ev.Kind != KindMatch {
			ev.Verdict = VerdictNone
			continue
		}
		switch ev.Kind {
		case KindBoundary, KindSessionEnd:
			out = e.deferClose(ev, now, out)
		case KindUse:
			out = e.use(ev, now, out)
		case KindResult, KindAbort, KindCompanion:
			out = e.result(ev, now, hold, out)
		case KindEcho:
			out = e.echo(ev, now, out)
		case KindReject:
			out = e.reject(ev, now, out)
		case KindMatch:
			out = e.matchResult(ev, now, hold, out)
		case KindRefused:
			out = e.refuse(ev, now, hold, out)
		default:
			ev.Verdict = VerdictNone
		}
	}
	return e.boundHeld(now, out, from)
}

func (e *Engine) use(ev *Event, now int64, out []Resolution) []Resolution {
	ent, h := e.findEvent(ev)
	if ent != nil {
		own(ev, ent)
		ent.scope.saw(now, ev.Time)
		ent.scope.usesSeen = true
		if ent.state == stateWaiting && ent.has(flagCompanion) {
			// Only a companion came first: the call is now pending, and the companion goes on
			// waiting for the main result for the rest of its grace.
			e.stats.UsesSeen++
			e.stats.Pending++
			e.companions[ent] = ent.payload
			ent.state = statePendingHeld
			ent.set(flagCompanion, false)
			ent.payload = ev.Payload
			ent.useTime = earliest(ent.useTime, ev.Time) // the companion's start, or the use
			ent.step = e.step(ev.Step)
			if ent.toolName == nil {
				ent.toolName = e.name(ev.ToolName)
			}
			e.linkConversation(ent)
			e.addMatch(ent, ev.Match)
			ev.Verdict = VerdictPending
			return out
		}
		if ent.state != stateWaiting {
			ev.Verdict = VerdictRepeated
			e.stats.UsesRepeated++
			// A record of the call that arrives later may show an earlier time (the model's
			// tool_use arriving after the agent's decision, or after its refusal or its
			// result): the call starts at the earliest, whatever its state.
			e.repeatUse(ent, ev)
			if ent.state == statePending || ent.state == statePendingHeld {
				if ev.Payload != nil && e.cfg.MergePayload != nil {
					ent.payload = e.cfg.MergePayload(ent.payload, ev.Payload)
				}
				if ent.has(flagMatch) {
					e.relistMatch(ent)
				}
			}
			return out
		}
		// The result came first and is held: the pair is complete. Its entry's useTime is the
		// held result's start, when its record showed one; from now on it is the use's time
		// (each further report adds its own start: see reportOf).
		e.stats.UsesSeen++
		ev.Verdict = VerdictResolved
		if ent.toolName == nil {
			ent.toolName = e.name(ev.ToolName)
		}
		r := Resolution{
			Outcome:       OutcomePaired,
			Key:           ev.Key,
			ToolName:      firstNonEmpty(ev.ToolName, ent.tool()),
			UseTime:       earliest(ent.useTime, ev.Time),
			ResultTime:    ent.resultTime,
			UseRef:        ev.Ref,
			ResultRef:     -1,
			UsePayload:    ev.Payload,
			ResultPayload: ent.payload,
		}
		ent.useTime, ent.useSig = ev.Time, ev.Signal
		e.waiting.remove(ent)
		e.stats.Waiting--
		if ent.has(flagAborted) {
			e.countAborted(&r)
		} else {
			e.stats.Paired++
		}
		e.firstReport(ent, ent.source, r.Outcome)
		out = append(out, r)
		out = e.releaseReports(ent, false, out)
		e.toResolvedMatch(ent, now, ev.Match) // a tool span without a call ID may still repeat its result
		return out
	}
	if out, ok := e.useMatched(ev, h, now, out); ok {
		return out
	}
	e.stats.UsesSeen++
	// Make room before looking the scope up: an eviction may forget the scope.
	out = e.makeRoom(now, out, ev.Key.Tenant)
	sc := e.conversationOfUse(ev.Key.ConversationKey(), now)
	sc.saw(now, ev.Time)
	ent = &entry{
		scope:    sc,
		callID:   strings.Clone(ev.Key.CallID),
		toolName: e.name(ev.ToolName),
		payload:  ev.Payload,
		useTime:  ev.Time,
		useSig:   ev.Signal,
		deadline: now + int64(e.cfg.PairingTimeout),
		state:    statePending,
		step:     e.step(ev.Step),
	}
	e.insertHashed(ent, &e.pending, h)
	own(ev, ent)
	e.stats.Pending++
	e.linkConversation(ent)
	e.addMatch(ent, ev.Match)
	ev.Verdict = VerdictPending
	return out
}

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

func (e *Engine) echo(ev *Event, now int64, out []Resolution) []Resolution {
	ent := e.lookup(ev.Key)
	if ent != nil {
		own(ev, ent)
		ent.scope.saw(now, ev.Time)
	} else if sc := e.conversations[ev.Key.ConversationKey()]; sc != nil {
		// Ignored, but a sign of life of its scope all the same.
		sc.saw(now, ev.Time)
	}
	if ent != nil && ent.state == stateResolved && ent.answered() && !ent.has(flagOrphan|flagStandalone) &&
		!e.reportedBy(ent, ev.Source) {
		// The first echo of a call another record answered: a further report, paired.
		return append(out, e.report(ent, ev))
	}
	if ent == nil || ent.state != statePending {
		ev.Verdict = VerdictIgnored
		e.stats.EchoesIgnored++
		return out
	}
	e.stats.ResultsSeen++
	ev.Verdict = VerdictResolved
	r := e.pairPending(ent, ev, now)
	// The echo's record is the only record of the result seen: it carries the outcome, so
	// that every call counted paired has a record marked paired.
	r.ResultRef = ev.Ref
	return append(out, r)
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

// earliest returns the earlier of two record times in Unix ns, where 0 means unknown.
func earliest(a, b int64) int64 {
	switch {
	case a == 0:
		return b
	case b == 0:
		return a
	}
	return min(a, b)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
