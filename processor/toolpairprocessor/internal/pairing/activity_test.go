package pairing

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAnchorOutlivesTheTickThatInterruptsItsCall: a tick that comes after both the call's
// pairing_timeout and the activity's retention (a ticker stalled behind a slow exporter)
// returns the interrupted call while its scope still has the anchor its synthetic span goes
// under; the activity goes once the scope holds no call for a retention.
func TestAnchorOutlivesTheTickThatInterruptsItsCall(t *testing.T) {
	e, clk := newFlightEngine(t)
	e.Observe([]Activity{{Kind: ActivityTurn, Key: scopeS1, Start: 500 * msNs, End: 5000 * msNs, ID: [24]byte{1}, Anchor: "turn"}})
	e.Process([]Event{use("c1", 1000)}, holdRef, nil)
	clk.Advance(testTimeout + testGrace + time.Minute)
	res := e.Tick(nil)
	require.Len(t, res, 1)
	assert.Equal(t, ReasonExpired, res[0].Reason)
	got, ok := e.Anchor(scopeS1, res[0].UseTime, int64(testGrace))
	assert.True(t, ok, "the anchor of the interrupted call's turn")
	assert.Equal(t, "turn", got)
	require.NoError(t, e.checkScopes())

	// The resolved call is forgotten, then the activity a retention later.
	for range 3 {
		clk.Advance(testTimeout + testGrace + time.Second)
		e.Tick(nil)
	}
	_, ok = e.Anchor(scopeS1, res[0].UseTime, int64(testGrace))
	assert.False(t, ok)
	assert.Zero(t, e.acts.items)
	assert.Empty(t, e.scopes)
	require.NoError(t, e.checkScopes())
}

// TestActivityIntervalEdges: an interval is in flight from its start, not before; one that
// arrives out of order and overlaps the latest of its kind extends it backwards; an interval
// with no start, or a start after its end, is the instant of its end.
func TestActivityIntervalEdges(t *testing.T) {
	e, _ := newFlightEngine(t)
	e.Observe([]Activity{ivl(ActivityModel, 3000, 4000)})
	assert.False(t, e.InFlightAt(scopeS1, 2999*msNs).Model, "before its start")
	e.Observe([]Activity{ivl(ActivityModel, 2500, 3100)})
	assert.Equal(t, 1, e.acts.items, "merged")
	assert.True(t, e.InFlightAt(scopeS1, 2600*msNs).Model, "extended backwards")
	assert.True(t, e.InFlightAt(scopeS1, 3900*msNs).Model, "the end kept")
	e.Observe([]Activity{ivl(ActivityCompaction, 0, 10_000), ivl(ActivityCompaction, 30_000, 20_000)})
	assert.False(t, e.InFlightAt(scopeS1, 9999*msNs).Compaction)
	assert.True(t, e.InFlightAt(scopeS1, 10_000*msNs).Compaction, "no start: the instant of its end")
	assert.False(t, e.InFlightAt(scopeS1, 19_999*msNs).Compaction)
	assert.True(t, e.InFlightAt(scopeS1, 20_000*msNs).Compaction, "a start after its end: the instant of its end")
	require.NoError(t, e.checkScopes())
}
