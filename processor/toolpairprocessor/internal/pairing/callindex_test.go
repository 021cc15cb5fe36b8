// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package pairing

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCallIndexAgainstMap inserts and removes random keys, with hashes narrowed to few bits
// so that runs wrap around the table and hold many keys of one hash, and checks after every
// step that the index finds exactly the keys a map holds.
func TestCallIndexAgainstMap(t *testing.T) {
	for _, bits := range []uint{2, 6, 32} {
		rng := rand.New(rand.NewPCG(1, uint64(bits)))
		sc := &conversation{key: ConversationKey{Tenant: "t", Conversation: "s"}}
		var x callIndex
		want := map[string]*entry{}
		hashOf := func(id string) uint32 {
			h := uint32(0)
			for _, c := range []byte(id) {
				h = h*31 + uint32(c)
			}
			return h & uint32(1<<bits-1)
		}
		for step := range 20_000 {
			id := strconv.Itoa(rng.IntN(300))
			if ent, ok := want[id]; ok && rng.IntN(2) == 0 {
				x.remove(ent)
				delete(want, id)
			} else if !ok {
				ent := &entry{scope: sc, callID: id, hash: hashOf(id)}
				x.insert(ent)
				want[id] = ent
			}
			require.Equal(t, len(want), x.len(), "step %d", step)
			if step%97 == 0 {
				for i := range 300 {
					id := strconv.Itoa(i)
					require.Equal(t, want[id], x.find(hashOf(id), Key{Tenant: "t", Conversation: "s", CallID: id}), "step %d key %s", step, id)
				}
			}
		}
	}
}
