// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package timeout

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestNameTableAgreesWithMap: a nameTable answers as the map it was built from, for names it
// holds and for others, whatever their hashes share: names that differ only where nameHash
// does not read them (same length, same four bytes) are told apart by the full comparison.
func TestNameTableAgreesWithMap(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 100, 256} {
		names := map[string]Kind{}
		for i := range n {
			// "op.<i>.x" names share their first and last bytes; padded numbers keep the
			// lengths equal, so many share their hash.
			names["op."+pad(i)+".x"] = Kind(i%3 + 1)
		}
		table := newNameTable(names)
		for i := range n + 50 {
			name := "op." + pad(i) + ".x"
			want, wantOK := names[name]
			got, ok := table.get(name, nameHash(name))
			assert.Equal(t, wantOK, ok, name)
			if wantOK {
				assert.Equal(t, want, got, name)
			}
		}
		_, ok := table.get("claude_code.tool_result", nameHash("claude_code.tool_result"))
		assert.False(t, ok)
	}
}

func pad(i int) string {
	s := strconv.Itoa(i)
	for len(s) < 4 {
		s = "0" + s
	}
	return s
}

// TestNameTableSpreadsLookAlikes: names that differ only in a few digits (span names with a
// number in them) get home slots of their own: no lookup of a missing look-alike walks more
// than a short run.
func TestNameTableSpreadsLookAlikes(t *testing.T) {
	names := map[string]Kind{}
	for i := range maxCachedNames {
		names["op."+pad(i)+".x"] = KindOther
	}
	table := newNameTable(names)
	longest := 0
	for i := range 10 * maxCachedNames {
		name := "op." + pad(maxCachedNames+i) + ".x"
		probes := 0
		for j := nameHash(name) & table.mask; table.slots[j].name != ""; j = (j + 1) & table.mask {
			probes++
		}
		longest = max(longest, probes)
	}
	assert.Less(t, longest, 24, "the longest run a missing name walks")
}
