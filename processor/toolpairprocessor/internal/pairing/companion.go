// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// companion.go holds the companion result records that a state stored by an earlier version
// may still hold for a pending call (statePendingHeld; restored from a CallPendingHeld):
// released as a further report when the call's main result arrives, or answering the call
// when the main result does not come in time. New companion records (KindCompanion) are
// results like any other (specification section 2: each source's first record gets its own
// outcome) and are never held for the main record.

package pairing

// companionReport returns the resolution that releases a held companion record as a further
// report of its call, answered by its main result: paired, with its own duration. ent holds
// the companion's times.
func (e *Engine) companionReport(ent *entry, held any) Resolution {
	e.stats.Reports++
	return Resolution{
		Outcome:       OutcomePaired,
		Key:           ent.key(),
		ToolName:      ent.tool(),
		UseTime:       ent.useTime,
		ResultTime:    ent.resultTime,
		UseRef:        -1,
		ResultRef:     -1,
		ResultPayload: held,
		Report:        true,
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
	return e.companionReport(ent, held), true
}

// closeWithCompanion resolves the pending call ent (statePendingHeld) with its held companion,
// whose main result did not come in time: paired, the companion released with the outcome.
func (e *Engine) closeWithCompanion(ent *entry, now int64, out []Resolution) []Resolution {
	held := e.companions[ent]
	delete(e.companions, ent)
	e.stats.Waiting--
	e.removePending(ent)
	e.stats.Paired++
	e.firstReport(ent, ent.source, OutcomePaired)
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
