// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// activity.go holds what a scope did besides its tool calls: the model calls and compactions
// the timeout classifier asks about (InFlightAt) and the anchor spans a synthetic span can be
// put under (Anchor). They hang off the scope like its calls: one scope table, one lifetime.
// A scope's activity is kept Config.ActivityRetention after it was last observed, and for
// another retention each time it expires while the scope still holds calls (an interrupted
// call's synthetic span needs its anchor); the activity of all scopes is bounded by
// Config.MaxActivity items, the scope observed (or kept) least recently losing its activity
// first. Both are applied from the head of one list of the scopes with activity, in that
// order.

package pairing

import (
	"cmp"
	"slices"
)

// ActivityKind says what an Activity reports.
type ActivityKind uint8

const (
	// ActivityModel: a model call ran over [Start, End] (specification section 4).
	ActivityModel ActivityKind = iota + 1
	// ActivityCompaction: a context compaction ran over [Start, End].
	ActivityCompaction
	// ActivityTurn: a span of one agent turn (an anchor for synthetic spans, specification
	// section 3).
	ActivityTurn
	// ActivityModelSpan: a span of one model request (an anchor).
	ActivityModelSpan
)

// Bounds per scope: model-call and compaction intervals (the most recent kept), and anchor
// spans of each kind (the most recent kept).
const (
	maxIntervalsInScope = 32
	maxAnchorsInScope   = 8
)

// Activity is something a scope did besides its tool calls, for Observe.
type Activity struct {
	Kind ActivityKind
	Key  ConversationKey
	// Start and End in Unix ns, record time. An interval with no Start, or a Start after its
	// End, is the instant End. Activities with no End are ignored.
	Start, End int64
	// ID identifies an anchor span (its trace ID, 16 bytes, then its span ID, 8): a span
	// seen again (an export retry) replaces its earlier copy.
	ID [24]byte
	// Anchor is what Anchor returns for an anchor span.
	Anchor any
}

// interval is a model call or compaction of a scope, intervals of one kind merged when they
// overlap or are less than Config.Linger apart (a stream of model events is one interval).
type interval struct {
	kind       ActivityKind
	start, end int64
}

// anchorSpan is an anchor span of a scope.
type anchorSpan struct {
	id         [24]byte
	start, end int64
	value      any
}

// activity is a scope's activity, listed in Engine.acts.
type activity struct {
	scope      *conversation
	intervals  []interval   // oldest first
	turns      []anchorSpan // oldest first
	models     []anchorSpan // oldest first
	seen       int64        // engine clock of the latest Observe
	prev, next *activity
}

// items is the number of intervals and anchors a counts against Config.MaxActivity.
func (a *activity) items() int { return len(a.intervals) + len(a.turns) + len(a.models) }

// actList is the list of the scopes' activities, least recently observed first.
type actList struct {
	head, tail *activity
	items      int // the items of every activity listed
}

func (l *actList) pushBack(a *activity) {
	a.prev, a.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = a
	} else {
		l.head = a
	}
	l.tail = a
}

func (l *actList) remove(a *activity) {
	if a.prev != nil {
		a.prev.next = a.next
	} else {
		l.head = a.next
	}
	if a.next != nil {
		a.next.prev = a.prev
	} else {
		l.tail = a.prev
	}
	a.prev, a.next = nil, nil
}

// Observe records a batch's activities under one lock, in order: intervals merge into the
// latest interval of their kind in the scope when they overlap it or start less than
// Config.Linger after it ended; anchors replace the copy of the same ID or are appended. The
// engine keeps its own copies of the keys' strings.
func (e *Engine) Observe(acts []Activity) {
	if len(acts) == 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.cfg.Clock.Now().UnixNano()
	for i := range acts {
		a := &acts[i]
		if a.End <= 0 || a.Kind < ActivityModel || a.Kind > ActivityModelSpan {
			continue
		}
		act := e.activityOf(a.Key, now)
		before := act.items()
		switch a.Kind {
		case ActivityModel, ActivityCompaction:
			act.addInterval(a.Kind, a.Start, a.End, int64(e.cfg.Linger))
		case ActivityTurn:
			act.turns = addAnchor(act.turns, a)
		case ActivityModelSpan:
			act.models = addAnchor(act.models, a)
		}
		e.acts.items += act.items() - before
	}
	for e.acts.items > e.cfg.MaxActivity && e.acts.head != nil {
		e.dropActivity(e.acts.head)
	}
}

// activityOf returns the activity of scope k, making it (and the scope) when there is none,
// and makes it the most recently observed. It leaves the scope's lastSeen alone: activity is
// not a sign of the scope's calls.
func (e *Engine) activityOf(k ConversationKey, now int64) *activity {
	sc := e.last
	if sc == nil || sc.key != k {
		if sc = e.conversations[k]; sc == nil {
			sc = e.conversationOf(k, now)
		}
		e.last = sc
	}
	act := sc.act
	if act == nil {
		act = &activity{scope: sc}
		sc.act = act
		sc.refs++
		e.acts.pushBack(act)
	} else if e.acts.tail != act {
		e.acts.remove(act)
		e.acts.pushBack(act)
	}
	act.seen = now
	return act
}

// addInterval merges [start, end] of kind into the latest interval of that kind when they
// overlap or are less than settle apart, else appends it, dropping the oldest interval
// beyond maxIntervalsInScope.
func (a *activity) addInterval(kind ActivityKind, start, end, settle int64) {
	if start <= 0 || start > end {
		start = end
	}
	for i := len(a.intervals) - 1; i >= 0; i-- {
		iv := &a.intervals[i]
		if iv.kind != kind {
			continue
		}
		if start <= iv.end+settle && iv.start <= end+settle {
			iv.start, iv.end = min(iv.start, start), max(iv.end, end)
			return
		}
		break // only the latest interval of the kind is merged into
	}
	if len(a.intervals) >= maxIntervalsInScope {
		a.intervals = append(a.intervals[:0], a.intervals[1:]...)
	}
	a.intervals = append(a.intervals, interval{kind: kind, start: start, end: end})
}

// addAnchor replaces the span of list with a's ID, or appends a, dropping the oldest beyond
// maxAnchorsInScope.
func addAnchor(list []anchorSpan, a *Activity) []anchorSpan {
	s := anchorSpan{id: a.ID, start: a.Start, end: a.End, value: a.Anchor}
	for i := range list {
		if list[i].id == a.ID {
			list[i] = s
			return list
		}
	}
	if len(list) >= maxAnchorsInScope {
		clear(list[:1])
		list = append(list[:0], list[1:]...)
	}
	return append(list, s)
}

// dropActivity forgets a scope's activity, and the scope when nothing else holds it.
func (e *Engine) dropActivity(a *activity) {
	e.acts.remove(a)
	e.acts.items -= a.items()
	sc := a.scope
	sc.act = nil
	sc.refs--
	if sc.refs <= 0 {
		e.forgetConversation(sc)
	}
}

// expireActivity forgets the activity of the scopes not observed for Config.ActivityRetention
// that hold no call. The caller asks Anchor where the synthetic span of an outcome goes after
// Tick returned it: a scope whose calls Tick just interrupted must keep its anchors, however far
// the clock moved since the last tick. The activity of a scope still holding a call is kept
// for another retention.
func (e *Engine) expireActivity(now int64) {
	if e.cfg.ActivityRetention <= 0 {
		return // New never leaves it so; a kept scope would come round again at once
	}
	cutoff := now - int64(e.cfg.ActivityRetention)
	for a := e.acts.head; a != nil && a.seen <= cutoff; a = e.acts.head {
		if a.scope.holdsCalls() {
			e.acts.remove(a)
			a.seen = now
			e.acts.pushBack(a)
			continue
		}
		e.dropActivity(a)
	}
}

// Anchor returns the anchor span of scope k to put the synthetic span of a call announced at
// at (Unix ns) under: the latest turn span that covers at; else the latest model-request span
// that covers it; else the latest model-request span that ended at most window (ns) before it
// (the request that announced the call, when the turn span was never exported because the
// agent was killed). A span of an earlier turn is never chosen when nothing of the call's own
// turn was seen. It returns the Anchor value observed with the span, and false when none fits.
func (e *Engine) Anchor(k ConversationKey, at, window int64) (any, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	sc := e.conversations[k]
	if sc == nil || sc.act == nil {
		return nil, false
	}
	a := sc.act
	for _, list := range [2][]anchorSpan{a.turns, a.models} {
		for i := len(list) - 1; i >= 0; i-- {
			if list[i].start <= at && at <= list[i].end {
				return list[i].value, true
			}
		}
	}
	best := -1
	for i, s := range a.models {
		if s.end <= at && at-s.end <= window && (best < 0 || s.end > a.models[best].end) {
			best = i
		}
	}
	if best < 0 {
		return nil, false
	}
	return a.models[best].value, true
}

// restoreActivity rebuilds the intervals and anchor spans of snap, the scope observed least
// recently first; activities of an unknown kind, with no end, or anchors without an Anchor
// value are skipped, a scope keeps its most recent maxIntervalsInScope intervals and
// maxAnchorsInScope anchors of each kind, and an anchor listed twice (by ID) is kept once.
func (e *Engine) restoreActivity(acts []ActivitySnapshot) {
	acts = slices.Clone(acts)
	slices.SortStableFunc(acts, func(a, b ActivitySnapshot) int { return cmp.Compare(a.Seen, b.Seen) })
	for i := range acts {
		s := &acts[i]
		anchor := s.Kind == ActivityTurn || s.Kind == ActivityModelSpan
		if (s.Kind != ActivityModel && s.Kind != ActivityCompaction && !anchor) || s.End <= 0 || (anchor && s.Anchor == nil) {
			continue
		}
		sc := e.conversations[s.Key]
		if sc == nil {
			sc = e.restoreConversation(s.Key, s.Seen)
		}
		a := e.activityOf(sc.key, s.Seen)
		if anchor {
			before := a.items()
			act := Activity{Kind: s.Kind, Key: sc.key, Start: s.Start, End: s.End, ID: s.ID, Anchor: s.Anchor}
			if s.Kind == ActivityTurn {
				a.turns = addAnchor(a.turns, &act)
			} else {
				a.models = addAnchor(a.models, &act)
			}
			e.acts.items += a.items() - before
			continue
		}
		if len(a.intervals) >= maxIntervalsInScope {
			a.intervals = append(a.intervals[:0], a.intervals[1:]...)
			e.acts.items--
		}
		start := s.Start
		if start <= 0 || start > s.End {
			start = s.End
		}
		a.intervals = append(a.intervals, interval{kind: s.Kind, start: start, end: s.End})
		e.acts.items++
	}
	for e.acts.items > e.cfg.MaxActivity && e.acts.head != nil {
		e.dropActivity(e.acts.head)
	}
}
