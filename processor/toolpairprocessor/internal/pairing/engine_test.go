// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package pairing

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock is a Clock that moves only when told to.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_800_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

const (
	testTimeout = 10 * time.Minute
	testGrace   = 30 * time.Second
)

func newTestEngine(t *testing.T, maxPending int) (*Engine, *fakeClock) {
	t.Helper()
	clk := newFakeClock()
	e := New(Config{PairingTimeout: testTimeout, OrphanGrace: testGrace, MaxPending: maxPending, Clock: clk})
	return e, clk
}

func key(id string) Key { return Key{Tenant: "svc", Conversation: "s1", CallID: id} }

func use(id string, ms int64) Event {
	return Event{Kind: KindUse, Key: key(id), Time: ms * int64(time.Millisecond), ToolName: "run_shell", Payload: "use:" + id, Ref: int32(ms)}
}

func result(id string, ms int64) Event {
	return Event{Kind: KindResult, Key: key(id), Time: ms * int64(time.Millisecond), Ref: int32(ms)}
}

func echo(id string, ms int64) Event {
	return Event{Kind: KindEcho, Key: key(id), Time: ms * int64(time.Millisecond), Ref: int32(ms)}
}

// holdRef holds a result by remembering its Ref.
func holdRef(ev *Event) any { return ev.Ref }

// run processes events one batch at a time and checks conservation after each.
func run(t *testing.T, e *Engine, events ...Event) []Resolution {
	t.Helper()
	out := e.Process(events, holdRef, nil)
	require.NoError(t, e.Stats().CheckConservation())
	return out
}

func TestPairUseThenResult(t *testing.T) {
	e, _ := newTestEngine(t, 100)
	out := run(t, e, use("a", 1000))
	assert.Empty(t, out)
	out = run(t, e, result("a", 3500))
	require.Len(t, out, 1)
	r := out[0]
	assert.Equal(t, OutcomePaired, r.Outcome)
	assert.Equal(t, int64(2500), r.ElapsedMs())
	assert.Equal(t, "use:a", r.UsePayload)
	assert.Equal(t, int32(3500), r.ResultRef)
	assert.Equal(t, int32(-1), r.UseRef)
	assert.Equal(t, "run_shell", r.ToolName)
	assert.Nil(t, r.ResultPayload)
	s := e.Stats()
	assert.Equal(t, uint64(1), s.Paired)
	assert.Zero(t, s.Pending)
}

func TestPairResultThenUseReleasesHeldRecord(t *testing.T) {
	e, clk := newTestEngine(t, 100)
	evs := []Event{result("a", 3000)}
	out := e.Process(evs, holdRef, nil)
	assert.Empty(t, out)
	assert.Equal(t, VerdictHeld, evs[0].Verdict)
	assert.Equal(t, 1, e.Stats().Waiting)

	clk.Advance(testGrace - time.Second)
	assert.Empty(t, e.Tick(nil), "still within orphan_grace")

	out = run(t, e, use("a", 1000))
	require.Len(t, out, 1)
	assert.Equal(t, OutcomePaired, out[0].Outcome)
	assert.Equal(t, int64(2000), out[0].ElapsedMs())
	assert.Equal(t, int32(3000), out[0].ResultPayload, "the held record is released")
	assert.Equal(t, int32(1000), out[0].UseRef)
	assert.Zero(t, e.Stats().Waiting)
}

func TestSameBatchOrderDoesNotMatter(t *testing.T) {
	for _, evs := range [][]Event{
		{use("a", 1), result("a", 5)},
		{result("a", 5), use("a", 1)},
	} {
		e, _ := newTestEngine(t, 100)
		out := run(t, e, evs...)
		require.Len(t, out, 1)
		assert.Equal(t, OutcomePaired, out[0].Outcome)
		assert.Equal(t, int64(4), out[0].ElapsedMs())
	}
}

func TestRulesTable(t *testing.T) {
	type step struct {
		events  []Event
		advance time.Duration // before the events, followed by a Tick
	}
	tests := []struct {
		name  string
		steps []step
		want  []Outcome
		why   []Reason
	}{
		{
			name:  "duplicate result after pairing",
			steps: []step{{events: []Event{use("a", 1), result("a", 2), result("a", 3)}}},
			want:  []Outcome{OutcomePaired, OutcomeDuplicate},
			why:   []Reason{ReasonNone, ReasonNone},
		},
		{
			name:  "repeated use is ignored",
			steps: []step{{events: []Event{use("a", 1), use("a", 2), result("a", 3)}}},
			want:  []Outcome{OutcomePaired},
			why:   []Reason{ReasonNone},
		},
		{
			name: "expired after pairing_timeout",
			steps: []step{
				{events: []Event{use("a", 1)}},
				{advance: testTimeout - time.Second},
				{advance: time.Second},
			},
			want: []Outcome{OutcomeInterrupted},
			why:  []Reason{ReasonExpired},
		},
		{
			name: "late result after expiry is a duplicate",
			steps: []step{
				{events: []Event{use("a", 1)}},
				{advance: testTimeout},
				{events: []Event{result("a", 2)}},
			},
			want: []Outcome{OutcomeInterrupted, OutcomeDuplicate},
			why:  []Reason{ReasonExpired, ReasonNone},
		},
		{
			name: "orphan in a scope with uses",
			steps: []step{
				{events: []Event{use("a", 1), result("b", 2)}},
				{advance: testGrace},
			},
			want: []Outcome{OutcomeOrphan},
			why:  []Reason{ReasonNone},
		},
		{
			name: "standalone in a scope without uses",
			steps: []step{
				{events: []Event{result("b", 2)}},
				{advance: testGrace},
			},
			want: []Outcome{OutcomeStandalone},
			why:  []Reason{ReasonNone},
		},
		{
			name:  "echo resolves a pending call",
			steps: []step{{events: []Event{use("a", 1), echo("a", 9)}}},
			want:  []Outcome{OutcomePaired},
			why:   []Reason{ReasonNone},
		},
		{
			name:  "echo of a resolved or unknown call is ignored",
			steps: []step{{events: []Event{use("a", 1), result("a", 2), echo("a", 9), echo("zz", 9)}}},
			want:  []Outcome{OutcomePaired},
			why:   []Reason{ReasonNone},
		},
		{
			name: "a second copy of a waiting result is a duplicate",
			steps: []step{
				{events: []Event{result("a", 2), result("a", 2)}},
				{events: []Event{use("a", 1)}},
			},
			want: []Outcome{OutcomeDuplicate, OutcomePaired},
			why:  []Reason{ReasonNone, ReasonNone},
		},
		{
			name:  "empty call ID never pairs",
			steps: []step{{events: []Event{use("", 1), result("", 2)}}},
		},
		{
			name: "other scope never pairs",
			steps: []step{
				{events: []Event{use("a", 1), {Kind: KindResult, Key: Key{Tenant: "svc", Conversation: "s2", CallID: "a"}, Time: 2}}},
				{advance: testGrace},
			},
			want: []Outcome{OutcomeStandalone},
			why:  []Reason{ReasonNone},
		},
		{
			name: "other tenant never pairs",
			steps: []step{
				{events: []Event{use("a", 1), {Kind: KindResult, Key: Key{Tenant: "other", Conversation: "s1", CallID: "a"}, Time: 2}}},
				{advance: testGrace},
			},
			want: []Outcome{OutcomeStandalone},
			why:  []Reason{ReasonNone},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, clk := newTestEngine(t, 100)
			var got []Resolution
			for _, st := range tt.steps {
				if st.advance > 0 {
					clk.Advance(st.advance)
					got = e.Tick(got)
					require.NoError(t, e.Stats().CheckConservation())
				}
				if len(st.events) > 0 {
					got = append(got, run(t, e, st.events...)...)
				}
			}
			var outcomes []Outcome
			var reasons []Reason
			for _, r := range got {
				outcomes = append(outcomes, r.Outcome)
				reasons = append(reasons, r.Reason)
			}
			assert.Equal(t, tt.want, outcomes)
			assert.Equal(t, tt.why, reasons)
		})
	}
}

func TestEvictionOldestFirst(t *testing.T) {
	e, _ := newTestEngine(t, 2)
	run(t, e, use("a", 1))
	run(t, e, result("b", 2)) // held: the bound counts waiting results too
	out := run(t, e, use("c", 3))
	require.Len(t, out, 1)
	assert.Equal(t, OutcomeInterrupted, out[0].Outcome)
	assert.Equal(t, ReasonEvicted, out[0].Reason)
	assert.Equal(t, "a", out[0].Key.CallID)
	assert.Equal(t, "use:a", out[0].UsePayload)

	out = run(t, e, use("d", 4))
	require.Len(t, out, 1)
	assert.Equal(t, OutcomeOrphan, out[0].Outcome, "the held result is released when evicted")
	assert.Equal(t, int32(2), out[0].ResultPayload)
	s := e.Stats()
	assert.Equal(t, 2, s.Pending)
	assert.Equal(t, uint64(1), s.Interrupted[ReasonEvicted])
}

func TestShutdownFlushesEverything(t *testing.T) {
	e, clk := newTestEngine(t, 100)
	run(t, e, use("a", 1), use("b", 2), result("c", 3), result("b", 4))
	clk.Advance(time.Second)
	out := e.Shutdown(nil)
	require.NoError(t, e.Stats().CheckConservation())
	require.Len(t, out, 2)
	assert.Equal(t, OutcomeInterrupted, out[0].Outcome)
	assert.Equal(t, ReasonShutdown, out[0].Reason)
	// In record time: the scope's latest record (the result of b, at 4ms), not the clock.
	assert.Equal(t, int64(4_000_000), out[0].EndTime)
	assert.Equal(t, int64(1_000_000), out[0].UseTime)
	assert.Equal(t, OutcomeOrphan, out[1].Outcome)
	assert.Equal(t, int32(3), out[1].ResultPayload)
	assert.Zero(t, e.index.len())
	assert.Empty(t, e.conversations)
}

func TestResolvedRetentionFollowsScopeActivity(t *testing.T) {
	e, clk := newTestEngine(t, 100)
	run(t, e, use("a", 1), result("a", 2))
	// The scope stays active: the resolved call is remembered past the retention.
	for range 3 {
		clk.Advance(testTimeout / 2)
		run(t, e, use("other", 3))
		e.Tick(nil)
	}
	evs := []Event{use("a", 5)}
	run(t, e, evs...)
	assert.Equal(t, VerdictRepeated, evs[0].Verdict, "an invoke_agent repeat at the end of a long session is still ignored")

	// Once the scope is idle for the retention, everything is forgotten.
	clk.Advance(testTimeout)
	e.Tick(nil)
	clk.Advance(testTimeout)
	e.Tick(nil)
	require.NoError(t, e.Stats().CheckConservation())
	assert.Zero(t, e.index.len())
	assert.Empty(t, e.conversations)
}

func TestMaxResolvedForgetsOldest(t *testing.T) {
	clk := newFakeClock()
	e := New(Config{PairingTimeout: time.Minute, OrphanGrace: time.Second, MaxPending: 10, MaxResolved: 2, Clock: clk})
	run(t, e, use("a", 1), result("a", 2), use("b", 3), result("b", 4), use("c", 5), result("c", 6))
	assert.Equal(t, 2, e.resolved.n)
	evs := []Event{result("a", 7)}
	run(t, e, evs...)
	assert.Equal(t, VerdictHeld, evs[0].Verdict, "a forgotten call is not a duplicate any more")
}

func TestConcurrentProcessKeepsConservation(t *testing.T) {
	e, clk := newTestEngine(t, 50)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				id := string(rune('a'+g)) + string(rune('0'+i%40))
				e.Process([]Event{use(id, int64(i)), result(id, int64(i+1))}, holdRef, nil)
				if i%50 == 0 {
					clk.Advance(time.Minute)
					e.Tick(nil)
				}
				assert.NoError(t, e.Stats().CheckConservation())
			}
		}()
	}
	wg.Wait()
}

// TestIndexCollisions: with every key's index hash the same, the keys share one run of the
// call index and of the resolved calls' index; when a call leaves either, the run closes up
// behind it, every remaining key is still found, and nothing is left behind once all are
// gone.
func TestIndexCollisions(t *testing.T) {
	e, _ := newTestEngine(t, 100)
	e.cfg.MaxResolved = 2
	e.hashMask = 0
	run(t, e, use("a", 1), use("b", 2), use("c", 3))
	require.Equal(t, 3, e.index.len())
	assert.Equal(t, "a", e.index.slots[0].ent.key().CallID)

	// a (first in the run) is resolved: it leaves the call index, whose run moves up, for the
	// resolved calls.
	evs := []Event{result("a", 4)}
	run(t, e, evs...)
	assert.Equal(t, VerdictResolved, evs[0].Verdict)
	require.NotNil(t, e.index.slots[0].ent)
	assert.NotEqual(t, "a", e.index.slots[0].ent.key().CallID)
	assert.Equal(t, 2, e.index.len())
	require.NotNil(t, e.lookup(key("a")))
	assert.Equal(t, stateResolved, e.lookup(key("a")).state)

	// b and c are still found, wherever they sit; resolving both forgets a, the oldest
	// resolved call beyond MaxResolved, and leaves both found in the resolved calls' run.
	evs = []Event{result("c", 5), result("b", 6)}
	run(t, e, evs...)
	assert.Equal(t, VerdictResolved, evs[0].Verdict)
	assert.Equal(t, VerdictResolved, evs[1].Verdict)
	assert.Zero(t, e.index.len())
	assert.Nil(t, e.lookup(key("a")))
	for _, id := range []string{"b", "c"} {
		require.NotNil(t, e.lookup(key(id)), id)
	}
	assert.Equal(t, 2, e.resolved.keyed)
	for e.resolved.n > 0 {
		e.forgetOldest()
	}
	assert.Zero(t, e.resolved.keyed)
	assert.Empty(t, e.conversations)
}
