// Package inflight keeps, per scope, what an agent was doing over the recent past, to answer
// "what was in flight at instant T" for timeout classification (specification section 4):
//
//   - tool calls, by call ID: when each was announced or started, and when it was resolved
//     (its result, its rejection, or its interruption), with its tool name;
//   - model calls and compactions, as intervals [start, end].
//
// A tool call is in flight at T when it was announced or started at or before T and not
// resolved by then (its resolution is after T). Calls are kept by call ID, so a call
// announced twice (a repeated use, an export retry) or seen in two signals counts once, and a
// resolution without an announcement never makes a count negative: the count at T is the
// number of distinct calls whose interval covers T. The earliest announcement and the
// earliest resolution of a call win, so arrival order does not matter.
//
// A model call or compaction is in flight at T when it started at or before T and ended no
// earlier than Settle before T: the error of a timed-out model call reaches the turn that
// waits on it a few milliseconds later, and the turn's record ends then. Intervals of one kind
// that overlap or are less than Settle apart are merged (a stream of Codex SSE events is one
// interval), which leaves every answer unchanged.
//
// Memory is bounded: a resolved operation is forgotten Retention after it was resolved (by
// the tracker's clock), and at most MaxOperations operations are kept in all; beyond that the
// oldest (first recorded) is forgotten first. A call never resolved is forgotten only by the
// bound; the processor resolves every call the pairing engine interrupts. The tracker keeps
// its own copies of the strings it is given, unless an Update says they are copies already
// (Update.Owned).
//
// inflight.go holds the tracker's API; store.go holds how operations are kept and forgotten,
// intervals.go how model calls and compactions are merged.
package inflight

import (
	"errors"
	"hash/maphash"
	"sync"
	"time"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// Kind is the kind of an operation.
type Kind uint8

const (
	// Call is a tool call.
	Call Kind = iota + 1
	// Model is a model call.
	Model
	// Compaction is a context compaction.
	Compaction
)

// Config holds the tracker's bounds.
type Config struct {
	// Retention is how long a resolved operation is kept after it was resolved.
	Retention time.Duration
	// MaxOperations bounds the operations kept, over all scopes.
	MaxOperations int
	// Settle is how long after its end a model call or compaction still counts as in flight.
	Settle time.Duration
	// Now is the tracker's clock (time.Now when nil).
	Now func() time.Time
}

// Tracker is the per-scope bookkeeping. It is safe for concurrent use.
type Tracker struct {
	cfg Config

	mu     sync.Mutex
	scopes map[pairing.ScopeKey]*scope
	// calls indexes the tool calls of the scopes that hold many (see scope.indexed) by a
	// 64-bit hash of their scope and call ID (see callHash); a call whose hash is already
	// taken by another goes to collide. The calls of the other scopes are found by scanning
	// the scope's operations.
	calls   map[uint64]*op
	collide map[callKey]*op
	seed    maphash.Seed
	mask    uint64 // all ones; tests narrow it to force collisions
	scan    int    // scanCalls; tests lower it to index every scope
	scopeID uint64 // the last scope.id given
	// order lists every operation in the order first recorded (for MaxOperations), resolved
	// the resolved ones in the order resolved (for Retention); both are intrusive lists.
	order, resolved list
	n               int
	// names interns tool names (a small vocabulary per agent), and tenants the scopes'
	// tenants, each bounded by maxNames.
	names   map[string]string
	tenants map[string]string
	// last is the scope most recently looked up, and lastCall the call: a batch's updates
	// come in runs of one scope (and a result's announcement and resolution are adjacent),
	// so most lookups end here. forget clears them.
	last     *scope
	lastCall *op
}

// New returns a tracker. It returns an error when a bound is not positive.
func New(cfg Config) (*Tracker, error) {
	if cfg.Retention <= 0 {
		return nil, errors.New("inflight: retention must be positive")
	}
	if cfg.MaxOperations < 1 {
		return nil, errors.New("inflight: max operations must be at least 1")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Tracker{
		cfg:     cfg,
		scopes:  map[pairing.ScopeKey]*scope{},
		calls:   map[uint64]*op{},
		collide: map[callKey]*op{},
		seed:    maphash.MakeSeed(),
		mask:    ^uint64(0),
		scan:    scanCalls,
		names:   map[string]string{},
		tenants: map[string]string{},
	}, nil
}

// Len returns the number of operations kept.
func (t *Tracker) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

// Op says what an Update reports.
type Op uint8

const (
	// OpAnnounce: call CallID was announced or started at Start.
	OpAnnounce Op = iota + 1
	// OpResolve: call CallID was resolved (its result existed, it was refused, or it was
	// interrupted) at End.
	OpResolve
	// OpInterval: a model call or compaction (Kind) ran from Start to End.
	OpInterval
)

// Update is one fact about a scope, for Apply.
type Update struct {
	Op     Op
	Kind   Kind // of an OpInterval: Model or Compaction
	Scope  pairing.ScopeKey
	CallID string
	// Tool is the call's tool name, "" when unknown.
	Tool string
	// Start and End in Unix ns.
	Start, End int64
	// Owned says that the strings of Scope and CallID are copies the tracker may keep as
	// they are: they alias no buffer of the caller and never change (the pairing engine's
	// copies, pairing.Event.Owned). Otherwise the tracker copies what it keeps of them.
	Owned bool
}

// Apply records updates in order under one lock (a batch's worth):
//
//   - OpAnnounce: the earliest announcement of a call is kept;
//   - OpResolve: the earliest resolution of a call is kept;
//   - OpInterval: a zero Start is taken as End (an instant); an interval that overlaps the
//     scope's latest interval of the same kind, or starts less than Settle after it ended,
//     extends it.
//
// Updates with an empty call ID, a non-positive time or an unknown kind are ignored.
func (t *Tracker) Apply(updates []Update) {
	if len(updates) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.cfg.Now().UnixNano()
	for i := range updates {
		u := &updates[i]
		switch u.Op {
		case OpAnnounce:
			if u.CallID == "" || u.Start <= 0 {
				continue
			}
			o := t.call(u)
			if o.start == 0 || u.Start < o.start {
				o.start = u.Start
			}
		case OpResolve:
			if u.CallID == "" || u.End <= 0 {
				continue
			}
			t.setEnd(t.call(u), u.End, now)
		case OpInterval:
			t.interval(u, now)
		}
	}
	t.trim(now)
}

// Announce records that call callID of scope k (tool name tool, "" when unknown) was
// announced or started at time at (Unix ns). See Apply.
func (t *Tracker) Announce(k pairing.ScopeKey, callID, tool string, at int64) {
	t.Apply([]Update{{Op: OpAnnounce, Scope: k, CallID: callID, Tool: tool, Start: at}})
}

// Resolve records that call callID of scope k was resolved at time at (Unix ns). See Apply.
func (t *Tracker) Resolve(k pairing.ScopeKey, callID, tool string, at int64) {
	t.Apply([]Update{{Op: OpResolve, Scope: k, CallID: callID, Tool: tool, End: at}})
}

// Interval records a model call or compaction of scope k from start to end (Unix ns). See
// Apply.
func (t *Tracker) Interval(k pairing.ScopeKey, kind Kind, start, end int64) {
	t.Apply([]Update{{Op: OpInterval, Kind: kind, Scope: k, Start: start, End: end}})
}

// Expire forgets the resolved operations past Retention. The tracker also does so on every
// update; Expire lets an idle tracker release memory.
func (t *Tracker) Expire() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.trim(t.cfg.Now().UnixNano())
}

// ActiveCall is a tool call in flight.
type ActiveCall struct {
	CallID, Tool string
	// Start is when the call was announced or started (Unix ns).
	Start int64
}

// Snapshot is what was in flight in a scope at an instant.
type Snapshot struct {
	// Tools is the number of distinct tool calls in flight.
	Tools int
	// Latest is the most recently started call in flight (when Tools > 0); of calls started
	// at the same instant, the one with the greatest call ID, so the answer is deterministic.
	Latest ActiveCall
	// Model and Compaction report whether a model call or a compaction was in flight.
	Model, Compaction bool
}

// At returns what was in flight in scope k at time at (Unix ns).
func (t *Tracker) At(k pairing.ScopeKey, at int64) Snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	var s Snapshot
	sc := t.scopes[k]
	if sc == nil {
		return s
	}
	settle := int64(t.cfg.Settle)
	for o := sc.ops.head; o != nil; o = o.inScope.next {
		switch o.kind {
		case Call:
			if o.start == 0 || o.start > at || (o.end != 0 && o.end <= at) {
				continue
			}
			s.Tools++
			if s.Tools == 1 || o.start > s.Latest.Start || (o.start == s.Latest.Start && o.callID > s.Latest.CallID) {
				s.Latest = ActiveCall{CallID: o.callID, Tool: o.tool, Start: o.start}
			}
		case Model:
			s.Model = s.Model || (o.start <= at && at <= o.end+settle)
		case Compaction:
			s.Compaction = s.Compaction || (o.start <= at && at <= o.end+settle)
		}
	}
	return s
}
