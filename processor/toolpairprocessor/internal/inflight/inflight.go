// Package inflight keeps, per scope, what an agent was doing over the recent past, to answer
// "what was in flight at instant T" for timeout classification (CONTRACT section 4):
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
// waits on it a few milliseconds later, and the turn's record ends then.
//
// Memory is bounded: a resolved operation is forgotten Retention after it was resolved (by
// the tracker's clock), and at most MaxOperations operations are kept in all; beyond that the
// oldest (first recorded) is forgotten first. A call never resolved is forgotten only by the
// bound; the processor resolves every call the pairing engine interrupts.
package inflight

import (
	"container/list"
	"errors"
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

	mu       sync.Mutex
	scopes   map[pairing.ScopeKey]*scope
	order    *list.List // of *op, in the order first recorded
	resolved []*op      // in the order resolved, for Retention; entries may be stale
}

type scope struct {
	calls     map[string]*op
	intervals []*op // model calls and compactions, oldest first
}

type op struct {
	kind       Kind
	key        pairing.ScopeKey
	callID     string
	tool       string
	start, end int64 // Unix ns; 0: unknown (start) / not resolved (end)
	resolvedAt int64 // tracker clock, Unix ns, when end was first set
	elem       *list.Element
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
	return &Tracker{cfg: cfg, scopes: map[pairing.ScopeKey]*scope{}, order: list.New()}, nil
}

// Len returns the number of operations kept.
func (t *Tracker) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.order.Len()
}

func (t *Tracker) scope(k pairing.ScopeKey) *scope {
	sc := t.scopes[k]
	if sc == nil {
		sc = &scope{calls: map[string]*op{}}
		t.scopes[k] = sc
	}
	return sc
}

// call returns the op of a call, creating it.
func (t *Tracker) call(k pairing.ScopeKey, callID string) *op {
	sc := t.scope(k)
	o := sc.calls[callID]
	if o == nil {
		o = &op{kind: Call, key: k, callID: callID}
		o.elem = t.order.PushBack(o)
		sc.calls[callID] = o
	}
	return o
}

// Announce records that call callID of scope k (tool name tool, "" when unknown) was
// announced or started at time at (Unix ns). The earliest announcement is kept.
func (t *Tracker) Announce(k pairing.ScopeKey, callID, tool string, at int64) {
	if callID == "" || at <= 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	o := t.call(k, callID)
	if o.start == 0 || at < o.start {
		o.start = at
	}
	if o.tool == "" {
		o.tool = tool
	}
	t.trim()
}

// Resolve records that call callID of scope k was resolved at time at (Unix ns): its result
// existed, it was refused, or it was interrupted then. The earliest resolution is kept.
func (t *Tracker) Resolve(k pairing.ScopeKey, callID, tool string, at int64) {
	if callID == "" || at <= 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	o := t.call(k, callID)
	if o.tool == "" {
		o.tool = tool
	}
	t.setEnd(o, at)
	t.trim()
}

func (t *Tracker) setEnd(o *op, at int64) {
	if o.end != 0 && o.end <= at {
		return
	}
	if o.end == 0 {
		o.resolvedAt = t.cfg.Now().UnixNano()
		t.resolved = append(t.resolved, o)
	}
	o.end = at
}

// Interval records a model call or compaction of scope k from start to end (Unix ns). An
// interval already recorded (the same kind, start and end: an export retry) is not added
// twice. A zero start is taken as end (an instant).
func (t *Tracker) Interval(k pairing.ScopeKey, kind Kind, start, end int64) {
	if (kind != Model && kind != Compaction) || end <= 0 {
		return
	}
	if start <= 0 || start > end {
		start = end
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	sc := t.scope(k)
	for _, o := range sc.intervals {
		if o.kind == kind && o.start == start && o.end == end {
			return
		}
	}
	if len(sc.intervals) >= maxIntervalsInScope {
		t.forget(sc.intervals[0])
	}
	o := &op{kind: kind, key: k, start: start}
	o.elem = t.order.PushBack(o)
	sc.intervals = append(sc.intervals, o)
	t.setEnd(o, end)
	t.trim()
}

// forget removes an operation. Its entry in t.resolved, if any, becomes stale.
func (t *Tracker) forget(o *op) {
	if o.elem == nil {
		return
	}
	t.order.Remove(o.elem)
	o.elem = nil
	sc := t.scopes[o.key]
	if sc == nil {
		return
	}
	if o.kind == Call {
		if sc.calls[o.callID] == o {
			delete(sc.calls, o.callID)
		}
	} else {
		for i, x := range sc.intervals {
			if x == o {
				sc.intervals = append(sc.intervals[:i], sc.intervals[i+1:]...)
				break
			}
		}
	}
	if len(sc.calls) == 0 && len(sc.intervals) == 0 {
		delete(t.scopes, o.key)
	}
}

// trim applies the bounds: resolved operations past Retention, then the oldest beyond
// MaxOperations.
func (t *Tracker) trim() {
	cutoff := t.cfg.Now().UnixNano() - int64(t.cfg.Retention)
	n := 0
	for n < len(t.resolved) && t.resolved[n].resolvedAt <= cutoff {
		t.forget(t.resolved[n])
		t.resolved[n] = nil
		n++
	}
	if n > 0 {
		t.resolved = append(t.resolved[:0], t.resolved[n:]...)
	}
	for t.order.Len() > t.cfg.MaxOperations {
		t.forget(t.order.Front().Value.(*op))
	}
	if len(t.resolved) > 2*t.cfg.MaxOperations {
		live := t.resolved[:0]
		for _, o := range t.resolved {
			if o.elem != nil {
				live = append(live, o)
			}
		}
		clear(t.resolved[len(live):])
		t.resolved = live
	}
}

// Expire forgets the resolved operations past Retention. The tracker also does so on every
// update; Expire lets an idle tracker release memory.
func (t *Tracker) Expire() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.trim()
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
	for _, o := range sc.calls {
		if o.start == 0 || o.start > at || (o.end != 0 && o.end <= at) {
			continue
		}
		s.Tools++
		if s.Tools == 1 || o.start > s.Latest.Start || (o.start == s.Latest.Start && o.callID > s.Latest.CallID) {
			s.Latest = ActiveCall{CallID: o.callID, Tool: o.tool, Start: o.start}
		}
	}
	settle := int64(t.cfg.Settle)
	for _, o := range sc.intervals {
		if o.start <= at && at <= o.end+settle {
			switch o.kind {
			case Model:
				s.Model = true
			case Compaction:
				s.Compaction = true
			}
		}
	}
	return s
}
