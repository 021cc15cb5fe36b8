// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package pairing

import "fmt"

// checkScopes verifies the scope table against the lists: every entry of the store is listed
// in its scope's entries exactly once, the pending ones first; each scope's refs count its
// entries, queued closings and activity; every activity listed belongs to a stored scope.
func (e *Engine) checkScopes() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	listed := map[*entry]bool{}
	chained := map[uint32]bool{}
	for k, sc := range e.conversations {
		if sc.key != k || !sc.stored {
			return fmt.Errorf("scope %v stored under %v (stored %v)", sc.key, k, sc.stored)
		}
		n, pendingDone := 0, false
		var prev *entry
		for ent := sc.entries; ent != nil; ent = ent.snext {
			if ent.scope != sc || ent.sprev != prev || listed[ent] {
				return fmt.Errorf("scope %v: entry %q misplaced in its list", k, ent.callID)
			}
			listed[ent] = true
			pending := ent.state == statePending || ent.state == statePendingHeld
			if pending && pendingDone {
				return fmt.Errorf("scope %v: pending entry %q after a settled one", k, ent.callID)
			}
			pendingDone = pendingDone || !pending
			prev = ent
			n++
		}
		if sc.tail != prev {
			return fmt.Errorf("scope %v: tail is not the last entry", k)
		}
		last := uint32(0)
		for p := sc.resolvedFirst; p != 0; p = e.resolved.at(p - 1).next {
			rc := e.resolved.at(p - 1)
			if rc.scope != sc || chained[p] {
				return fmt.Errorf("scope %v: resolved call %q misplaced in its chain", k, rc.callID)
			}
			if rc.ext != nil && (rc.ext.state != stateResolved || rc.ext.scope != sc || rc.ext.sprev != nil || sc.entries == rc.ext) {
				return fmt.Errorf("scope %v: resolved call %q has an entry out of place", k, rc.callID)
			}
			chained[p] = true
			last = p
			n++
		}
		if sc.resolvedLast != last {
			return fmt.Errorf("scope %v: resolvedLast is not the last resolved call", k)
		}
		act := 0
		if sc.act != nil {
			act = 1
			if sc.act.scope != sc {
				return fmt.Errorf("scope %v: activity of another scope", k)
			}
		}
		if want := n + len(sc.closings) + act; sc.refs != want {
			return fmt.Errorf("scope %v: refs %d, want %d entries + %d closings + %d activity", k, sc.refs, n, len(sc.closings), act)
		}
	}
	if len(chained) != e.resolved.n {
		return fmt.Errorf("%d resolved calls chained in their scopes, %d held", len(chained), e.resolved.n)
	}
	for _, rc := range e.resolvedCalls() {
		if rc.callID != "" {
			if p, ok := e.resolved.find(rc.hash, Key{Tenant: rc.scope.key.Tenant, Conversation: rc.scope.key.Conversation, CallID: rc.callID}); !ok || e.resolved.at(p) != rc {
				return fmt.Errorf("resolved call %q is not found by its key", rc.callID)
			}
		}
	}
	for _, l := range []*fifo{&e.pending, &e.waiting} {
		for ent := l.head; ent != nil; ent = ent.next {
			if !listed[ent] {
				return fmt.Errorf("entry %q (state %d) is not in its scope's list", ent.callID, ent.state)
			}
			delete(listed, ent)
		}
	}
	if len(listed) > 0 {
		return fmt.Errorf("%d entries listed in scopes and in no list of the store", len(listed))
	}
	items := 0
	for a := e.acts.head; a != nil; a = a.next {
		if a.scope.act != a || !a.scope.stored {
			return fmt.Errorf("activity of scope %v is not its scope's", a.scope.key)
		}
		items += a.items()
	}
	if items != e.acts.items {
		return fmt.Errorf("activity items %d, counted %d", items, e.acts.items)
	}
	return nil
}

// checkInFlight asks InFlightAt about scope k at instant at and checks the answer against the
// scope's entries, counted here the slow way: each call with a known start at or before at
// whose end (none while pending) is after at.
func (e *Engine) checkInFlight(k ConversationKey, at int64) error {
	f := e.InFlightAt(k, at)
	e.mu.Lock()
	defer e.mu.Unlock()
	want := 0
	starts := map[string]int64{}
	if sc := e.conversations[k]; sc != nil {
		var ents []*entry
		for ent := sc.entries; ent != nil; ent = ent.snext {
			ents = append(ents, ent)
		}
		for _, rc := range e.resolvedCalls() {
			if rc.scope == sc {
				v := rc.view()
				ents = append(ents, &v)
			}
		}
		for _, ent := range ents {
			if ent.callID == "" || ent.useTime <= 0 || ent.useTime > at {
				continue
			}
			switch {
			case ent.state == statePending:
			case ent.state == stateResolved && ent.resultTime == 0:
				continue
			case ent.resultTime <= at:
				continue
			}
			want++
			starts[ent.callID] = ent.useTime
		}
	}
	if f.Tools != want {
		return fmt.Errorf("InFlightAt(%v, %d): %d tools, the entries say %d", k, at, f.Tools, want)
	}
	if want > 0 {
		if start, ok := starts[f.Latest.CallID]; !ok || start != f.Latest.Start {
			return fmt.Errorf("InFlightAt(%v, %d): latest %+v is not a call in flight", k, at, f.Latest)
		}
		for _, st := range starts {
			if st > f.Latest.Start {
				return fmt.Errorf("InFlightAt(%v, %d): latest %+v started before another call in flight", k, at, f.Latest)
			}
		}
	}
	return nil
}

// resolvedCalls returns the resolved calls, oldest first.
func (e *Engine) resolvedCalls() []*resolvedCall {
	var out []*resolvedCall
	for i := range e.resolved.n {
		out = append(out, e.resolved.at(e.resolved.pos(i)))
	}
	return out
}
