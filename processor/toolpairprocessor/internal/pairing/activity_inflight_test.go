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

const msNs = int64(time.Millisecond)

var scopeS1 = ConversationKey{Tenant: "svc", Conversation: "s1"}

func newFlightEngine(t *testing.T) (*Engine, *fakeClock) {
	t.Helper()
	clk := newFakeClock()
	e := New(Config{PairingTimeout: testTimeout, OrphanGrace: testGrace, MaxPending: 1000, Linger: time.Second, Clock: clk})
	return e, clk
}

func withStart(ev Event, ms int64) Event {
	ev.Start = ms * msNs
	return ev
}

func ofKind(ev Event, k Kind) Event {
	ev.Kind = k
	return ev
}

func ivl(kind ActivityKind, startMs, endMs int64) Activity {
	return Activity{Kind: kind, Key: scopeS1, Start: startMs * msNs, End: endMs * msNs}
}

// TestInFlightAt: what was in flight at an instant, answered from the engine's entries
// whatever the order their records arrived in, and from the scope's intervals.
func TestInFlightAt(t *testing.T) {
	bash := func(ev Event) Event { ev.ToolName = "Bash"; return ev }
	tests := []struct {
		name   string
		events []Event
		acts   []Activity
		at     int64 // ms
		want   InFlight
	}{
		{
			name:   "two parallel calls in flight: count 2, the later one is the latest",
			events: []Event{bash(use("c1", 1000)), use("c2", 1005)},
			at:     2000,
			want:   InFlight{Tools: 2, Latest: ActiveCall{CallID: "c2", Tool: "run_shell", Start: 1005 * msNs}},
		},
		{name: "a call that ended just before the instant is not in flight", events: []Event{use("c1", 1000), result("c1", 1999)}, at: 2000},
		{name: "a call resolved exactly at the instant is not in flight", events: []Event{use("c1", 1000), result("c1", 2000)}, at: 2000},
		{
			name:   "a call resolved after the instant was in flight at it",
			events: []Event{use("c1", 1000), result("c1", 3000)},
			at:     2000,
			want:   InFlight{Tools: 1, Latest: ActiveCall{CallID: "c1", Tool: "run_shell", Start: 1000 * msNs}},
		},
		{name: "a call announced after the instant is not in flight", events: []Event{use("c1", 2001)}, at: 2000},
		{
			name:   "a call announced twice counts once, from its earliest record",
			events: []Event{use("c1", 1500), use("c1", 1000), use("c1", 1500)},
			at:     2000,
			want:   InFlight{Tools: 1, Latest: ActiveCall{CallID: "c1", Tool: "run_shell", Start: 1000 * msNs}},
		},
		{
			name:   "a result without its use (held) and without a start never counts",
			events: []Event{result("ghost", 1500), use("c1", 1000)},
			at:     1200,
			want:   InFlight{Tools: 1, Latest: ActiveCall{CallID: "c1", Tool: "run_shell", Start: 1000 * msNs}},
		},
		{
			name:   "a held result whose record shows its start counts from that start",
			events: []Event{withStart(result("c1", 3000), 1000)},
			at:     2000,
			want:   InFlight{Tools: 1, Latest: ActiveCall{CallID: "c1", Start: 1000 * msNs}},
		},
		{
			name:   "the result arriving before its use: order does not matter",
			events: []Event{result("c1", 3000), use("c1", 1000)},
			at:     2000,
			want:   InFlight{Tools: 1, Latest: ActiveCall{CallID: "c1", Tool: "run_shell", Start: 1000 * msNs}},
		},
		{name: "a late duplicate result does not extend the call", events: []Event{use("c1", 1000), result("c1", 1500), result("c1", 2500)}, at: 2000},
		{name: "an echo resolves the call at its time", events: []Event{use("c1", 1000), echo("c1", 1500)}, at: 2000},
		{name: "an abort ends the call", events: []Event{use("c1", 1000), ofKind(result("c1", 1500), KindAbort)}, at: 2000},
		{name: "a refusal ends the call", events: []Event{use("c1", 1000), ofKind(use("c1", 1500), KindReject)}, at: 2000},
		{name: "a refusal before any use never counts", events: []Event{ofKind(use("c1", 1500), KindReject)}, at: 1500},
		{
			name:   "a held companion ends the call at its time",
			events: []Event{use("c1", 1000), ofKind(result("c1", 3000), KindCompanion)},
			at:     2000,
			want:   InFlight{Tools: 1, Latest: ActiveCall{CallID: "c1", Tool: "run_shell", Start: 1000 * msNs}},
		},
		{
			name:   "a session end interrupts the call where it ended",
			events: []Event{use("c1", 1000), {Kind: KindSessionEnd, Key: key(""), Time: 1800 * msNs}},
			at:     1900,
		},
		{
			name:   "calls of another scope do not count",
			events: []Event{inScope(use("c1", 1000), "s2"), {Kind: KindUse, Key: Key{Tenant: "other", Conversation: "s1", CallID: "c2"}, Time: 1000 * msNs}},
			at:     2000,
		},
		{name: "a model call in flight", acts: []Activity{ivl(ActivityModel, 1000, 7000)}, at: 5000, want: InFlight{Model: true}},
		{name: "a model call ended within Linger still counts", acts: []Activity{ivl(ActivityModel, 1000, 7000)}, at: 7999, want: InFlight{Model: true}},
		{name: "a model call ended longer than Linger before does not", acts: []Activity{ivl(ActivityModel, 1000, 7000)}, at: 8001},
		{
			name: "a compaction in flight",
			acts: []Activity{ivl(ActivityModel, 100, 900), ivl(ActivityCompaction, 1000, 9000)},
			at:   8000,
			want: InFlight{Compaction: true},
		},
		{
			name:   "a tool call and a model call both in flight",
			events: []Event{bash(use("c1", 2000))},
			acts:   []Activity{ivl(ActivityModel, 1000, 9000)},
			at:     3000,
			want:   InFlight{Tools: 1, Latest: ActiveCall{CallID: "c1", Tool: "Bash", Start: 2000 * msNs}, Model: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, clk := newFlightEngine(t)
			e.Observe(tt.acts)
			for i := range tt.events {
				e.Process(tt.events[i:i+1], holdRef, nil)
			}
			clk.Advance(testGrace + time.Second) // past the close delay of a session end
			e.Tick(nil)
			assert.Equal(t, tt.want, e.InFlightAt(scopeS1, tt.at*msNs))
			require.NoError(t, e.checkScopes())
		})
	}
}

// TestInFlightAtExpiredCall: a call interrupted for want of its result ends at its scope's
// last sign of life, and is answered as long as the engine remembers it.
func TestInFlightAtExpiredCall(t *testing.T) {
	e, clk := newFlightEngine(t)
	e.Process([]Event{use("c1", 1000), use("c2", 1100), result("c2", 4000)}, holdRef, nil)
	clk.Advance(testTimeout + time.Second)
	res := e.Tick(nil)
	require.Len(t, res, 1)
	assert.Equal(t, ReasonExpired, res[0].Reason)
	// c2, resolved as long ago as pairing_timeout in an idle scope, is forgotten.
	got := e.InFlightAt(scopeS1, 3000*msNs)
	assert.Equal(t, InFlight{Tools: 1, Latest: ActiveCall{CallID: "c1", Tool: "run_shell", Start: 1000 * msNs}}, got, "c1 ran until the scope's last record")
	assert.Equal(t, 0, e.InFlightAt(scopeS1, 4000*msNs).Tools)
}

// TestActivityIntervalsMerged: intervals of one kind that overlap or are less than Linger
// apart are one (an event stream, an export retry); another kind is never merged.
func TestActivityIntervalsMerged(t *testing.T) {
	e, _ := newFlightEngine(t)
	for range 3 {
		e.Observe([]Activity{ivl(ActivityModel, 10, 20)})
	}
	for i := range int64(100) { // a stream of events 50 ms apart, each 5 ms long
		e.Observe([]Activity{ivl(ActivityModel, 3000+50*i, 3005+50*i)})
	}
	assert.Equal(t, 2, e.acts.items, "one interval for the stream")
	assert.True(t, e.InFlightAt(scopeS1, 5000*msNs).Model)
	assert.True(t, e.InFlightAt(scopeS1, (7955+999)*msNs).Model)
	assert.False(t, e.InFlightAt(scopeS1, (7955+1001)*msNs).Model)
	assert.True(t, e.InFlightAt(scopeS1, 900*msNs).Model, "within Linger of the first interval")
	assert.False(t, e.InFlightAt(scopeS1, 2000*msNs).Model, "between the two")
	e.Observe([]Activity{ivl(ActivityCompaction, 2000, 2500)})
	assert.Equal(t, 3, e.acts.items, "another kind is never merged")
	e.Observe([]Activity{{Kind: ActivityModel, Key: scopeS1, Start: 0, End: 0}, {Kind: 99, Key: scopeS1, End: 1}})
	assert.Equal(t, 3, e.acts.items, "no end, or an unknown kind: ignored")
}

// TestActivityBounds: a scope keeps its most recent intervals and anchors; over all scopes
// MaxActivity items are kept, the scope observed least recently losing its activity first;
// activity expires ActivityRetention after the scope was last observed, and a scope held by
// nothing else goes with it.
func TestActivityBounds(t *testing.T) {
	clk := newFakeClock()
	e := New(Config{PairingTimeout: testTimeout, OrphanGrace: testGrace, MaxPending: 1000, MaxActivity: 50, Linger: time.Second, Clock: clk})
	e.Observe([]Activity{ivl(ActivityModel, 10, 20)})
	for i := range int64(2 * maxIntervalsInScope) { // 2 s apart: never merged
		e.Observe([]Activity{ivl(ActivityCompaction, 100_000+2000*i, 100_005+2000*i)})
	}
	assert.Equal(t, maxIntervalsInScope, e.acts.items)
	assert.False(t, e.InFlightAt(scopeS1, 15*msNs).Model, "the oldest interval was dropped")
	for i := range 2 * maxAnchorsInScope {
		e.Observe([]Activity{{Kind: ActivityTurn, Key: scopeS1, Start: int64(i) * msNs, End: int64(i+1) * msNs, ID: [24]byte{byte(i)}, Anchor: i}})
	}
	assert.Equal(t, maxIntervalsInScope+maxAnchorsInScope, e.acts.items)
	for i := range 30 {
		e.Observe([]Activity{{Kind: ActivityModel, Key: ConversationKey{Tenant: "svc", Conversation: fmt.Sprint("other-", i)}, End: 1}})
	}
	assert.LessOrEqual(t, e.acts.items, 50)
	assert.False(t, e.InFlightAt(scopeS1, 100_003*msNs).Compaction, "the least recently observed scope lost its activity")
	require.NoError(t, e.checkScopes())
	clk.Advance(testTimeout + testGrace)
	e.Tick(nil)
	assert.Zero(t, e.acts.items)
	assert.Empty(t, e.conversations, "scopes held by their activity alone are forgotten with it")
	require.NoError(t, e.checkScopes())
}

// TestAnchor: the latest turn span covering the instant, else the latest model-request span
// covering it, else the latest model-request span ended within the window before it; a span
// seen again replaces its copy.
func TestAnchor(t *testing.T) {
	e, _ := newFlightEngine(t)
	span := func(kind ActivityKind, id byte, start, end int64, v string) Activity {
		return Activity{Kind: kind, Key: scopeS1, Start: start * msNs, End: end * msNs, ID: [24]byte{id}, Anchor: v}
	}
	e.Observe([]Activity{
		span(ActivityModelSpan, 1, 1000, 2000, "model-1"),
		span(ActivityTurn, 2, 500, 5000, "turn-a"),
		span(ActivityTurn, 3, 4000, 9000, "turn-b"),
		span(ActivityModelSpan, 4, 10_000, 11_000, "model-2"),
		span(ActivityModelSpan, 4, 10_000, 11_500, "model-2-retry"),
	})
	for _, tt := range []struct {
		at   int64
		want any
	}{
		{at: 1500, want: "turn-a"},
		{at: 4500, want: "turn-b"},
		{at: 10_500, want: "model-2-retry"},
		{at: 11_600, want: "model-2-retry"},
		{at: 50_000, want: nil},
		{at: 100, want: nil},
	} {
		got, ok := e.Anchor(scopeS1, tt.at*msNs, 1000*msNs)
		assert.Equal(t, tt.want != nil, ok, "at %d", tt.at)
		assert.Equal(t, tt.want, got, "at %d", tt.at)
	}
	_, ok := e.Anchor(ConversationKey{Tenant: "svc", Conversation: "none"}, 1500*msNs, 0)
	assert.False(t, ok)
}

// TestActivitySnapshot: intervals and anchors survive Snapshot and Restore, with the time the
// scope was last observed; an anchor whose value the caller did not restore does not.
func TestActivitySnapshot(t *testing.T) {
	e, clk := newFlightEngine(t)
	e.Observe([]Activity{ivl(ActivityModel, 1000, 2000), ivl(ActivityCompaction, 5000, 6000),
		{Kind: ActivityTurn, Key: scopeS1, Start: 1, End: 2, Anchor: "x"}})
	snap := e.Snapshot(nil)
	require.Len(t, snap.Activity, 3)
	snap.Activity[2].Anchor = nil // as a codec that cannot bind it leaves it
	r := New(Config{PairingTimeout: testTimeout, OrphanGrace: testGrace, MaxPending: 1000, Linger: time.Second, Clock: clk})
	_, err := r.Restore(snap, nil)
	require.NoError(t, err)
	assert.True(t, r.InFlightAt(scopeS1, 1500*msNs).Model)
	assert.True(t, r.InFlightAt(scopeS1, 5500*msNs).Compaction)
	_, ok := r.Anchor(scopeS1, 1, 0)
	assert.False(t, ok)
	require.NoError(t, r.checkScopes())
	clk.Advance(testTimeout + testGrace)
	r.Tick(nil)
	assert.False(t, r.InFlightAt(scopeS1, 1500*msNs).Model, "retention counts from the time observed before the restart")
}

// TestInFlightAtArrivalOrder: the answer is the same whichever order a call's records arrive
// in: a refusal or a result settled at once before the use that shows an earlier start, and
// a result after the echo that resolved its call with a later time.
func TestInFlightAtArrivalOrder(t *testing.T) {
	reject := func(id string, ms int64) Event { return ofKind(use(id, ms), KindReject) }
	tests := []struct {
		name    string
		batches [][]Event
		hold    func(*Event) any
		at      int64 // ms
		want    int   // tools in flight
	}{
		{name: "use then refusal", batches: [][]Event{{use("c1", 1000)}, {reject("c1", 3000)}}, hold: holdRef, at: 2000, want: 1},
		{name: "refusal then use", batches: [][]Event{{reject("c1", 3000)}, {use("c1", 1000)}}, hold: holdRef, at: 2000, want: 1},
		{name: "use then a result that cannot wait", batches: [][]Event{{use("c1", 1000)}, {withStart(result("c1", 3000), 900)}}, at: 2000, want: 1},
		{name: "a result that cannot wait then its use", batches: [][]Event{{withStart(result("c1", 3000), 900)}, {use("c1", 1000)}}, at: 2000, want: 1},
		{name: "a result that cannot wait counts its own call", batches: [][]Event{{withStart(result("c1", 3000), 900)}}, at: 2999, want: 1},
		{name: "echo, then the result it repeats, earlier", batches: [][]Event{{use("c1", 1000)}, {echo("c1", 5000)}, {result("c1", 2000)}}, hold: holdRef, at: 3000, want: 0},
		{name: "result, then its echo", batches: [][]Event{{use("c1", 1000)}, {result("c1", 2000)}, {echo("c1", 5000)}}, hold: holdRef, at: 3000, want: 0},
		{name: "companion, then the main result, later", batches: [][]Event{{use("c1", 1000)}, {ofKind(result("c1", 2000), KindCompanion)}, {result("c1", 4000)}}, hold: holdRef, at: 3000, want: 0},
		{name: "main result, then the companion, earlier", batches: [][]Event{{use("c1", 1000)}, {result("c1", 4000)}, {ofKind(result("c1", 2000), KindCompanion)}}, hold: holdRef, at: 3000, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := newFlightEngine(t)
			for _, b := range tt.batches {
				e.Process(b, tt.hold, nil)
			}
			assert.Equal(t, tt.want, e.InFlightAt(scopeS1, tt.at*msNs).Tools)
			require.NoError(t, e.checkScopes())
		})
	}
}
