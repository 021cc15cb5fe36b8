package timeout

import "math/bits"

// nameTable is an immutable set of names with their kinds, looked up with one cheap hash and
// one string comparison: a span or event name is looked up once or twice for every record,
// and Go's map hashed the whole name each time. Open addressing with linear probing, at most
// half full.
type nameTable struct {
	slots []nameSlot
	mask  uint32
	n     int
}

// nameSlot is an entry of nameTable; an empty name marks a free slot (nameKinds never looks
// up the empty name).
type nameSlot struct {
	name string
	kind Kind
}

// newNameTable builds the table of names.
func newNameTable(names map[string]Kind) *nameTable {
	size := 1 << bits.Len(uint(2*len(names)|7)) // a power of two above twice the count
	t := &nameTable{slots: make([]nameSlot, size), mask: uint32(size - 1), n: len(names)}
	for name, kind := range names {
		i := nameHash(name) & t.mask
		for t.slots[i].name != "" {
			i = (i + 1) & t.mask
		}
		t.slots[i] = nameSlot{name: name, kind: kind}
	}
	return t
}

// get returns the kind of name (not empty), and whether the table has it.
func (t *nameTable) get(name string) (Kind, bool) {
	for i := nameHash(name) & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.name == "" {
			return KindOther, false
		}
		if s.name == name {
			return s.kind, true
		}
	}
}

// nameHash is a multiplicative hash of a name's length and four of its bytes (the first, the
// middle, the eighth from last and the last): the names of one vocabulary differ there
// ("claude_code.tool_result", "claude_code.api_request", "gen_ai.client.inference") without
// the whole name being read.
func nameHash(name string) uint32 {
	n := len(name)
	h := uint32(n)*0x9E3779B1 + uint32(name[0])*0x85EBCA77 + uint32(name[n/2])*0xC2B2AE3D +
		uint32(name[max(n-8, 0)])*0x27D4EB2F + uint32(name[n-1])*0x165667B1
	return h ^ h>>15
}
