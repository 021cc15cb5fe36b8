// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// resolved.go holds the memory of resolved calls (its ring and index in resolvedring.go): what the engine keeps of a call once it is
// resolved, for as long as Config.ResolvedRetention and Config.MaxResolved allow, so that a
// later copy of its result is a duplicate, a later use a repeat (specification section 2),
// and a timeout record can still find it in flight (InFlightAt).

package pairing

// resolvedCall is one resolved call in the memory. Most resolved calls need no more than
// these fields, so the entry they were pending or waiting in is let go at resolution and the
// call costs one slot of the ring and one of its index instead of an entry, an index slot
// and two scope links. A call that needs its entry still (listed under a Match, reported by
// several sources, with each signal's earliest use, or looked up again after resolution)
// keeps it in ext, whose fields are then the call's and are read instead of the copies here;
// scope and callID stay true in both.
type resolvedCall struct {
	scope  *conversation
	callID string
	tool   *string
	ext    *entry
	// useTime, resultTime and deadline are the entry's (record times and engine clock, Unix ns).
	useTime, resultTime, deadline int64
	seq                           uint64
	// next is the position (plus one, 0 for none) of the next resolved call of the same
	// scope, in order of resolution (conversation.resolvedFirst).
	next   uint32
	hash   uint32 // the key's index hash (Engine.hash)
	source uint8
	flags  entryFlags
	useSig uint8
}

// keepsEntry reports whether the resolved call of ent needs its entry: listed under a Match,
// or named in one of the engine's side tables (reports, held reports, each signal's uses,
// companions), which are keyed by entry.
func (e *Engine) keepsEntry(ent *entry) bool {
	return ent.has(flagMatch) || inTable(e.reported, ent) || inTable(e.heldReports, ent) ||
		inTable(e.signalUses, ent) || inTable(e.companions, ent)
}

// inTable reports whether m has ent; most calls are in no table, whose length spares the
// lookup.
func inTable[V any](m map[*entry]V, ent *entry) bool {
	if len(m) == 0 {
		return false
	}
	_, ok := m[ent]
	return ok
}

// insertResolved remembers ent, a call resolved at once (in no list, not indexed, not in its
// scope's entries), as resolved.
func (e *Engine) insertResolved(ent *entry, now int64) {
	e.seq++
	ent.seq = e.seq
	e.resolve(ent, now, 0, false)
}

// toResolved moves an entry that was already removed from its list to the resolved calls.
func (e *Engine) toResolved(ent *entry, now int64) {
	e.seq++
	ent.seq = e.seq
	e.resolve(ent, now, 0, ent.callID != "")
}

// toResolvedMatch is toResolved for a call that is listed under Match m once resolved (a
// tool span without a call ID may still repeat its result).
func (e *Engine) toResolvedMatch(ent *entry, now int64, m uint64) {
	e.seq++
	ent.seq = e.seq
	e.resolve(ent, now, m, ent.callID != "")
}

// resolve makes ent resolved with its retention from now, listed under Match m (when not 0),
// takes it out of the call index (when indexed) and its scope's entries (its scope's ref passes to the
// resolved call), remembers it in the resolved calls, with its entry only when keepsEntry
// says so, and forgets the oldest resolved calls beyond Config.MaxResolved.
func (e *Engine) resolve(ent *entry, now int64, m uint64, indexed bool) {
	ent.state = stateResolved
	ent.payload = nil
	ent.deadline = now + int64(e.cfg.ResolvedRetention)
	e.listMatch(ent, m)
	if indexed {
		e.index.remove(ent)
	}
	if sc := ent.scope; ent.sprev != nil || sc.entries == ent {
		unlinkConversation(ent)
	} else {
		sc.refs++
	}
	e.remember(ent)
	e.trimResolved()
}

// remember adds resolved ent, out of the index and its scope's entries and whose scope
// already counts it, at the back of the resolved calls.
func (e *Engine) remember(ent *entry) {
	if ent.hash == 0 && ent.callID != "" {
		ent.hash = uint32(e.hash(ent.key()))
	}
	rc := resolvedCall{
		scope: ent.scope, callID: ent.callID, tool: ent.toolName,
		useTime: ent.useTime, resultTime: ent.resultTime, deadline: ent.deadline, seq: ent.seq,
		hash: ent.hash, source: ent.source, flags: ent.flags, useSig: ent.useSig,
	}
	if e.keepsEntry(ent) {
		rc.ext = ent
	}
	p := e.resolved.push(rc, e.relinkResolved)
	if rc.callID != "" {
		e.resolved.index(p)
	}
	e.chainResolved(p)
}

// chainResolved appends the call at position p to its scope's chain of resolved calls.
func (e *Engine) chainResolved(p uint32) {
	rc := e.resolved.at(p)
	rc.next = 0
	sc := rc.scope
	if sc.resolvedLast != 0 {
		e.resolved.at(sc.resolvedLast - 1).next = p + 1
	} else {
		sc.resolvedFirst = p + 1
	}
	sc.resolvedLast = p + 1
}

// relinkResolved links every scope's chain again after the ring placed its calls anew.
func (e *Engine) relinkResolved() {
	m := &e.resolved
	for i := range m.n {
		sc := m.calls[m.pos(i)].scope
		sc.resolvedFirst, sc.resolvedLast = 0, 0
	}
	for i := range m.n {
		e.chainResolved(m.pos(i))
	}
}

// trimResolved forgets the oldest resolved calls beyond Config.MaxResolved.
func (e *Engine) trimResolved() {
	for e.resolved.n > e.cfg.MaxResolved {
		e.forgetOldest()
	}
}

// unchainOldest takes the oldest resolved call out of the ring and of its scope's chain,
// whose first call it is, and returns it; its scope still counts it.
func (e *Engine) unchainOldest() resolvedCall {
	rc := e.resolved.pop()
	sc := rc.scope
	sc.resolvedFirst = rc.next
	if rc.next == 0 {
		sc.resolvedLast = 0
	}
	return rc
}

// forgetOldest forgets the oldest resolved call, with its entry's listing and side tables
// when it kept its entry, and its scope once nothing else holds it.
func (e *Engine) forgetOldest() {
	rc := e.unchainOldest()
	if ent := rc.ext; ent != nil {
		if ent.has(flagMatch) {
			e.unlistMatch(ent)
		}
		e.forgetReports(ent)
		ent.payload = nil
	}
	if sc := rc.scope; sc != nil {
		sc.refs--
		if sc.refs <= 0 {
			e.forgetConversation(sc)
		}
	}
}

// requeueOldest moves the oldest resolved call to the back with deadline d: its scope is
// still active.
func (e *Engine) requeueOldest(d int64) {
	rc := e.unchainOldest()
	rc.deadline = d
	if rc.ext != nil {
		rc.ext.deadline = d
	}
	p := e.resolved.push(rc, e.relinkResolved)
	if rc.callID != "" {
		e.resolved.index(p)
	}
	e.chainResolved(p)
}

// findResolved returns the entry of the resolved call of key k, whose index hash is h, or
// nil. A call kept without its entry gets one now (kept from then on), so that the
// transitions read and change a resolved call as any other.
func (e *Engine) findResolved(h uint32, k Key) *entry {
	p, ok := e.resolved.find(h, k)
	if !ok {
		return nil
	}
	return e.entryOf(e.resolved.at(p))
}

// entryOf returns the entry of resolved call rc, making it when rc kept none.
func (e *Engine) entryOf(rc *resolvedCall) *entry {
	if rc.ext == nil {
		rc.ext = &entry{
			scope: rc.scope, callID: rc.callID, toolName: rc.tool,
			useTime: rc.useTime, resultTime: rc.resultTime, deadline: rc.deadline, seq: rc.seq,
			state: stateResolved, source: rc.source, flags: rc.flags, useSig: rc.useSig, hash: rc.hash,
		}
	}
	return rc.ext
}

// view returns what resolved call rc knows of its call without making an entry: its entry
// when it kept one, else a copy of its fields in an entry that the engine does not hold.
func (rc *resolvedCall) view() entry {
	if rc.ext != nil {
		return *rc.ext
	}
	return entry{
		scope: rc.scope, callID: rc.callID, toolName: rc.tool,
		useTime: rc.useTime, resultTime: rc.resultTime, deadline: rc.deadline, seq: rc.seq,
		state: stateResolved, source: rc.source, flags: rc.flags, useSig: rc.useSig, hash: rc.hash,
	}
}

// indexResolved indexes under its (new) key the resolved call whose entry is ent: a settled
// result without a call ID that a later use named (adoptSettled).
func (e *Engine) indexResolved(ent *entry, h uint64) {
	ent.hash = uint32(h)
	for p := ent.scope.resolvedFirst; p != 0; p = e.resolved.at(p - 1).next {
		if rc := e.resolved.at(p - 1); rc.ext == ent {
			rc.callID, rc.hash = ent.callID, ent.hash
			e.resolved.index(p - 1)
			return
		}
	}
}

// holdsCalls reports whether the scope holds any call: an entry or a resolved call.
func (sc *conversation) holdsCalls() bool {
	return sc.entries != nil || sc.resolvedFirst != 0
}

// prefetchChunk is the number of events whose cache misses readAhead overlaps at a time: the
// lines they touch (a few hundred) stay cached until the apply loop reaches them, which those
// of a whole batch of thousands did not.
const prefetchChunk = 64

// hashEvents hashes the call key of each event of a batch (or marks it unhashed), the scope
// part once per run of events of one scope. A hash an event may carry from an earlier Process
// (of this engine or another, whose seed differs) is never taken for its key's.
func (e *Engine) hashEvents(events []Event) {
	var last ConversationKey
	var sh uint64
	have := false
	for i := range events {
		ev := &events[i]
		if ev.Key.CallID == "" {
			ev.hashed = false
			continue
		}
		if k := ev.Key.ConversationKey(); !have || k != last {
			last, sh, have = k, e.scopeKeyHash(k), true
		}
		ev.hash, ev.hashed = uint32(e.keyHash(ev.Key.CallID, sh)), true
	}
}

// readAhead reads, before Process applies chunk (a run of at most prefetchChunk hashed
// events), the home slot of each event's hash in the resolved calls' index, and the slots of
// the oldest resolved calls its resolutions may forget (with, for those whose scope goes with
// them, the slots of the memory of scopes that saw a use). The index of 10^5 resolved calls is
// megabytes read at random, so nearly each of these reads misses the cache; here they do not
// depend on one another and the processor overlaps them, where applying the events one after
// the other would wait for each in turn.
func (e *Engine) readAhead(chunk []Event) {
	m := &e.resolved
	if m.keyed == 0 {
		return // nothing to read ahead
	}
	// The reads in a loop of their own: a few instructions each, so that many are in flight
	// at once.
	mask := uint32(len(m.slots) - 1)
	var sum uint32
	for i := range chunk {
		sum += m.slots[chunk[i].hash&mask].pos1
	}
	if forget := m.n + len(chunk) - e.cfg.MaxResolved; forget > 0 {
		used := &e.usedConversations
		j := 0
		for i := range min(forget, m.n) {
			rc := &m.calls[m.pos(i)]
			sum += m.slots[rc.hash&mask].pos1
			if sc := rc.scope; rc.next == 0 && sc.entries == nil && len(sc.closings) == 0 && sc.usesSeen {
				// The scope's newest call, and it holds nothing else but maybe its activity:
				// likely forgotten with it into the memory of scopes that saw a use, which
				// then forgets its oldest.
				sum += uint32(used.touch(scopeHash(rc.scope)) + used.touch(used.oldest(j)))
				j++
			}
		}
	}
	e.touched += sum
}
