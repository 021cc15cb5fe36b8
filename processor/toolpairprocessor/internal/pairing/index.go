// index.go holds the moves of entries into and out of the call index (callindex.go) and the
// resolved list.

package pairing

import "hash/maphash"

// hash returns the index hash of a call key: 32 bits of its maphash.
func (e *Engine) hash(k Key) uint64 {
	return uint64(uint32(maphash.Comparable(e.seed, k))) & e.hashMask
}

// lookup returns the entry of call key k, or nil.
func (e *Engine) lookup(k Key) *entry {
	ent, _ := e.find(k)
	return ent
}

// find returns the entry of call key k, or nil, and k's index hash.
func (e *Engine) find(k Key) (*entry, uint64) {
	h := e.hash(k)
	return e.index.find(uint32(h), k), h
}

func (e *Engine) insert(ent *entry, l *fifo) {
	e.insertHashed(ent, l, e.hash(ent.key()))
}

// insertHashed is insert for an entry whose key's index hash is h. A nil l leaves the entry
// in no list (the caller adds it).
func (e *Engine) insertHashed(ent *entry, l *fifo, h uint64) {
	e.seq++
	ent.seq = e.seq
	ent.hash = uint32(h)
	e.index.insert(ent)
	e.attach(ent)
	if l != nil {
		l.pushBack(ent)
	}
}

func (e *Engine) insertResolved(ent *entry, now int64) {
	ent.state = stateResolved
	ent.payload = nil
	ent.deadline = now + int64(e.cfg.ResolvedRetention)
	e.insert(ent, &e.resolved)
	e.trimResolved()
}

// toResolved moves an entry that was already removed from its list to the resolved set.
func (e *Engine) toResolved(ent *entry, now int64) {
	ent.state = stateResolved
	ent.payload = nil
	ent.deadline = now + int64(e.cfg.ResolvedRetention)
	e.seq++
	ent.seq = e.seq
	e.resolved.pushBack(ent)
	e.trimResolved()
}

func (e *Engine) trimResolved() {
	for e.resolved.n > e.cfg.MaxResolved {
		e.forget(e.resolved.head)
	}
}

// forget drops a resolved entry.
func (e *Engine) forget(ent *entry) {
	e.resolved.remove(ent)
	if ent.has(flagMatch) {
		e.unlistMatch(ent)
	}
	e.forgetReports(ent)
	e.drop(ent)
}

// drop removes an entry, already out of its list, from the index.
func (e *Engine) drop(ent *entry) {
	e.index.remove(ent)
	ent.payload = nil
	if ent.scope != nil {
		e.detach(ent)
	}
}
