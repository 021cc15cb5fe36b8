// index.go holds the call index: a 32-bit hash of each call key maps to its entry, with a
// side map for the keys whose hash is taken (see Engine), and the moves of entries into and
// out of the index and the resolved list.

package pairing

import (
	"hash/maphash"
	"slices"
)

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
	ent := e.index[h]
	if ent == nil || ent.is(k) {
		return ent, h // an empty slot has no colliding entries either
	}
	if len(e.collisions) == 0 {
		return nil, h
	}
	for _, c := range e.collisions[h] {
		if c.is(k) {
			return c, h
		}
	}
	return nil, h
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
	if e.index[h] == nil {
		e.index[h] = ent
	} else {
		e.collisions[h] = append(e.collisions[h], ent)
	}
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
	h := uint64(ent.hash)
	if e.index[h] == ent {
		// A colliding entry of the same hash takes the freed slot, so that an empty slot
		// always means no entry of that hash (see find).
		if cs := e.collisions[h]; len(cs) > 0 {
			e.index[h] = cs[len(cs)-1]
			e.setCollisions(h, cs[:len(cs)-1])
		} else {
			delete(e.index, h)
		}
	} else if cs := e.collisions[h]; len(cs) > 0 {
		if i := slices.Index(cs, ent); i >= 0 {
			cs[i] = cs[len(cs)-1]
			e.setCollisions(h, cs[:len(cs)-1])
		}
	}
	ent.payload = nil
	if ent.scope != nil {
		e.detach(ent)
	}
}

// setCollisions stores the colliding entries of hash h, deleting the key when there are
// none left. cs shares the backing array of the stored list; its vacated slot is cleared so
// that it keeps no dropped entry alive.
func (e *Engine) setCollisions(h uint64, cs []*entry) {
	if len(cs) == 0 {
		delete(e.collisions, h)
		return
	}
	cs[:len(cs)+1][len(cs)] = nil
	e.collisions[h] = cs
}
