// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// transitions_use.go holds what a use does to its call (the Use row of the table in
// transitions.go).

package pairing

import "strings"

func (e *Engine) use(ev *Event, now int64, out []Resolution) []Resolution {
	ent, h := e.findEvent(ev)
	if ent != nil {
		own(ev, ent)
		ent.scope.saw(now, ev.Time)
		ent.scope.usesSeen = true
		switch {
		case ent.state == stateWaiting && ent.has(flagCompanion):
			e.useAfterCompanion(ent, ev)
			return out
		case ent.state != stateWaiting:
			e.repeatedUse(ent, ev)
			return out
		}
		return e.useOfHeldResult(ent, ev, now, out)
	}
	if out, ok := e.useMatched(ev, h, now, out); ok {
		return out
	}
	return e.newUse(ev, h, now, out)
}

// useAfterCompanion: only a companion came first, so the call is now pending, and the
// companion goes on waiting for the main result for the rest of its grace.
func (e *Engine) useAfterCompanion(ent *entry, ev *Event) {
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
}

// repeatedUse: a use of a call already pending or resolved.
func (e *Engine) repeatedUse(ent *entry, ev *Event) {
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
}

// useOfHeldResult: the result came first and is held, so the pair is complete. Its entry's
// useTime is the held result's start, when its record showed one; from now on it is the
// use's time (each further report adds its own start: see reportOf).
func (e *Engine) useOfHeldResult(ent *entry, ev *Event, now int64, out []Resolution) []Resolution {
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

// newUse: the first use of a call key, pending until its result, of index hash h.
func (e *Engine) newUse(ev *Event, h uint64, now int64, out []Resolution) []Resolution {
	e.stats.UsesSeen++
	// Make room before looking the scope up: an eviction may forget the scope.
	out = e.makeRoom(now, out, ev.Key.Tenant)
	sc := e.conversationOfUse(ev.Key.ConversationKey(), now)
	sc.saw(now, ev.Time)
	ent := &entry{
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
