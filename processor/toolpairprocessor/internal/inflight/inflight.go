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
package inflight

import (
	"errors"
	"hash/maphash"
	"strings"
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

// maxIntervalsInScope bounds the model call and compaction intervals kept per scope (the most
// recent are kept).
const maxIntervalsInScope = 32

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

// maxNames bounds the interned tool names, and the interned tenants; names beyond it are
// copied per call, tenants per scope.
const maxNames = 4096

type callKey struct {
	scope  *scope
	callID string
}

type scope struct {
	key       pairing.ScopeKey
	id        uint64 // unique over the tracker's life, for callHash
	ops       list   // this scope's operations
	intervals int    // model calls and compactions among them
	calls     int    // tool calls among them
	// indexed: the scope's calls are in the tracker's index, since it once held more than
	// scanCalls calls; until then they are found by scanning ops.
	indexed bool
	// stored: the scope is the one Tracker.scopes holds for its key (it is put there once,
	// when made, and taken out once, when its last operation is forgotten), which spares
	// forget a lookup.
	stored bool
}

// scanCalls is how many tool calls a scope holds before they are indexed: a scope of a few
// calls (a trace, a short session) finds them faster by scanning its operations, most
// recent first, than through a map of every call, and spares the map its inserts and
// deletes.
const scanCalls = 8

// list is an intrusive doubly linked list of ops through one of their link pairs.
type list struct {
	head, tail *op
}

type link struct{ prev, next *op }

type op struct {
	kind       Kind
	scope      *scope
	callID     string
	tool       string
	hash       uint64 // of a call of an indexed scope: callHash(scope, callID)
	start, end int64  // Unix ns; 0: unknown (start) / not resolved (end)
	resolvedAt int64  // tracker clock, Unix ns, when end was first set
	live       bool

	inOrder, inScope, inResolved link
}

func (l *list) push(o *op, lk func(*op) *link) {
	lk(o).prev, lk(o).next = l.tail, nil
	if l.tail != nil {
		lk(l.tail).next = o
	} else {
		l.head = o
	}
	l.tail = o
}

func (l *list) remove(o *op, lk func(*op) *link) {
	k := lk(o)
	if k.prev != nil {
		lk(k.prev).next = k.next
	} else if l.head == o {
		l.head = k.next
	} else {
		return // not in the list
	}
	if k.next != nil {
		lk(k.next).prev = k.prev
	} else {
		l.tail = k.prev
	}
	k.prev, k.next = nil, nil
}

func orderLink(o *op) *link    { return &o.inOrder }
func scopeLink(o *op) *link    { return &o.inScope }
func resolvedLink(o *op) *link { return &o.inResolved }

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

// scope returns the scope of key k, creating it; owned says that k's strings may be kept as
// they are (Update.Owned).
func (t *Tracker) scope(k pairing.ScopeKey, owned bool) *scope {
	if sc := t.last; sc != nil && sc.key == k {
		return sc
	}
	sc := t.scopes[k]
	if sc == nil {
		if !owned {
			k = pairing.ScopeKey{Tenant: intern(t.tenants, k.Tenant), Scope: strings.Clone(k.Scope)}
		}
		t.scopeID++
		sc = &scope{key: k, id: t.scopeID, stored: true}
		t.scopes[k] = sc
	}
	t.last = sc
	return sc
}

// intern returns the tracker's copy of s from table, a copy interned there while it holds
// fewer than maxNames (tool names, tenants).
func intern(table map[string]string, s string) string {
	if c, ok := table[s]; ok {
		return c
	}
	c := strings.Clone(s)
	if len(table) < maxNames {
		table[c] = c
	}
	return c
}

func (t *Tracker) add(sc *scope, o *op) {
	o.scope, o.live = sc, true
	t.order.push(o, orderLink)
	sc.ops.push(o, scopeLink)
	t.n++
	if o.kind != Call {
		sc.intervals++
		return
	}
	sc.calls++
	switch {
	case sc.indexed:
		t.index(o)
	case sc.calls > t.scan:
		sc.indexed = true
		for c := sc.ops.head; c != nil; c = c.inScope.next {
			if c.kind == Call {
				t.index(c)
			}
		}
	}
}

// index adds a call of an indexed scope to the call index.
func (t *Tracker) index(o *op) {
	o.hash = t.callHash(o.scope, o.callID)
	if t.calls[o.hash] == nil {
		t.calls[o.hash] = o
	} else {
		t.collide[callKey{o.scope, o.callID}] = o
	}
}

// findCall returns the op of call callID of scope sc, or nil.
func (t *Tracker) findCall(sc *scope, callID string) *op {
	if !sc.indexed {
		for o := sc.ops.tail; o != nil; o = o.inScope.prev {
			if o.kind == Call && o.callID == callID {
				return o
			}
		}
		return nil
	}
	if o := t.calls[t.callHash(sc, callID)]; o != nil && o.scope == sc && o.callID == callID {
		return o
	}
	if len(t.collide) == 0 {
		return nil
	}
	return t.collide[callKey{sc, callID}]
}

// callHash is the index hash of call callID of scope sc: the call ID's hash mixed with the
// scope's id, so that no string of the scope key is hashed again.
func (t *Tracker) callHash(sc *scope, callID string) uint64 {
	return (maphash.String(t.seed, callID) ^ (sc.id * 0x9e3779b97f4a7c15)) & t.mask
}

// call returns the op of a call of update u, creating it, and records its tool name if not
// known yet.
func (t *Tracker) call(u *Update) *op {
	callID := u.CallID
	sc := t.scope(u.Scope, u.Owned)
	o := t.lastCall
	if o == nil || o.scope != sc || o.callID != callID {
		o = t.findCall(sc, callID)
		if o == nil {
			if !u.Owned {
				callID = strings.Clone(callID)
			}
			o = &op{kind: Call, callID: callID}
			t.add(sc, o)
		}
		t.lastCall = o
	}
	if o.tool == "" && u.Tool != "" {
		o.tool = intern(t.names, u.Tool)
	}
	return o
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

// setEnd sets an operation's end, keeping the earliest; a first end puts it in the resolved
// list, for Retention.
func (t *Tracker) setEnd(o *op, at, now int64) {
	if o.end != 0 && o.end <= at {
		return
	}
	if o.end == 0 {
		o.resolvedAt = now
		t.resolved.push(o, resolvedLink)
	}
	o.end = at
}

func (t *Tracker) interval(u *Update, now int64) {
	kind, start, end := u.Kind, u.Start, u.End
	if (kind != Model && kind != Compaction) || end <= 0 {
		return
	}
	if start <= 0 || start > end {
		start = end
	}
	sc := t.scope(u.Scope, u.Owned)
	settle := int64(t.cfg.Settle)
	for o := sc.ops.tail; o != nil; o = o.inScope.prev {
		if o.kind != kind {
			continue
		}
		if start <= o.end+settle && o.start <= end+settle {
			if start < o.start {
				o.start = start
			}
			if end > o.end {
				// Extended: it was resolved again now.
				o.end = end
				t.resolved.remove(o, resolvedLink)
				o.resolvedAt = now
				t.resolved.push(o, resolvedLink)
			}
			return
		}
		break // only the latest interval of the kind is merged into
	}
	if sc.intervals >= maxIntervalsInScope {
		for o := sc.ops.head; o != nil; o = o.inScope.next {
			if o.kind != Call {
				t.forget(o)
				break
			}
		}
		sc = t.scope(u.Scope, u.Owned) // forgetting may have dropped an empty scope
	}
	o := &op{kind: kind, start: start}
	t.add(sc, o)
	t.setEnd(o, end, now)
}

// forget removes an operation, and its scope when it was the scope's last.
func (t *Tracker) forget(o *op) {
	if !o.live {
		return
	}
	o.live = false
	if t.lastCall == o {
		t.lastCall = nil
	}
	t.order.remove(o, orderLink)
	t.resolved.remove(o, resolvedLink)
	sc := o.scope
	sc.ops.remove(o, scopeLink)
	t.n--
	switch {
	case o.kind != Call:
		sc.intervals--
	case sc.indexed:
		sc.calls--
		if t.calls[o.hash] == o {
			delete(t.calls, o.hash)
		} else {
			delete(t.collide, callKey{sc, o.callID})
		}
	default:
		sc.calls--
	}
	if sc.ops.head == nil && sc.stored {
		delete(t.scopes, sc.key)
		sc.stored = false
		if t.last == sc {
			t.last = nil
		}
	}
}

// trim applies the bounds: resolved operations past Retention, then the oldest beyond
// MaxOperations.
func (t *Tracker) trim(now int64) {
	cutoff := now - int64(t.cfg.Retention)
	for o := t.resolved.head; o != nil && o.resolvedAt <= cutoff; o = t.resolved.head {
		t.forget(o)
	}
	for t.n > t.cfg.MaxOperations {
		t.forget(t.order.head)
	}
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
