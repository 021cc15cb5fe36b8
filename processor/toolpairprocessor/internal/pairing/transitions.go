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
