// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// callindex.go holds the call index of the pending calls and held results (the resolved calls
// have their own, resolved.go): an open-addressing table from the 32-bit index hash of each
// call key to its entry (see Engine), and the moves of entries into and out of it.

package pairing

import "hash/maphash"

// indexSlot is one slot of the call index: an entry (nil: the slot is free) and its key's
// index hash, kept in the slot so that a probe reads no entry but the one it finds.
type indexSlot struct {
	ent  *entry
	hash uint32
}

// callIndex is a linear-probing hash table of entries keyed by their index hash (entry.hash)
// and told apart by their keys. A slot is 16 bytes and the table is between 3/8 and 3/4
// full once grown, so an entry costs 21 to 43 bytes of index. A lookup of a key that is
// absent, the case of every new use, reads the slots from its hash's home slot to the next
// free one: at most a few adjacent cache lines, without dereferencing any entry unless its
// 32-bit hash matches. Removal shifts the following slots of the run back (no tombstones), so
// a free slot always ends a probe.
//
// The zero value is an empty index.
type callIndex struct {
	slots []indexSlot // len is zero or a power of two
	n     int         // entries held
}

// minIndexSlots is the size of the table when the first entry comes.
const minIndexSlots = 64

// len returns the number of entries in the index.
func (x *callIndex) len() int { return x.n }

// find returns the entry of key k, whose index hash is h, or nil.
func (x *callIndex) find(h uint32, k Key) *entry {
	if x.n == 0 {
		return nil
	}
	mask := uint32(len(x.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &x.slots[i]
		if s.ent == nil {
			return nil
		}
		if s.hash == h && s.ent.is(k) {
			return s.ent
		}
	}
}

// insert adds ent, whose key is not in the index, under ent.hash.
func (x *callIndex) insert(ent *entry) {
	if (x.n+1)*4 > len(x.slots)*3 {
		x.grow()
	}
	x.place(ent, ent.hash)
	x.n++
}

// place puts ent in the first free slot of the run from the home slot of h.
func (x *callIndex) place(ent *entry, h uint32) {
	mask := uint32(len(x.slots) - 1)
	i := h & mask
	for x.slots[i].ent != nil {
		i = (i + 1) & mask
	}
	x.slots[i] = indexSlot{ent: ent, hash: h}
}

// grow doubles the table (or makes the first one) and places every entry again.
func (x *callIndex) grow() {
	old := x.slots
	x.slots = make([]indexSlot, max(2*len(old), minIndexSlots))
	for _, s := range old {
		if s.ent != nil {
			x.place(s.ent, s.hash)
		}
	}
}

// remove takes ent out of the index; an entry not in it is left alone.
func (x *callIndex) remove(ent *entry) {
	if x.n == 0 {
		return
	}
	mask := uint32(len(x.slots) - 1)
	i := ent.hash & mask
	for x.slots[i].ent != ent {
		if x.slots[i].ent == nil {
			return
		}
		i = (i + 1) & mask
	}
	// Shift back each later slot of the run whose home slot is not between the freed slot
	// and itself, so that no entry is left behind a free slot.
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		s := x.slots[j]
		if s.ent == nil {
			break
		}
		home := s.hash & mask
		if (j-home)&mask >= (j-i)&mask {
			x.slots[i] = s
			i = j
		}
	}
	x.slots[i] = indexSlot{}
	x.n--
}

// hash returns the index hash of a call key: 32 bits of the maphash of its call ID mixed
// with that of its scope (see keyHash).
func (e *Engine) hash(k Key) uint64 {
	return e.keyHash(k.CallID, e.scopeKeyHash(k.ConversationKey()))
}

// scopeKeyHash returns the maphash of a scope key, the part of a call's index hash that the
// calls of one scope share (a batch's events come in runs of one scope: hashEvents hashes it
// once a run).
func (e *Engine) scopeKeyHash(k ConversationKey) uint64 {
	return maphash.Comparable(e.seed, k)
}

// keyHash returns the index hash of the call callID of the scope whose scopeKeyHash is sh.
func (e *Engine) keyHash(callID string, sh uint64) uint64 {
	h := maphash.String(e.seed, callID) ^ sh*0x9E3779B97F4A7C15
	return uint64(uint32(h^h>>32)) & e.hashMask
}

// lookup returns the entry of call key k, or nil.
func (e *Engine) lookup(k Key) *entry {
	ent, _ := e.find(k)
	return ent
}

// find returns the entry of call key k, or nil, and k's index hash: a pending call or held
// result from the call index, else a resolved call (see findResolved).
func (e *Engine) find(k Key) (*entry, uint64) {
	return e.findHashed(k, e.hash(k))
}

// findEvent is find for the key of ev, whose hash Process may have computed already.
func (e *Engine) findEvent(ev *Event) (*entry, uint64) {
	if ev.hashed {
		return e.findHashed(ev.Key, uint64(ev.hash))
	}
	return e.find(ev.Key)
}

// findHashed is find for key k whose index hash is h.
func (e *Engine) findHashed(k Key, h uint64) (*entry, uint64) {
	if ent := e.index.find(uint32(h), k); ent != nil {
		return ent, h
	}
	return e.findResolved(uint32(h), k), h
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
