// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// resolvedring.go holds the ring of resolved calls and its index (resolvedMemory), which
// resolved.go fills and empties.

package pairing

// resolvedMemory holds the resolved calls in order of resolution in a ring, the oldest at
// head, with an open-addressing index from each keyed call's index hash to its position.
// Calls leave only from the head (the oldest at the bound, or once due): the oldest call of
// the ring is also the oldest of its scope, so each scope's chain of calls (next) is cut at
// its front only. A position is stable while its call is held, until the ring grows, which
// places every call again (grow).
type resolvedMemory struct {
	calls   []resolvedCall
	head, n int
	// limit is the most calls the ring is made for (Config.MaxResolved plus the one a
	// resolution adds before the oldest is forgotten): it grows by doubling up to it.
	limit int
	slots []resolvedSlot // len is zero or a power of two, at most half full
	keyed int
}

// resolvedSlot is a slot of the resolved calls' index: a position plus one (0: free) and the
// call's index hash. 8 bytes, so that the index of 10^5 calls fits in a few cache lines per
// probe and holds no pointer for the garbage collector to follow.
type resolvedSlot struct {
	pos1 uint32
	hash uint32
}

// minResolvedCalls is the ring's size when the first call comes.
const minResolvedCalls = 64

// pos returns the position of the i-th oldest call.
func (m *resolvedMemory) pos(i int) uint32 {
	p := m.head + i
	if p >= len(m.calls) {
		p -= len(m.calls)
	}
	return uint32(p)
}

// at returns the call at position p.
func (m *resolvedMemory) at(p uint32) *resolvedCall { return &m.calls[p] }

// oldest returns the position of the oldest call; the memory is not empty.
func (m *resolvedMemory) oldest() uint32 { return uint32(m.head) }

// find returns the position of the call of key k, whose index hash is h, or false.
func (m *resolvedMemory) find(h uint32, k Key) (uint32, bool) {
	if m.keyed == 0 {
		return 0, false
	}
	mask := uint32(len(m.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := m.slots[i]
		if s.pos1 == 0 {
			return 0, false
		}
		if s.hash == h {
			if rc := &m.calls[s.pos1-1]; rc.callID == k.CallID && rc.scope.key == k.ConversationKey() {
				return s.pos1 - 1, true
			}
		}
	}
}

// push appends rc at the back of the ring and returns its position, placing every call
// again (and telling relink) when the ring grows.
func (m *resolvedMemory) push(rc resolvedCall, relink func()) uint32 {
	if m.n == len(m.calls) {
		m.grow()
		relink()
	}
	p := m.pos(m.n)
	m.calls[p] = rc
	m.n++
	return p
}

// grow doubles the ring (or makes the first one), up to limit when there is one and it holds
// fewer, the oldest call at position 0, and builds the index again, with at least twice the
// ring's slots. The caller links the scopes' chains again (Engine.relinkResolved).
func (m *resolvedMemory) grow() {
	size := max(2*len(m.calls), minResolvedCalls)
	if m.limit > 0 && m.n < m.limit {
		// Past the limit (a restore of more resolved calls than the bound, trimmed once
		// restored) the ring doubles as below it.
		size = min(size, m.limit)
	}
	calls := make([]resolvedCall, size)
	for i := range m.n {
		calls[i] = m.calls[m.pos(i)]
	}
	m.calls, m.head = calls, 0
	slots := minResolvedCalls
	for slots < 2*size {
		slots *= 2
	}
	m.slots = make([]resolvedSlot, slots)
	m.keyed = 0
	for i := range m.n {
		if m.calls[i].callID != "" {
			m.index(uint32(i))
		}
	}
}

// index adds the call at position p to the index under its hash. The index has twice the
// ring's slots and holds at most the ring's calls, so it is never more than half full.
func (m *resolvedMemory) index(p uint32) { m.place(p) }

// place puts position p in the first free slot of the run from its hash's home slot.
func (m *resolvedMemory) place(p uint32) {
	h := m.calls[p].hash
	mask := uint32(len(m.slots) - 1)
	i := h & mask
	for m.slots[i].pos1 != 0 {
		i = (i + 1) & mask
	}
	m.slots[i] = resolvedSlot{pos1: p + 1, hash: h}
	m.keyed++
}

// unindex takes position p out of the index; a position not in it is left alone. Later slots
// of the run are shifted back, as in callIndex.remove.
func (m *resolvedMemory) unindex(p uint32) {
	if m.keyed == 0 {
		return
	}
	mask := uint32(len(m.slots) - 1)
	i := m.calls[p].hash & mask
	for m.slots[i].pos1 != p+1 {
		if m.slots[i].pos1 == 0 {
			return
		}
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		s := m.slots[j]
		if s.pos1 == 0 {
			break
		}
		if home := s.hash & mask; (j-home)&mask >= (j-i)&mask {
			m.slots[i] = s
			i = j
		}
	}
	m.slots[i] = resolvedSlot{}
	m.keyed--
}

// pop takes the oldest call out of the ring and the index and returns it.
func (m *resolvedMemory) pop() resolvedCall {
	p := uint32(m.head)
	if m.calls[p].callID != "" {
		m.unindex(p)
	}
	rc := m.calls[p]
	m.calls[p] = resolvedCall{}
	m.head = int(m.pos(1))
	m.n--
	return rc
}
