package inflight

import (
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
