// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package timeout

import (
	"hash/maphash"
	"math/bits"
)

// nameTable is an immutable set of names with their kinds, looked up with one hash and one
// string comparison where a Go map's lookup cost two to three times as much: a span or event
// name is looked up two or three times for every record. Open addressing with linear probing,
// less than half full.
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

// get returns the kind of name (not empty), whose nameHash is h, and whether the table has
// it.
func (t *nameTable) get(name string, h uint32) (Kind, bool) {
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.name == "" {
			return KindOther, false
		}
		if s.name == name {
			return s.kind, true
		}
	}
}

// nameSeed seeds nameHash.
var nameSeed = maphash.MakeSeed()

// nameHash hashes a whole name: names that differ in a few bytes only (span names with an ID
// or a number in them) must not share home slots, or a lookup would walk their run.
func nameHash(name string) uint32 {
	h := maphash.String(nameSeed, name)
	return uint32(h ^ h>>32)
}
