package pairing

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func tenantUse(tenant, id string, ms int64) Event {
	ev := use(id, ms)
	ev.Key.Tenant = tenant
	return ev
}

func tenantResult(tenant, id string, ms int64) Event {
	ev := result(id, ms)
	ev.Key.Tenant = tenant
	return ev
}

// TestTenantFloodEvictsItsOwn: tenant b announcing ten times its bound evicts only its own
// oldest calls; tenant a's pending calls, older than all of b's, stay and pair.
func TestTenantFloodEvictsItsOwn(t *testing.T) {
	clk := newFakeClock()
	e, err := New(Config{PairingTimeout: testTimeout, OrphanGrace: testGrace, MaxPending: 100, MaxPendingPerTenant: 50, Clock: clk})
	require.NoError(t, err)
	run(t, e, tenantUse("a", "a1", 1), tenantUse("a", "a2", 2))
	var flood []Event
	for i := range 500 {
		flood = append(flood, tenantUse("b", fmt.Sprintf("b%d", i), int64(10+i)))
	}
	out := run(t, e, flood...)
	require.Len(t, out, 450, "b's calls beyond its 50 are evicted")
	for _, r := range out {
		assert.Equal(t, "b", r.Key.Tenant)
		assert.Equal(t, ReasonEvicted, r.Reason)
	}
	assert.Equal(t, "b0", out[0].Key.CallID, "b's oldest first")
	out = run(t, e, tenantResult("a", "a1", 600), tenantResult("a", "a2", 601))
	require.Len(t, out, 2)
	for _, r := range out {
		assert.Equal(t, OutcomePaired, r.Outcome, r.Key.CallID)
	}
}

// TestGlobalBoundEvictsTheHeaviestTenant: at MaxPending, the oldest call of the tenant
// holding the most goes, not an older call of a tenant holding fewer.
func TestGlobalBoundEvictsTheHeaviestTenant(t *testing.T) {
	e, _ := newTestEngine(t, 10) // no bound per tenant
	run(t, e, tenantUse("a", "a1", 1), tenantUse("a", "a2", 2), tenantUse("c", "c1", 3))
	var evs []Event
	for i := range 7 {
		evs = append(evs, tenantUse("b", fmt.Sprintf("b%d", i), int64(10+i)))
	}
	assert.Empty(t, run(t, e, evs...), "10 pending: at the bound, not over it")
	out := run(t, e, tenantUse("c", "c2", 30))
	require.Len(t, out, 1)
	assert.Equal(t, "b0", out[0].Key.CallID, "b holds the most: its oldest goes, not a1")
	out = run(t, e, tenantUse("b", "b7", 31))
	require.Len(t, out, 1)
	assert.Equal(t, "b1", out[0].Key.CallID)
	st := e.Stats()
	assert.Equal(t, 10, st.Pending)
}

// TestTenantBoundCountsHeldResults: a tenant's held results count toward its bound with its
// pending calls; at the bound its oldest, a held result here, leaves as at orphan_grace.
func TestTenantBoundCountsHeldResults(t *testing.T) {
	clk := newFakeClock()
	e, err := New(Config{PairingTimeout: testTimeout, OrphanGrace: testGrace, MaxPending: 100, MaxPendingPerTenant: 2, Clock: clk})
	require.NoError(t, err)
	run(t, e, tenantResult("a", "r1", 1))
	clk.Advance(time.Second)
	run(t, e, tenantUse("a", "u1", 2))
	out := run(t, e, tenantUse("a", "u2", 3))
	require.Len(t, out, 1)
	assert.Equal(t, "r1", out[0].Key.CallID)
	assert.Equal(t, OutcomeOrphan, out[0].Outcome, "released as at orphan_grace: its conversation has seen a use")
}

// TestTenantLoadAcrossIdleConversations: a tenant that held nothing for a while, then holds
// calls in a new conversation and in an old one, has one count: its bound counts both.
func TestTenantLoadAcrossIdleConversations(t *testing.T) {
	clk := newFakeClock()
	e, err := New(Config{PairingTimeout: testTimeout, OrphanGrace: testGrace, MaxPending: 100, MaxPendingPerTenant: 2, Clock: clk})
	require.NoError(t, err)
	old := tenantUse("a", "o1", 1)
	run(t, e, old)
	res := old
	res.Kind, res.Time = KindResult, 2*int64(time.Millisecond)
	require.Len(t, run(t, e, res), 1, "paired: tenant a holds nothing")
	fresh := tenantUse("a", "n1", 3)
	fresh.Key.Conversation = "s2"
	run(t, e, fresh)
	out := run(t, e, tenantUse("a", "o2", 4), tenantUse("a", "o3", 5))
	require.Len(t, out, 1, "three calls of tenant a over its bound of 2: one evicted")
	assert.Equal(t, "n1", out[0].Key.CallID, "its oldest, in the other conversation")
	assert.Len(t, e.loads, 1)
}
