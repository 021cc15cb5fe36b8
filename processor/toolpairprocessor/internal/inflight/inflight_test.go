package inflight

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

const ms = int64(time.Millisecond)

var scopeA = pairing.ScopeKey{Tenant: "svc", Scope: "session-a"}

type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func newTracker(t *testing.T, c *clock, maxOps int) *Tracker {
	t.Helper()
	tr, err := New(Config{Retention: 5 * time.Minute, MaxOperations: maxOps, Settle: time.Second, Now: c.Now})
	require.NoError(t, err)
	return tr
}

// step is one update of the tracker.
type step struct {
	op             string // announce, resolve, model, compaction
	scope          pairing.ScopeKey
	id, tool       string
	at, start, end int64 // ms
}

func apply(tr *Tracker, steps []step) {
	for _, s := range steps {
		k := s.scope
		if k == (pairing.ScopeKey{}) {
			k = scopeA
		}
		switch s.op {
		case "announce":
			tr.Announce(k, s.id, s.tool, s.at*ms)
		case "resolve":
			tr.Resolve(k, s.id, s.tool, s.at*ms)
		case "model":
			tr.Interval(k, Model, s.start*ms, s.end*ms)
		case "compaction":
			tr.Interval(k, Compaction, s.start*ms, s.end*ms)
		}
	}
}

func TestAt(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
		at    int64 // ms
		want  Snapshot
	}{
		{
			name: "two parallel calls in flight: count 2, the later one in the snapshot",
			steps: []step{
				{op: "announce", id: "call_1", tool: "Bash", at: 1000},
				{op: "announce", id: "call_2", tool: "Read", at: 1005},
			},
			at:   2000,
			want: Snapshot{Tools: 2, Latest: ActiveCall{CallID: "call_2", Tool: "Read", Start: 1005 * ms}},
		},
		{
			name: "a call that ended just before the instant is not in flight",
			steps: []step{
				{op: "announce", id: "call_1", tool: "Bash", at: 1000},
				{op: "resolve", id: "call_1", at: 1999},
			},
			at:   2000,
			want: Snapshot{},
		},
		{
			name: "a call resolved exactly at the instant is not in flight",
			steps: []step{
				{op: "announce", id: "call_1", tool: "Bash", at: 1000},
				{op: "resolve", id: "call_1", at: 2000},
			},
			at:   2000,
			want: Snapshot{},
		},
		{
			name: "a call resolved after the instant was in flight at it",
			steps: []step{
				{op: "announce", id: "call_1", tool: "Bash", at: 1000},
				{op: "resolve", id: "call_1", at: 3000},
			},
			at:   2000,
			want: Snapshot{Tools: 1, Latest: ActiveCall{CallID: "call_1", Tool: "Bash", Start: 1000 * ms}},
		},
		{
			name: "a call announced after the instant is not in flight",
			steps: []step{
				{op: "announce", id: "call_1", tool: "Bash", at: 2001},
			},
			at:   2000,
			want: Snapshot{},
		},
		{
			name: "a call announced twice counts once, from its earliest announcement",
			steps: []step{
				{op: "announce", id: "call_1", tool: "Bash", at: 1500},
				{op: "announce", id: "call_1", tool: "Bash", at: 1000},
				{op: "announce", id: "call_1", tool: "Bash", at: 1500},
			},
			at:   2000,
			want: Snapshot{Tools: 1, Latest: ActiveCall{CallID: "call_1", Tool: "Bash", Start: 1000 * ms}},
		},
		{
			name: "a resolution without announcement never counts, and never makes the count negative",
			steps: []step{
				{op: "resolve", id: "ghost", at: 1500},
				{op: "resolve", id: "ghost", at: 1600},
				{op: "announce", id: "call_1", tool: "Bash", at: 1000},
			},
			at:   2000,
			want: Snapshot{Tools: 1, Latest: ActiveCall{CallID: "call_1", Tool: "Bash", Start: 1000 * ms}},
		},
		{
			name: "the result arriving before its use: order does not matter",
			steps: []step{
				{op: "resolve", id: "call_1", tool: "Bash", at: 3000},
				{op: "announce", id: "call_1", at: 1000},
			},
			at:   2000,
			want: Snapshot{Tools: 1, Latest: ActiveCall{CallID: "call_1", Tool: "Bash", Start: 1000 * ms}},
		},
		{
			name: "the earliest resolution wins (a late duplicate result does not extend the call)",
			steps: []step{
				{op: "announce", id: "call_1", tool: "Bash", at: 1000},
				{op: "resolve", id: "call_1", at: 1500},
				{op: "resolve", id: "call_1", at: 2500},
			},
			at:   2000,
			want: Snapshot{},
		},
		{
			name: "calls of another scope do not count",
			steps: []step{
				{op: "announce", scope: pairing.ScopeKey{Tenant: "svc", Scope: "session-b"}, id: "call_1", tool: "Bash", at: 1000},
				{op: "announce", scope: pairing.ScopeKey{Tenant: "other", Scope: "session-a"}, id: "call_2", tool: "Bash", at: 1000},
			},
			at:   2000,
			want: Snapshot{},
		},
		{
			name:  "turn-level instant with nothing in flight",
			steps: []step{{op: "announce", id: "call_1", at: 1000}, {op: "resolve", id: "call_1", at: 1100}},
			at:    20_000,
			want:  Snapshot{},
		},
		{
			name:  "a model call in flight",
			steps: []step{{op: "model", start: 1000, end: 7000}},
			at:    5000,
			want:  Snapshot{Model: true},
		},
		{
			name:  "a model call that ended within Settle before the instant still counts",
			steps: []step{{op: "model", start: 1000, end: 7000}},
			at:    7000 + 999,
			want:  Snapshot{Model: true},
		},
		{
			name:  "a model call that ended longer than Settle before the instant does not",
			steps: []step{{op: "model", start: 1000, end: 7000}},
			at:    7000 + 1001,
			want:  Snapshot{},
		},
		{
			name:  "a compaction in flight",
			steps: []step{{op: "model", start: 100, end: 900}, {op: "compaction", start: 1000, end: 9000}},
			at:    8000,
			want:  Snapshot{Compaction: true},
		},
		{
			name: "a tool call and a model call both in flight",
			steps: []step{
				{op: "model", start: 1000, end: 9000},
				{op: "announce", id: "call_1", tool: "Bash", at: 2000},
			},
			at:   3000,
			want: Snapshot{Tools: 1, Latest: ActiveCall{CallID: "call_1", Tool: "Bash", Start: 2000 * ms}, Model: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTracker(t, &clock{now: time.Unix(1000, 0)}, 100)
			apply(tr, tt.steps)
			assert.Equal(t, tt.want, tr.At(scopeA, tt.at*ms))
		})
	}
}

// TestRetention: a resolved call is answered for instants in the recent past until
// Retention after it was resolved, then forgotten.
func TestRetention(t *testing.T) {
	c := &clock{now: time.Unix(1000, 0)}
	tr := newTracker(t, c, 100)
	tr.Announce(scopeA, "call_1", "Bash", 1000*ms)
	tr.Resolve(scopeA, "call_1", "Bash", 3000*ms)
	tr.Interval(scopeA, Model, 100*ms, 900*ms)
	c.now = c.now.Add(5*time.Minute - time.Second)
	tr.Expire()
	assert.Equal(t, 1, tr.At(scopeA, 2000*ms).Tools, "kept within retention")
	assert.True(t, tr.At(scopeA, 500*ms).Model)
	c.now = c.now.Add(time.Second)
	tr.Expire()
	assert.Equal(t, Snapshot{}, tr.At(scopeA, 2000*ms))
	assert.Equal(t, Snapshot{}, tr.At(scopeA, 500*ms))
	assert.Equal(t, 0, tr.Len())
}

// TestUnresolvedCallKeptBeyondRetention: a call still in flight is not forgotten by age.
func TestUnresolvedCallKeptBeyondRetention(t *testing.T) {
	c := &clock{now: time.Unix(1000, 0)}
	tr := newTracker(t, c, 100)
	tr.Announce(scopeA, "call_1", "Bash", 1000*ms)
	c.now = c.now.Add(time.Hour)
	tr.Expire()
	assert.Equal(t, 1, tr.At(scopeA, 2000*ms).Tools)
}

// TestMaxOperations: beyond the bound the oldest operations are forgotten first.
func TestMaxOperations(t *testing.T) {
	tr := newTracker(t, &clock{now: time.Unix(1000, 0)}, 3)
	for i := range 5 {
		tr.Announce(scopeA, fmt.Sprintf("call_%d", i), "Bash", int64(1000+i)*ms)
	}
	assert.Equal(t, 3, tr.Len())
	s := tr.At(scopeA, 2000*ms)
	assert.Equal(t, 3, s.Tools)
	assert.Equal(t, "call_4", s.Latest.CallID)
	for i := range 40 {
		tr.Interval(scopeA, Model, int64(i)*ms, int64(i+1)*ms)
	}
	assert.Equal(t, 3, tr.Len())
}

// TestIntervalsPerScopeBounded: a scope keeps only its most recent intervals.
func TestIntervalsPerScopeBounded(t *testing.T) {
	tr := newTracker(t, &clock{now: time.Unix(1000, 0)}, 1000)
	tr.Interval(scopeA, Model, 10*ms, 20*ms)
	for i := range 2 * maxIntervalsInScope {
		// 2 s apart: more than Settle, so never merged.
		start := int64(100_000 + 2000*i)
		tr.Interval(scopeA, Compaction, start*ms, (start+5)*ms)
	}
	assert.Equal(t, maxIntervalsInScope, tr.Len())
	assert.False(t, tr.At(scopeA, 15*ms).Model, "the oldest interval was dropped")
	assert.True(t, tr.At(scopeA, (100_000+2000*(2*maxIntervalsInScope-1)+3)*ms).Compaction)
}

// TestIntervalsMerged: intervals of one kind that overlap or are less than Settle apart are
// one (an SSE stream, an export retry), which answers as their union with Settle did.
func TestIntervalsMerged(t *testing.T) {
	tr := newTracker(t, &clock{now: time.Unix(1000, 0)}, 1000)
	for range 3 {
		tr.Interval(scopeA, Model, 10*ms, 20*ms) // a retried export
	}
	assert.Equal(t, 1, tr.Len())
	for i := range 100 { // a stream of events 50 ms apart, each 5 ms long
		tr.Interval(scopeA, Model, int64(3000+50*i)*ms, int64(3005+50*i)*ms)
	}
	assert.Equal(t, 2, tr.Len(), "one interval for the stream")
	assert.True(t, tr.At(scopeA, 5000*ms).Model)
	assert.True(t, tr.At(scopeA, (7955+999)*ms).Model)
	assert.False(t, tr.At(scopeA, (7955+1001)*ms).Model)
	assert.True(t, tr.At(scopeA, 900*ms).Model, "within Settle of the first interval")
	assert.False(t, tr.At(scopeA, 2000*ms).Model, "between the two")
	assert.False(t, tr.At(scopeA, 5*ms).Model)
	tr.Interval(scopeA, Compaction, 2000*ms, 2500*ms)
	assert.Equal(t, 3, tr.Len(), "another kind is never merged")
}

func TestNewRefusesBadBounds(t *testing.T) {
	_, err := New(Config{Retention: 0, MaxOperations: 1})
	assert.Error(t, err)
	_, err = New(Config{Retention: time.Second, MaxOperations: 0})
	assert.Error(t, err)
}

// TestCollidingHashes: with the call index narrowed to two hashes, nearly every call goes to
// the collision map, and the tracker answers exactly as one with the full hash, while calls
// are announced, resolved and forgotten (by the MaxOperations bound) in several scopes.
func TestCollidingHashes(t *testing.T) {
	c := &clock{now: time.Unix(1_700_000_000, 0)}
	full, narrow := newTracker(t, c, 50), newTracker(t, c, 50)
	narrow.mask = 1
	scopes := []pairing.ScopeKey{scopeA, {Tenant: "svc", Scope: "session-b"}, {Tenant: "other", Scope: "session-a"}}
	for i := range 400 {
		k := scopes[i%len(scopes)]
		id := fmt.Sprintf("call_%d", i%97)
		var u Update
		switch i % 4 {
		case 0, 1:
			u = Update{Op: OpAnnounce, Scope: k, CallID: id, Tool: "Bash", Start: int64(1000+i) * ms}
		case 2:
			u = Update{Op: OpResolve, Scope: k, CallID: id, End: int64(1000+i) * ms}
		default:
			u = Update{Op: OpInterval, Kind: Model, Scope: k, Start: int64(1000+i) * ms, End: int64(1001+i) * ms}
		}
		full.Apply([]Update{u})
		narrow.Apply([]Update{u})
		require.Equal(t, full.Len(), narrow.Len())
		for _, q := range scopes {
			for at := int64(990); at < int64(1000+i+2); at += 7 {
				require.Equal(t, full.At(q, at*ms), narrow.At(q, at*ms), "after update %d, scope %v, at %d", i, q, at)
			}
		}
	}
	require.NotEmpty(t, narrow.collide)
}
