// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// refusal.go holds the two ways a call is refused: the agent's refusal announced as a use
// (KindReject) and a result record saying the user refused the call (KindRefused).

package pairing

import "strings"

func (e *Engine) reject(ev *Event, now int64, out []Resolution) []Resolution {
	r := Resolution{
		Outcome:    OutcomeRejected,
		Key:        ev.Key,
		ToolName:   ev.ToolName,
		UseTime:    ev.Time,
		EndTime:    ev.Time,
		UseRef:     ev.Ref,
		ResultRef:  -1,
		UsePayload: ev.Payload,
	}
	ent := e.lookup(ev.Key)
	if ent != nil {
		own(ev, ent)
		ent.scope.saw(now, ev.Time)
		ent.scope.usesSeen = true
		switch ent.state {
		case stateResolved:
			ev.Verdict = VerdictRepeated
			e.stats.UsesRepeated++
			return out
		case statePending:
			// Announced first (a model's tool_use), then refused by the agent.
			ev.Verdict = VerdictResolved
			e.removePending(ent)
			e.stats.Rejected++
			r.ToolName = firstNonEmpty(ent.tool(), ev.ToolName)
			r.UseTime = ent.useTime
			r.UsePayload = ent.payload
			ent.set(flagRejected, true)
			ent.resultTime = ev.Time
			e.toResolved(ent, now)
			return append(out, r)
		case statePendingHeld:
			// The call ran (its companion is held): the refusal is a repeated use.
			ev.Verdict = VerdictRepeated
			e.stats.UsesRepeated++
			return e.closeWithCompanion(ent, now, out)
		case stateWaiting:
			// A result held before the refusal: released as what it would be after it, a
			// duplicate kept as its source's only record of the refused call, so the order
			// of arrival does not change the outcome (specification section 2).
			e.stats.UsesSeen++
			e.stats.Rejected++
			ev.Verdict = VerdictResolved
			out = append(out, r)
			e.waiting.remove(ent)
			e.stats.Waiting--
			e.stats.Duplicate++
			out = append(out, Resolution{
				Outcome:       OutcomeDuplicate,
				Key:           ent.key(),
				ToolName:      firstNonEmpty(ent.tool(), ev.ToolName),
				UseTime:       ev.Time,
				ResultTime:    ent.resultTime,
				UseRef:        -1,
				ResultRef:     -1,
				ResultPayload: ent.payload,
			})
			out = e.releaseReports(ent, true, out)
			ent.set(flagRejected, true)
			e.toResolved(ent, now)
			return out
		}
	}
	e.stats.UsesSeen++
	e.stats.Rejected++
	ev.Verdict = VerdictResolved
	sc := e.conversationOfUse(ev.Key.ConversationKey(), now)
	sc.saw(now, ev.Time)
	ent = &entry{scope: sc, callID: strings.Clone(ev.Key.CallID), toolName: e.name(ev.ToolName), useTime: ev.Time, resultTime: ev.Time, flags: flagRejected}
	e.insertResolved(ent, now)
	own(ev, ent)
	return append(out, r)
}

// refuse applies a KindRefused event: a result record saying the user refused its call.
func (e *Engine) refuse(ev *Event, now int64, hold func(*Event) any, out []Resolution) []Resolution {
	ent := e.lookup(ev.Key)
	if ent != nil && ent.state == stateResolved {
		// Already resolved: a result record like any other, a duplicate.
		return e.result(ev, now, hold, out)
	}
	r := Resolution{
		Outcome:    OutcomeRejected,
		Key:        ev.Key,
		ToolName:   ev.ToolName,
		UseTime:    ev.Time,
		EndTime:    ev.Time,
		UseRef:     -1,
		ResultRef:  ev.Ref,
		ResultTime: ev.Time,
	}
	ev.Verdict = VerdictResolved
	e.stats.Rejected++
	if ent == nil {
		// The refusal came before the call's use: the use is seen through it.
		e.stats.UsesSeen++
		sc := e.conversationOfUse(ev.Key.ConversationKey(), now)
		sc.saw(now, ev.Time)
		ent = &entry{scope: sc, callID: strings.Clone(ev.Key.CallID), useTime: ev.Time, resultTime: ev.Time, source: ev.Source, flags: flagRejected}
		e.insertResolved(ent, now)
		own(ev, ent)
		return append(out, r)
	}
	own(ev, ent)
	ent.scope.saw(now, ev.Time)
	ent.scope.usesSeen = true
	r.Key = ev.Key
	if ent.state == stateWaiting {
		// A result held before the refusal (and the use not seen): released as a kept
		// duplicate, as after a KindReject.
		e.stats.UsesSeen++
		e.waiting.remove(ent)
		e.stats.Waiting--
		e.stats.Duplicate++
		r.ToolName = firstNonEmpty(ent.tool(), ev.ToolName)
		out = append(out, r, Resolution{
			Outcome:       OutcomeDuplicate,
			Key:           ent.key(),
			ToolName:      r.ToolName,
			UseTime:       ev.Time,
			ResultTime:    ent.resultTime,
			UseRef:        -1,
			ResultRef:     -1,
			ResultPayload: ent.payload,
		})
		out = e.releaseReports(ent, true, out)
		ent.set(flagRejected, true)
		e.toResolved(ent, now)
		return out
	}
	// Pending (its companion perhaps held: released as a duplicate of this record).
	dup, held := e.takeCompanion(ent)
	e.removePending(ent)
	r.ToolName = firstNonEmpty(ent.tool(), ev.ToolName)
	r.UseTime = ent.useTime
	r.UsePayload = ent.payload
	ent.set(flagRejected, true)
	ent.source = ev.Source
	ent.resultTime = ev.Time
	e.toResolved(ent, now)
	out = append(out, r)
	if held {
		out = append(out, dup)
	}
	return out
}
