package pairing

import "slices"

// matchKey locates the pending calls that a KindMatch result of one scope may resolve: those
// whose use had the same Match.
type matchKey struct {
	scope *scopeState
	match uint64
}

// addMatch lists the pending call ent under its use's Match m (nothing when m is 0). The
// listing lives exactly as long as the call is pending: removePending takes it out, so it is
// bounded by the pending calls (max_pending_calls).
func (e *Engine) addMatch(ent *entry, m uint64) {
	if m == 0 || ent.has(flagMatch) {
		return
	}
	k := matchKey{scope: ent.scope, match: m}
	e.matches[k] = append(e.matches[k], ent)
	e.matchOf[ent] = m
	ent.set(flagMatch, true)
}

// removeMatch takes the pending call ent, listed by addMatch, out of its list.
func (e *Engine) removeMatch(ent *entry) {
	m := e.matchOf[ent]
	delete(e.matchOf, ent)
	ent.set(flagMatch, false)
	k := matchKey{scope: ent.scope, match: m}
	list := e.matches[k]
	if i := slices.Index(list, ent); i >= 0 {
		list = slices.Delete(list, i, i+1)
	}
	if len(list) == 0 {
		delete(e.matches, k)
		return
	}
	e.matches[k] = list
}

// matchResult applies a KindMatch result: it pairs the pending call of its scope with the
// same Match whose use is the earliest (the first to arrive among equal use times), or
// settles the record as standalone when there is none.
func (e *Engine) matchResult(ev *Event, now int64, out []Resolution) []Resolution {
	e.stats.ResultsSeen++
	ev.Verdict = VerdictResolved
	var ent *entry
	if sc := e.scopes[ev.Key.ScopeKey()]; sc != nil && ev.Match != 0 {
		sc.lastSeen = now
		for _, c := range e.matches[matchKey{scope: sc, match: ev.Match}] {
			if ent == nil || c.useTime < ent.useTime {
				ent = c
			}
		}
	}
	if ent == nil {
		e.stats.Standalone++
		e.stats.Unmatched++
		return append(out, Resolution{
			Outcome:    OutcomeStandalone,
			Key:        ev.Key,
			ToolName:   ev.ToolName,
			ResultTime: ev.Time,
			UseRef:     -1,
			ResultRef:  ev.Ref,
		})
	}
	own(ev, ent)
	dup, held := e.takeCompanion(ent)
	r := e.pairPending(ent, ev, now)
	r.ResultRef = ev.Ref
	out = append(out, r)
	if held {
		out = append(out, dup)
	}
	return out
}
