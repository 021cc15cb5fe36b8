// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// index.go holds the moves of entries into and out of the call index (callindex.go), which
// holds the pending calls and held results; the resolved calls have their own (resolved.go).

package pairing

import "hash/maphash"

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
