// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

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
	e := New(Config{PairingTimeout: testTimeout, OrphanGrace: testGrace, MaxPending: 100, MaxPendingPerTenant: 50, Clock: clk})
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
	e := New(Config{PairingTimeout: testTimeout, OrphanGrace: testGrace, MaxPending: 100, MaxPendingPerTenant: 2, Clock: clk})
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
	e := New(Config{PairingTimeout: testTimeout, OrphanGrace: testGrace, MaxPending: 100, MaxPendingPerTenant: 2, Clock: clk})
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

// TestTenantLoadKeptWhileIdle: a tenant whose calls are paired one at a time keeps one load
// across its calls (it is not dropped and made again at every result), and at most one
// tenant holding nothing keeps its load: the last to empty.
func TestTenantLoadKeptWhileIdle(t *testing.T) {
	clk := newFakeClock()
	e := New(Config{PairingTimeout: testTimeout, OrphanGrace: testGrace, MaxPending: 100, MaxPendingPerTenant: 2, Clock: clk})
	var first *tenantLoad
	for i := range 5 {
		id := fmt.Sprintf("a%d", i)
		require.Len(t, run(t, e, tenantUse("a", id, int64(2*i)), tenantResult("a", id, int64(2*i+1))), 1)
		require.Len(t, e.loads, 1)
		if first == nil {
			first = e.loads["a"]
		}
		assert.Same(t, first, e.loads["a"], "call %d", i)
		assert.Zero(t, e.loads["a"].n)
	}
	require.Len(t, run(t, e, tenantUse("b", "b1", 20), tenantResult("b", "b1", 21)), 1)
	assert.Len(t, e.loads, 1, "a left when b emptied")
	assert.Contains(t, e.loads, "b")
	// The idle load counts again once it holds; it is not one of the tenants holding.
	run(t, e, tenantUse("a", "a9", 30))
	assert.Equal(t, 1, e.holding())
	assert.Equal(t, 1, e.loads["a"].n)
	out := run(t, e, tenantUse("a", "a10", 31), tenantUse("a", "a11", 32))
	require.Len(t, out, 1, "tenant a at its bound of 2 evicts its own")
	assert.Equal(t, "a9", out[0].Key.CallID)
}

// TestTenantLoadStoredOnlyWhenHolding: tenants whose records leave nothing pending (here a
// rejection each) store no load, so a stream of such tenants does not grow the engine.
func TestTenantLoadStoredOnlyWhenHolding(t *testing.T) {
	clk := newFakeClock()
	e := New(Config{PairingTimeout: testTimeout, OrphanGrace: testGrace, MaxPending: 100, MaxPendingPerTenant: 2, Clock: clk})
	for i := range 50 {
		ev := tenantUse(fmt.Sprintf("t%d", i), "r", int64(i))
		ev.Kind = KindReject
		run(t, e, ev)
	}
	assert.Empty(t, e.loads)
	run(t, e, tenantUse("a", "a1", 100))
	assert.Len(t, e.loads, 1)
	assert.Equal(t, 1, e.holding())
}
