// store.go holds the tracker's store: operations (op) in intrusive lists (every operation in
// the order recorded, the resolved ones in the order resolved, and each scope's), the scope
// table, the call index of the scopes that hold many calls, interning, and the bounds that
// forget operations.

package inflight

import (
	"hash/maphash"
	"strings"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// maxNames bounds the interned tool names, and the interned tenants; names beyond it are
// copied per call, tenants per scope.
const maxNames = 4096

// callKey is the key of a call in Tracker.collide: its scope and call ID.
type callKey struct {
	scope  *scope
	callID string
}

// scope is what the tracker keeps of one scope: its operations and their counts.
type scope struct {
	key       pairing.ScopeKey
	id        uint64 // unique over the tracker's life, for callHash
	ops       list   // this scope's operations
	intervals int    // model calls and compactions among them
	calls     int    // tool calls among them
	// indexed: the scope's calls are in the tracker's index, since it once held more than
	// scanCalls calls; until then they are found by scanning ops.
	indexed bool
	// stored: the scope is the one Tracker.scopes holds for its key (it is put there once,
	// when made, and taken out once, when its last operation is forgotten), which spares
	// forget a lookup.
	stored bool
}

// scanCalls is how many tool calls a scope holds before they are indexed: a scope of a few
// calls (a trace, a short session) finds them faster by scanning its operations, most
// recent first, than through a map of every call, and spares the map its inserts and
// deletes.
const scanCalls = 8

// list is an intrusive doubly linked list of ops through one of their link pairs.
type list struct {
	head, tail *op
}

// link is an op's place in one list.
type link struct{ prev, next *op }

// op is one operation: a tool call (kind Call, by callID) or a model call or compaction
// interval. It is in the tracker's order list, its scope's list and, once resolved, the
// resolved list.
type op struct {
	kind       Kind
	scope      *scope
	callID     string
	tool       string
	hash       uint64 // of a call of an indexed scope: callHash(scope, callID)
	start, end int64  // Unix ns; 0: unknown (start) / not resolved (end)
	resolvedAt int64  // tracker clock, Unix ns, when end was first set
	live       bool

	inOrder, inScope, inResolved link
}

// push appends o to l through o's link lk.
func (l *list) push(o *op, lk func(*op) *link) {
	lk(o).prev, lk(o).next = l.tail, nil
	if l.tail != nil {
		lk(l.tail).next = o
	} else {
		l.head = o
	}
	l.tail = o
}

// remove takes o out of l through o's link lk; an o not in l is left as it is.
func (l *list) remove(o *op, lk func(*op) *link) {
	k := lk(o)
	if k.prev != nil {
		lk(k.prev).next = k.next
	} else if l.head == o {
		l.head = k.next
	} else {
		return // not in the list
	}
	if k.next != nil {
		lk(k.next).prev = k.prev
	} else {
		l.tail = k.prev
	}
	k.prev, k.next = nil, nil
}

// orderLink, scopeLink and resolvedLink select an op's link in the order list, its scope's
// list and the resolved list.
func orderLink(o *op) *link    { return &o.inOrder }
func scopeLink(o *op) *link    { return &o.inScope }
func resolvedLink(o *op) *link { return &o.inResolved }

// scope returns the scope of key k, creating it; owned says that k's strings may be kept as
// they are (Update.Owned).
func (t *Tracker) scope(k pairing.ScopeKey, owned bool) *scope {
	if sc := t.last; sc != nil && sc.key == k {
		return sc
	}
	sc := t.scopes[k]
	if sc == nil {
		if !owned {
			k = pairing.ScopeKey{Tenant: intern(t.tenants, k.Tenant), Scope: strings.Clone(k.Scope)}
		}
		t.scopeID++
		sc = &scope{key: k, id: t.scopeID, stored: true}
		t.scopes[k] = sc
	}
	t.last = sc
	return sc
}

// intern returns the tracker's copy of s from table, a copy interned there while it holds
// fewer than maxNames (tool names, tenants).
func intern(table map[string]string, s string) string {
	if c, ok := table[s]; ok {
		return c
	}
	c := strings.Clone(s)
	if len(table) < maxNames {
		table[c] = c
	}
	return c
}

func (t *Tracker) add(sc *scope, o *op) {
	o.scope, o.live = sc, true
	t.order.push(o, orderLink)
	sc.ops.push(o, scopeLink)
	t.n++
	if o.kind != Call {
		sc.intervals++
		return
	}
	sc.calls++
	switch {
	case sc.indexed:
		t.index(o)
	case sc.calls > t.scan:
		sc.indexed = true
		for c := sc.ops.head; c != nil; c = c.inScope.next {
			if c.kind == Call {
				t.index(c)
			}
		}
	}
}

// index adds a call of an indexed scope to the call index.
func (t *Tracker) index(o *op) {
	o.hash = t.callHash(o.scope, o.callID)
	if t.calls[o.hash] == nil {
		t.calls[o.hash] = o
	} else {
		t.collide[callKey{o.scope, o.callID}] = o
	}
}

// findCall returns the op of call callID of scope sc, or nil.
func (t *Tracker) findCall(sc *scope, callID string) *op {
	if !sc.indexed {
		for o := sc.ops.tail; o != nil; o = o.inScope.prev {
			if o.kind == Call && o.callID == callID {
				return o
			}
		}
		return nil
	}
	if o := t.calls[t.callHash(sc, callID)]; o != nil && o.scope == sc && o.callID == callID {
		return o
	}
	if len(t.collide) == 0 {
		return nil
	}
	return t.collide[callKey{sc, callID}]
}

// callHash is the index hash of call callID of scope sc: the call ID's hash mixed with the
// scope's id, so that no string of the scope key is hashed again.
func (t *Tracker) callHash(sc *scope, callID string) uint64 {
	return (maphash.String(t.seed, callID) ^ (sc.id * 0x9e3779b97f4a7c15)) & t.mask
}

// call returns the op of a call of update u, creating it, and records its tool name if not
// known yet.
func (t *Tracker) call(u *Update) *op {
	callID := u.CallID
	sc := t.scope(u.Scope, u.Owned)
	o := t.lastCall
	if o == nil || o.scope != sc || o.callID != callID {
		o = t.findCall(sc, callID)
		if o == nil {
			if !u.Owned {
				callID = strings.Clone(callID)
			}
			o = &op{kind: Call, callID: callID}
			t.add(sc, o)
		}
		t.lastCall = o
	}
	if o.tool == "" && u.Tool != "" {
		o.tool = intern(t.names, u.Tool)
	}
	return o
}

// setEnd sets an operation's end, keeping the earliest; a first end puts it in the resolved
// list, for Retention.
func (t *Tracker) setEnd(o *op, at, now int64) {
	if o.end != 0 && o.end <= at {
		return
	}
	if o.end == 0 {
		o.resolvedAt = now
		t.resolved.push(o, resolvedLink)
	}
	o.end = at
}

// forget removes an operation, and its scope when it was the scope's last.
func (t *Tracker) forget(o *op) {
	if !o.live {
		return
	}
	o.live = false
	if t.lastCall == o {
		t.lastCall = nil
	}
	t.order.remove(o, orderLink)
	t.resolved.remove(o, resolvedLink)
	sc := o.scope
	sc.ops.remove(o, scopeLink)
	t.n--
	switch {
	case o.kind != Call:
		sc.intervals--
	case sc.indexed:
		sc.calls--
		if t.calls[o.hash] == o {
			delete(t.calls, o.hash)
		} else {
			delete(t.collide, callKey{sc, o.callID})
		}
	default:
		sc.calls--
	}
	if sc.ops.head == nil && sc.stored {
		delete(t.scopes, sc.key)
		sc.stored = false
		if t.last == sc {
			t.last = nil
		}
	}
}

// trim applies the bounds: resolved operations past Retention, then the oldest beyond
// MaxOperations.
func (t *Tracker) trim(now int64) {
	cutoff := now - int64(t.cfg.Retention)
	for o := t.resolved.head; o != nil && o.resolvedAt <= cutoff; o = t.resolved.head {
		t.forget(o)
	}
	for t.n > t.cfg.MaxOperations {
		t.forget(t.order.head)
	}
}
