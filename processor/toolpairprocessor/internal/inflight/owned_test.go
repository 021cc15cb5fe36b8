package inflight

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// TestOwnedStrings checks that the tracker copies the scope and call ID of an update unless
// the update says they are copies already (Update.Owned), and interns tenants.
func TestOwnedStrings(t *testing.T) {
	c := &clock{now: time.Unix(1_700_000_000, 0)}
	tr := newTracker(t, c, 100)
	buf := []byte("svc|s1|call_1|s2|call_2")
	str := func(from, to int) string { return unsafe.String(&buf[from], to-from) }

	borrowed := pairing.ScopeKey{Tenant: str(0, 3), Scope: str(4, 6)}
	tr.Apply([]Update{{Op: OpAnnounce, Scope: borrowed, CallID: str(7, 13), Tool: "Bash", Start: 1000 * ms}})
	owned := pairing.ScopeKey{Tenant: "svc", Scope: string([]byte("s2"))}
	ownedID := string([]byte("call_2"))
	tr.Apply([]Update{{Op: OpAnnounce, Scope: owned, CallID: ownedID, Tool: "Bash", Start: 1000 * ms, Owned: true}})
	for i := range buf {
		buf[i] = '#'
	}

	s1 := tr.scopes[pairing.ScopeKey{Tenant: "svc", Scope: "s1"}]
	require.NotNil(t, s1, "the copied scope key is intact")
	assert.Equal(t, ActiveCall{CallID: "call_1", Tool: "Bash", Start: 1000 * ms}, tr.At(s1.key, 1001*ms).Latest)
	assert.Same(t, unsafe.StringData(tr.tenants["svc"]), unsafe.StringData(s1.key.Tenant), "tenant interned")

	s2 := tr.scopes[owned]
	require.NotNil(t, s2)
	assert.Same(t, unsafe.StringData(owned.Scope), unsafe.StringData(s2.key.Scope), "owned scope kept as is")
	assert.Same(t, unsafe.StringData(ownedID), unsafe.StringData(tr.At(owned, 1001*ms).Latest.CallID), "owned call ID kept as is")
}

// TestScannedAndIndexedCallsAgree: a tracker that finds the calls of small scopes by scanning
// them answers exactly as one that indexes every call, while scopes of a few calls and of
// many (crossing scanCalls) announce, resolve and forget calls (by the MaxOperations bound
// and by Retention).
func TestScannedAndIndexedCallsAgree(t *testing.T) {
	c := &clock{now: time.Unix(1_700_000_000, 0)}
	scanned, indexed := newTracker(t, c, 60), newTracker(t, c, 60)
	indexed.scan = 0
	rng := rand.New(rand.NewPCG(1, 2))
	var scopes []pairing.ScopeKey
	for i := range 6 {
		scopes = append(scopes, pairing.ScopeKey{Tenant: "svc", Scope: fmt.Sprintf("s%d", i)})
	}
	for i := range 3000 {
		s := rng.IntN(len(scopes))
		k := scopes[s]
		// Scope s draws from 2+5s call IDs: the first scopes stay under scanCalls.
		id := fmt.Sprintf("call_%d", rng.IntN(2+5*s))
		at := int64(1000+i) * ms
		var u Update
		switch rng.IntN(5) {
		case 0, 1:
			u = Update{Op: OpAnnounce, Scope: k, CallID: id, Tool: "Bash", Start: at}
		case 2, 3:
			u = Update{Op: OpResolve, Scope: k, CallID: id, End: at + int64(rng.IntN(50))*ms}
		default:
			u = Update{Op: OpInterval, Kind: Model, Scope: k, Start: at, End: at + 3*ms}
		}
		if i%500 == 499 {
			c.now = c.now.Add(3 * time.Minute) // resolved calls pass Retention
		}
		scanned.Apply([]Update{u})
		indexed.Apply([]Update{u})
		require.Equal(t, indexed.Len(), scanned.Len())
		for _, q := range scopes {
			for at := int64(1000 + i - 60); at < int64(1000+i+60); at += 11 {
				require.Equal(t, indexed.At(q, at*ms), scanned.At(q, at*ms), "after update %d, scope %v, at %d", i, q, at)
			}
		}
	}
	assert.False(t, scanned.scopes[scopes[0]].indexed, "a scope of two calls is scanned")
	assert.True(t, scanned.scopes[scopes[5]].indexed, "a scope of many calls is indexed")
}
