// companion.go holds the companion result records (KindCompanion): holding one for a pending
// call, releasing it as a duplicate when the call's main result arrives, and letting it
// answer the call when the main result does not come in time.

package pairing

// holdCompanion holds the companion ev of the pending call ent: the call moves to the
// waiting list, to wait orphan_grace for its main result.
func (e *Engine) holdCompanion(ent *entry, ev *Event, held any, now int64) {
	e.pending.remove(ent)
	ent.state = statePendingHeld
	e.companions[ent] = held
	ent.useTime = earliest(ent.useTime, ev.Start)
	ent.resultTime = ev.Time
	ent.source = ev.Source
	ent.deadline = now + int64(e.cfg.OrphanGrace)
	e.seq++
	ent.seq = e.seq
	e.waiting.pushBack(ent)
	e.stats.Waiting++
	ev.Verdict = VerdictHeld
}

// companionDuplicate counts a held companion record as a duplicate of its call's main
// result and returns the resolution that releases it. ent holds the companion's times.
func (e *Engine) companionDuplicate(ent *entry, held any) Resolution {
	e.stats.Duplicate++
	return Resolution{
		Outcome:       OutcomeDuplicate,
		Key:           ent.key(),
		ToolName:      ent.tool(),
		UseTime:       ent.useTime,
		ResultTime:    ent.resultTime,
		UseRef:        -1,
		ResultRef:     -1,
		ResultPayload: held,
	}
}

// takeCompanion takes the companion held for the pending call ent (statePendingHeld), when
// its main result arrived: it returns the resolution that releases the companion as a
// duplicate, and false when no companion is held. ent stays in its lists.
func (e *Engine) takeCompanion(ent *entry) (Resolution, bool) {
	held, ok := e.companions[ent]
	if !ok {
		return Resolution{}, false
	}
	delete(e.companions, ent)
	e.stats.Waiting--
	return e.companionDuplicate(ent, held), true
}

// settleCompanion resolves the pending call ent (statePendingHeld) with its held companion,
// whose main result did not come in time: paired, the companion released with the outcome.
func (e *Engine) settleCompanion(ent *entry, now int64, out []Resolution) []Resolution {
	held := e.companions[ent]
	delete(e.companions, ent)
	e.stats.Waiting--
	e.removePending(ent)
	e.stats.Paired++
	out = append(out, Resolution{
		Outcome:       OutcomePaired,
		Key:           ent.key(),
		ToolName:      ent.tool(),
		UseTime:       ent.useTime,
		ResultTime:    ent.resultTime,
		UseRef:        -1,
		ResultRef:     -1,
		UsePayload:    ent.payload,
		ResultPayload: held,
	})
	e.toResolved(ent, now)
	return out
}
