// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// forgottenscopes.go holds the memory of forgotten scopes that saw a use (specification
// section 2: a result without its use in such a scope is an orphan, not standalone).

package pairing

// conversationMemory is a bounded set of scope key hashes (stableConversationHash): once it
// holds max, each hash added forgets the oldest. The hashes are kept in a ring, in order of
// addition, and in an open-addressing table of 8-byte slots (0: free; a hash of 0 is kept as
// 1), at most half full, whose probes Process can start early (readAhead): at the default
// bound it is 2 MiB read at random, and a new scope's lookup and a forgotten scope's
// addition would each wait for a cache miss. It holds no pointer. The zero value with max 0
// holds nothing.
type conversationMemory struct {
	max   int
	slots []uint64 // len is zero or a power of two
	shift uint     // 64 - log2(len(slots))
	ring  []uint64 // in order of addition, a ring once full
	next  int      // the oldest, once full
}

// home returns the home slot of hash h.
func (m *conversationMemory) home(h uint64) uint64 {
	return (h * 0x9E3779B97F4A7C15) >> m.shift
}

// key returns h as the table keeps it (never 0, which marks a free slot).
func memoryKey(h uint64) uint64 { return max(h, 1) }

// len returns the number of hashes held.
func (m *conversationMemory) len() int { return len(m.ring) }

// has reports whether h is held.
func (m *conversationMemory) has(h uint64) bool {
	if len(m.ring) == 0 {
		return false
	}
	h = memoryKey(h)
	mask := uint64(len(m.slots) - 1)
	for i := m.home(h); ; i = (i + 1) & mask {
		switch m.slots[i] {
		case 0:
			return false
		case h:
			return true
		}
	}
}

// add holds h, forgetting the oldest hash when max are held; a hash held already is left
// where it is.
func (m *conversationMemory) add(h uint64) {
	if m.max <= 0 || m.has(h) {
		return
	}
	if len(m.ring) < m.max {
		if 2*(len(m.ring)+1) > len(m.slots) {
			m.grow()
		}
		m.ring = append(m.ring, h)
	} else {
		m.remove(m.ring[m.next])
		m.ring[m.next] = h
		m.next = (m.next + 1) % m.max
	}
	m.place(memoryKey(h))
}

// grow doubles the table (64 slots at first) and places every hash again.
func (m *conversationMemory) grow() {
	n := max(2*len(m.slots), 64)
	m.slots = make([]uint64, n)
	m.shift = 64
	for s := n; s > 1; s >>= 1 {
		m.shift--
	}
	for _, h := range m.ring {
		m.place(memoryKey(h))
	}
}

// place puts h, not held, in the first free slot of the run from its home slot.
func (m *conversationMemory) place(h uint64) {
	mask := uint64(len(m.slots) - 1)
	i := m.home(h)
	for m.slots[i] != 0 {
		i = (i + 1) & mask
	}
	m.slots[i] = h
}

// remove takes h out of the table, shifting the later slots of its run back.
func (m *conversationMemory) remove(h uint64) {
	h = memoryKey(h)
	mask := uint64(len(m.slots) - 1)
	i := m.home(h)
	for m.slots[i] != h {
		if m.slots[i] == 0 {
			return
		}
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		s := m.slots[j]
		if s == 0 {
			break
		}
		if home := m.home(s); (j-home)&mask >= (j-i)&mask {
			m.slots[i] = s
			i = j
		}
	}
	m.slots[i] = 0
}

// touch reads the home slot of h and returns it, for readAhead.
func (m *conversationMemory) touch(h uint64) uint64 {
	if len(m.slots) == 0 {
		return 0
	}
	return m.slots[m.home(memoryKey(h))]
}

// oldest returns the hash the next addition forgets, once max are held, or 0.
func (m *conversationMemory) oldest(i int) uint64 {
	if len(m.ring) < m.max || m.max <= 0 {
		return 0
	}
	return m.ring[(m.next+i)%m.max]
}

// appendOldestFirst appends the hashes held to hs, oldest first, and returns it.
func (m *conversationMemory) appendOldestFirst(hs []uint64) []uint64 {
	if len(m.ring) < m.max {
		return append(hs, m.ring...)
	}
	return append(append(hs, m.ring[m.next:]...), m.ring[:m.next]...)
}

// stableConversationHash is the hash of a scope key in the memory of forgotten scopes: FNV-1a
// over the tenant, a zero byte and the scope, the same in every process, so that the memory
// can be stored and read back by another process.
func stableConversationHash(k ConversationKey) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := 0; i < len(k.Tenant); i++ {
		h = (h ^ uint64(k.Tenant[i])) * prime
	}
	h *= prime // the zero byte
	for i := 0; i < len(k.Conversation); i++ {
		h = (h ^ uint64(k.Conversation[i])) * prime
	}
	return h
}
