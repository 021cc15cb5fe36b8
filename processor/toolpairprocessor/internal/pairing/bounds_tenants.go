// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// bounds_tenants.go keeps one tenant's flood from costing another's calls: the pending uses and
// waiting results are counted per tenant (the pending and waiting lists tell countLoad of
// every entry in and out), each tenant keeps the order its entries came in, and eviction
// takes the oldest of the tenant at its own bound, or, at MaxPending, of the tenant holding
// the most, so that a tenant holding fewer than another is never evicted for it.

package pairing

// tenantLoad is what one tenant holds.
type tenantLoad struct {
	name string
	// n counts the tenant's entries in the pending and waiting lists.
	n int
	// q holds the tenant's entries in the order they entered a list, from head on; entries
	// that have left since are skipped when met (oldestOf) and dropped when q is compacted.
	q    []*entry
	head int
	// stored: the load is the one Engine.loads holds for its name.
	stored bool
}

// loadOf returns the load of tenant: the stored one, else a new one that is stored only
// when an entry is first counted in (countLoad), so that a tenant whose records leave nothing
// pending (a rejection, an orphan) stores no load.
func (e *Engine) loadOf(tenant string) *tenantLoad {
	if t := e.loads[tenant]; t != nil {
		return t
	}
	return &tenantLoad{name: tenant}
}

// countLoad counts ent in (delta 1) or out of (-1) its tenant's load.
func (e *Engine) countLoad(ent *entry, delta int) {
	t := ent.scope.load
	if delta > 0 {
		if !t.stored {
			// The tenant held nothing for a while: its conversation takes the tenant's
			// current load, so that one tenant never has two.
			if cur := e.loads[t.name]; cur != nil {
				t = cur
			} else {
				t.stored = true
				e.loads[t.name] = t
			}
			ent.scope.load = t
		}
		if e.idle == t {
			e.idle = nil
		}
		t.n++
		t.q = append(t.q, ent)
		if e.heavy == nil || t.n > e.heavy.n {
			e.heavy = t
		}
		return
	}
	t.n--
	switch {
	case t.n == 0:
		clear(t.q)
		t.q, t.head = t.q[:0], 0
		if e.heavy == t {
			e.heavy = nil
		}
		// The last tenant to empty stays stored: one whose calls are paired one at a time
		// empties at every result, and would leave the map and enter it again every call.
		// Any other empty tenant leaves it.
		if i := e.idle; i != nil && i != t {
			delete(e.loads, i.name)
			i.stored = false
		}
		e.idle = t
	case len(t.q)-t.head > 2*t.n+32:
		t.compact()
	}
}

// live reports whether ent is in the pending or waiting list.
func (ent *entry) live() bool {
	return ent.state == statePending || ent.state == statePendingHeld || ent.state == stateWaiting
}

// compact drops from t.q the entries that have left.
func (t *tenantLoad) compact() {
	kept := t.q[:0]
	for _, ent := range t.q[t.head:] {
		if ent.live() && ent.scope.load == t {
			kept = append(kept, ent)
		}
	}
	clear(t.q[len(kept):])
	t.q, t.head = kept, 0
}

// oldestOf returns the oldest entry t holds, or nil.
func (e *Engine) oldestOf(t *tenantLoad) *entry {
	if t == nil {
		return nil
	}
	for t.head < len(t.q) {
		ent := t.q[t.head]
		if ent.live() && ent.scope.load == t {
			return ent
		}
		t.q[t.head] = nil
		t.head++
	}
	return nil
}

// heaviest returns the load of the tenant holding the most entries. The remembered one is
// kept while it holds at least the average; otherwise every load is looked at.
func (e *Engine) heaviest() *tenantLoad {
	total := e.pending.n + e.waiting.n
	if t := e.heavy; t != nil && t.stored && t.n > 0 && t.n*e.holding() >= total {
		return t
	}
	e.heavy = nil
	for _, t := range e.loads {
		if e.heavy == nil || t.n > e.heavy.n {
			e.heavy = t
		}
	}
	return e.heavy
}

// holding is the number of tenants holding entries: the loads stored (a load is stored when
// an entry is counted in), but the idle one.
func (e *Engine) holding() int {
	if e.idle != nil {
		return len(e.loads) - 1
	}
	return len(e.loads)
}
