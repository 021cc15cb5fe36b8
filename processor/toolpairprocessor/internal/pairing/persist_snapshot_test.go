// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package pairing

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inScope returns ev with its key moved to scope.
// fromSource returns ev with Source src.
func fromSource(ev Event, src uint8) Event {
	ev.Source = src
	return ev
}

func inScope(ev Event, scope string) Event {
	ev.Key.Conversation = scope
	return ev
}

// snapshotScenario drives e into a state holding every kind of state a snapshot keeps: pending
// calls (a, b, f), held results (c; and d, with another source's record held with it), a
// resolved call that two sources reported (e), a step boundary queued in scope s2 (closing f),
// and scope s3 forgotten after it saw a use (remembered in usedScopes).
func snapshotScenario(t *testing.T, e *Engine, clk *fakeClock) {
	t.Helper()
	run(t, e, inScope(use("g", 10), "s3"), inScope(result("g", 20), "s3"))
	clk.Advance(testTimeout + time.Second)
	e.Tick(nil) // s3's resolved call is forgotten, and s3 with it
	run(t, e, use("a", 1000), use("b", 1100), result("c", 1200))
	run(t, e, result("d", 1400), fromSource(result("d", 1450), 2))
	run(t, e, use("e", 1500), result("e", 1600), fromSource(result("e", 1650), 2))
	st := use("f", 1700)
	st.Step = "m1"
	bd := Event{Kind: KindBoundary, Key: Key{Tenant: "svc", Conversation: "s2"}, Step: "m2", Time: 1800 * 1e6}
	run(t, e, inScope(st, "s2"), bd)
}

// continuation is what both engines receive after the snapshot.
func continuation(t *testing.T, e *Engine, clk *fakeClock) []Resolution {
	t.Helper()
	var out []Resolution
	out = append(out, run(t, e, result("a", 2000), use("c", 900))...)
	out = append(out, run(t, e, use("d", 1300), use("e", 1500), fromSource(result("e", 1660), 2), fromSource(result("e", 1670), 3))...)
	out = append(out, run(t, e, inScope(result("zz", 2200), "s3"), inScope(result("yy", 2200), "s4"))...)
	clk.Advance(testGrace + time.Second)
	out = append(out, e.Tick(nil)...) // the boundary closes f
	clk.Advance(testTimeout)
	out = append(out, e.Tick(nil)...) // b expires
	require.NoError(t, e.Stats().CheckConservation())
	return out
}

func newCloseDelayEngine(t *testing.T, clk *fakeClock) *Engine {
	t.Helper()
	e := New(Config{PairingTimeout: testTimeout, OrphanGrace: testGrace, MaxPending: 100, CloseDelay: testGrace, Clock: clk})
	return e
}

// TestSnapshotRestoreContinues: an engine restored from a snapshot of another decides the
// same outcomes, for the same following events, as the engine it was taken from.
func TestSnapshotRestoreContinues(t *testing.T) {
	clkA := newFakeClock()
	a := newCloseDelayEngine(t, clkA)
	snapshotScenario(t, a, clkA)
	snap := a.Snapshot(nil)

	clkB := newFakeClock()
	clkB.now = clkA.Now()
	b := newCloseDelayEngine(t, clkB)
	rs, err := b.Restore(snap, nil)
	require.NoError(t, err)
	assert.Equal(t, RestoreStats{Pending: 3, Waiting: 2, Resolved: 1, HeldReports: 1}, rs)
	sa, sb := a.Stats(), b.Stats()
	assert.Equal(t, sa.Pending, sb.Pending)
	assert.Equal(t, sa.Waiting, sb.Waiting)
	require.NoError(t, sb.CheckConservation())

	want := continuation(t, a, clkA)
	got := continuation(t, b, clkB)
	assert.Equal(t, want, got)
	outcomes := map[string]string{}
	for _, r := range got {
		outcomes[r.Key.Conversation+"/"+r.Key.CallID+"/"+r.Outcome.String()] = r.Reason.String()
	}
	for _, k := range []string{"s1/a/paired", "s1/c/paired", "s1/d/paired", "s1/e/duplicate", "s1/e/paired", "s3/zz/orphan", "s4/yy/standalone", "s1/b/interrupted", "s2/f/interrupted"} {
		assert.Contains(t, outcomes, k)
	}
	var dReports, eReports int
	for _, r := range got {
		if r.Report && r.Key.CallID == "d" {
			dReports++ // released with d's held result, from the restored state
		}
		if r.Report && r.Key.CallID == "e" {
			eReports++ // source 3's first record; source 2's was reported before the snapshot
		}
	}
	assert.Equal(t, 1, dReports)
	assert.Equal(t, 1, eReports)
	assert.Equal(t, "next_step", outcomes["s2/f/interrupted"])
	assert.Equal(t, "expired", outcomes["s1/b/interrupted"])
}

// TestSnapshotHeldCallback: held records go through the callback; use payloads do not.
func TestSnapshotHeldCallback(t *testing.T) {
	e, _ := newTestEngine(t, 100)
	d := fromSource(result("b", 4), 2)
	d.Ref = 4
	run(t, e, use("a", 1), result("b", 2), d)
	var converted []any
	snap := e.Snapshot(func(p any) any { converted = append(converted, p); return "held" })
	assert.ElementsMatch(t, []any{int32(2), int32(4)}, converted)
	for _, c := range snap.Calls {
		switch c.Key.CallID {
		case "a":
			assert.Equal(t, CallPending, c.State)
			assert.Equal(t, "use:a", c.Payload)
		case "b":
			assert.Equal(t, CallWaiting, c.State)
			assert.Equal(t, "held", c.Payload)
			require.Len(t, c.Reports, 1)
			assert.Equal(t, ReportSnapshot{Source: 2, Time: 4e6, Payload: "held"}, c.Reports[0])
		}
	}
}

// TestRestoreReplaysResolutions: calls the resolution record says were resolved after the
// snapshot are resolved, silently, whatever their state in it: they never expire, their held
// records are never released, and a repeated result is a duplicate.
func TestRestoreReplaysResolutions(t *testing.T) {
	e, clk := newTestEngine(t, 100)
	run(t, e, use("a", 1), result("b", 2), use("d", 3), fromSource(result("b", 4), 2), use("keep", 5))
	snap := e.Snapshot(nil)

	r := New(Config{PairingTimeout: testTimeout, OrphanGrace: testGrace, MaxPending: 100, Clock: clk})
	rs, err := r.Restore(snap, []Key{key("a"), key("b"), key("d"), key("new")})
	require.NoError(t, err)
	assert.Equal(t, RestoreStats{Pending: 1, Waiting: 0, Resolved: 4, Replayed: 4}, rs, "b's held records are dropped with it")
	require.NoError(t, r.Stats().CheckConservation())

	out := run(t, r, result("a", 10), result("new", 11))
	require.Len(t, out, 2)
	assert.Equal(t, OutcomeDuplicate, out[0].Outcome)
	assert.Equal(t, OutcomeDuplicate, out[1].Outcome)
	clk.Advance(testTimeout + time.Second)
	out = r.Tick(nil)
	require.Len(t, out, 1, "only the call not resolved expires")
	assert.Equal(t, "keep", out[0].Key.CallID)
	assert.Equal(t, ReasonExpired, out[0].Reason)
}

// TestRestoreKeepsDeadlines: a deadline that passed while the process was down expires at
// the first Tick.
func TestRestoreKeepsDeadlines(t *testing.T) {
	e, clk := newTestEngine(t, 100)
	run(t, e, use("a", 1))
	snap := e.Snapshot(nil)
	clk.Advance(testTimeout) // down for the whole pairing timeout
	r := New(Config{PairingTimeout: testTimeout, OrphanGrace: testGrace, MaxPending: 100, Clock: clk})
	_, err := r.Restore(snap, nil)
	require.NoError(t, err)
	out := r.Tick(nil)
	require.Len(t, out, 1)
	assert.Equal(t, ReasonExpired, out[0].Reason)
	assert.Equal(t, int64(1e6), out[0].UseTime)
}

func TestRestoreRefusesNonEmpty(t *testing.T) {
	e, _ := newTestEngine(t, 100)
	run(t, e, use("a", 1))
	_, err := e.Restore(&Snapshot{}, nil)
	require.Error(t, err)
}
