// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// reports.go holds the further reports of a call (specification section 2): a call's result
// can show in records of several sources (the tool's own span, a tool-result event, a
// companion span, the result repeated in a later request's history). The first record of each
// source gets the outcome its own content shows; the call is counted once, by the first
// report of all. A later record of a source that has already reported the call is a
// duplicate.

package pairing

// reportSet lists the sources, besides the entry's own source (the first report's), that
// have reported a call. It is kept only for calls that more than one source reported, in
// Engine.reported, by entry; its size keeps the map's values small. Once full, every further
// source counts as having reported the call (its records are duplicates).
type reportSet struct {
	n   uint8
	src [7]uint8
}

// heldReport is a result record of another source than the held result of a waiting call
// (its use not seen yet), held with it in Engine.heldReports: it is released with that
// result, with its own outcome.
type heldReport struct {
	payload     any
	time, start int64 // the record's time and the start it shows (Unix ns, 0 when none)
	source      uint8
	signal      uint8
	aborted     bool // the record reports its call's abort (KindAbort)
}

// reportedBy reports whether source src has reported the call of ent.
func (e *Engine) reportedBy(ent *entry, src uint8) bool {
	if ent.source == src {
		return true
	}
	if len(e.reported) == 0 {
		return false
	}
	rs, ok := e.reported[ent]
	if !ok {
		return false
	}
	for _, s := range rs.src[:rs.n] {
		if s == src {
			return true
		}
	}
	return int(rs.n) == len(rs.src)
}

// addReporter records that source src reported the call of ent.
func (e *Engine) addReporter(ent *entry, src uint8) {
	if ent.source == 0 {
		ent.source = src
		return
	}
	if e.reportedBy(ent, src) {
		return
	}
	rs := e.reported[ent]
	rs.src[rs.n] = src
	rs.n++
	e.reported[ent] = rs
}

// answered reports whether a report resolved the call of ent: a result or an echo, paired or
// aborted, or a result settled orphan or standalone. A call closed without one (interrupted
// and synthesized, or refused) has none: a result arriving after it is a duplicate.
func (ent *entry) answered() bool {
	return ent.has(flagAnswered)
}

// firstReport marks ent, about to be resolved, as answered by a record of source src whose
// outcome was outcome (orphan and standalone calls keep theirs for their further reports).
func (e *Engine) firstReport(ent *entry, src uint8, outcome Outcome) {
	ent.set(flagAnswered, true)
	ent.set(flagOrphan, outcome == OutcomeOrphan)
	ent.set(flagStandalone, outcome == OutcomeStandalone)
	ent.source = src
}

// report returns the further report ev of the resolved, answered call ent: the outcome the
// record's own content shows (paired with its own duration, or interrupted/aborted), or the
// orphan or standalone outcome of a call whose use was never seen.
func (e *Engine) report(ent *entry, ev *Event) Resolution {
	ev.Verdict = VerdictResolved
	e.addReporter(ent, ev.Source)
	r := e.reportOf(ent, ev.aborts(), ev.Time, ev.Start, ev.Signal)
	r.Key = ev.Key
	r.ToolName = firstNonEmpty(ent.tool(), ev.ToolName)
	r.ResultRef = ev.Ref
	r.Matched = ev.Kind == KindMatch
	return r
}

// reportOf is the resolution of a further report of the call ent at record time t, showing
// the start start, of signal sig, aborted when the record reports the call's abort.
func (e *Engine) reportOf(ent *entry, aborted bool, t, start int64, sig uint8) Resolution {
	e.stats.Reports++
	r := Resolution{
		Outcome:    OutcomePaired,
		Key:        ent.key(),
		ToolName:   ent.tool(),
		UseTime:    earliest(e.useFor(ent, sig), start),
		ResultTime: t,
		UseRef:     -1,
		ResultRef:  -1,
		Report:     true,
	}
	switch {
	case ent.has(flagOrphan):
		r.Outcome, r.UseTime = OutcomeOrphan, 0
	case ent.has(flagStandalone):
		r.Outcome, r.UseTime = OutcomeStandalone, 0
	case aborted:
		r.Outcome, r.Reason, r.EndTime = OutcomeInterrupted, ReasonAborted, t
	}
	return r
}

// holdReport holds the result record ev, of another source than the held result of the
// waiting call ent, with it.
func (e *Engine) holdReport(ent *entry, ev *Event, held any) {
	ev.Verdict = VerdictHeld
	e.addReporter(ent, ev.Source)
	e.stats.HeldReports++
	e.heldReports[ent] = append(e.heldReports[ent], heldReport{
		payload: held, time: ev.Time, start: ev.Start, source: ev.Source, signal: ev.Signal, aborted: ev.aborts(),
	})
}

// releaseReports releases the records held with ent (heldReports), whose call has just been
// resolved by its held result: as further reports of the call (their own outcome when the use
// arrived, at useTime; the held result's orphan or standalone otherwise), or, when refused is
// set (the call was refused: see KindReject), as kept duplicates counted as a result arriving
// after the refusal would be.
func (e *Engine) releaseReports(ent *entry, refused bool, out []Resolution) []Resolution {
	if len(e.heldReports) == 0 {
		return out
	}
	hs, ok := e.heldReports[ent]
	if !ok {
		return out
	}
	delete(e.heldReports, ent)
	e.stats.HeldReports -= len(hs)
	for _, h := range hs {
		var r Resolution
		if refused {
			// As the record would be had it come after the refusal: a kept duplicate.
			e.stats.ResultsSeen++
			e.stats.Duplicate++
			r = Resolution{Outcome: OutcomeDuplicate, Key: ent.key(), ToolName: ent.tool(), UseTime: ent.useTime,
				ResultTime: h.time, UseRef: -1, ResultRef: -1}
		} else {
			r = e.reportOf(ent, h.aborted, h.time, h.start, h.signal)
		}
		r.ResultPayload = h.payload
		out = append(out, r)
	}
	return out
}

// forgetReports drops what Engine.reported, Engine.heldReports and Engine.signalUses keep of
// ent.
func (e *Engine) forgetReports(ent *entry) {
	// Most calls have none of the three: skip the lookups then.
	if len(e.reported) > 0 {
		delete(e.reported, ent)
	}
	if len(e.heldReports) > 0 {
		delete(e.heldReports, ent)
	}
	if len(e.signalUses) > 0 {
		delete(e.signalUses, ent)
	}
}

// repeatUse records a repeated use ev of the call ent: the call starts at its earliest use,
// and each signal's earliest use is kept once uses came through both.
func (e *Engine) repeatUse(ent *entry, ev *Event) {
	if s := ev.Signal; s >= 1 && s <= 2 && ent.useSig >= 1 && ent.useSig <= 2 && (s != ent.useSig || (len(e.signalUses) > 0 && e.signalUses[ent] != [2]int64{})) {
		su, ok := e.signalUses[ent]
		if !ok {
			su[ent.useSig-1] = ent.useTime
		}
		su[s-1] = earliest(su[s-1], ev.Time)
		e.signalUses[ent] = su
	}
	ent.useTime = earliest(ent.useTime, ev.Time)
}

// useFor is the use time a result record of signal sig is measured from: the earliest use of
// its own signal when the call was announced through it, else the call's earliest use.
func (e *Engine) useFor(ent *entry, sig uint8) int64 {
	if sig >= 1 && sig <= 2 && len(e.signalUses) > 0 {
		if su, ok := e.signalUses[ent]; ok && su[sig-1] != 0 {
			return su[sig-1]
		}
	}
	return ent.useTime
}
