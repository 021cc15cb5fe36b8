// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package pairing

import (
	"cmp"
	"errors"
	"slices"
	"strings"
)

// CallState is the state of a call in a Snapshot.
type CallState uint8

const (
	// CallPending: announced, waiting for its result.
	CallPending CallState = iota + 1
	// CallWaiting: a result held while it waits for its use (Payload is the held record).
	CallWaiting
	// CallResolved: resolved and remembered (no payload).
	CallResolved
	// CallPendingHeld: pending, with a companion result held (Companion) waiting for the
	// call's main result.
	CallPendingHeld
)

// CallSnapshot is one call of the store, as Snapshot copies it and Restore rebuilds it.
// Times are Unix ns: UseTime and ResultTime are record times, Deadline and the scope's
// LastSeen are the engine clock (wall-clock time in production), so that deadlines keep
// counting while the process is down.
type CallSnapshot struct {
	State    CallState
	Key      Key
	ToolName string
	Step     string
	UseTime  int64
	// ResultTime is the held result's (or companion's) time, or the resolving result's.
	ResultTime int64
	Deadline   int64
	// Seq orders pending and waiting calls for eviction (oldest first).
	Seq    uint64
	Source uint8
	// Flags are the engine's entry flags (aborted, companion, rejected, match), opaque to
	// callers but for HasMatch.
	Flags uint8
	// Match is the match hash of a pending or resolved call's use (Event.Match), under which
	// a KindMatch result finds it, or the one of a KindMatch result held (CallWaiting) or
	// settled as orphan or standalone (CallResolved), whose Key has no CallID; 0 when none.
	// Set exactly when HasMatch reports true.
	Match uint64
	// Payload is the use's payload (pending calls) or the held result (waiting calls), as
	// converted by the Snapshot callback; Restore takes what the caller decoded.
	Payload any
	// Companion is the held companion result of a CallPendingHeld call.
	Companion any
	// UseSignal is the Signal of the call's uses while they came through one signal;
	// SignalUseTimes, once they came through both, each signal's earliest use time (Unix ns).
	UseSignal      uint8
	SignalUseTimes [2]int64
	// Reporters are the sources, besides Source, that reported the call (Resolution.Report):
	// a later record of one of them is a duplicate.
	Reporters []uint8
	// Reports are the records of further sources held with the result of a CallWaiting call,
	// released with it (see Resolution.Report).
	Reports []ReportSnapshot
}

// ReportSnapshot is a record of a further source held with a waiting result: its Source,
// whether it reports its call's abort, its record time and the start it shows (Unix ns, 0
// when none), and the record as the Snapshot callback converted it.
type ReportSnapshot struct {
	Source      uint8
	Aborted     bool
	Time, Start int64
	Payload     any
}

// HasMatch reports whether the call is listed under a match hash (Match):
// a codec stores Match for such calls only, and reads it back when the flags say so.
func (c *CallSnapshot) HasMatch() bool { return entryFlags(c.Flags)&flagMatch != 0 }

// ClosingSnapshot is a step boundary or session end waiting for Config.CloseDelay.
type ClosingSnapshot struct {
	Kind Kind
	Time int64 // record time, Unix ns
	Step string
}

// ConversationSnapshot is what the engine knows of one scope.
type ConversationSnapshot struct {
	Key      ConversationKey
	UsesSeen bool
	LastSeen int64 // engine clock, Unix ns
	// LastRecord is the latest record time (Unix ns) of the scope's events: where a call
	// expired, evicted or shut down ends (specification section 3).
	LastRecord int64
	// Closings are the scope's queued closings, sorted by Time.
	Closings []ClosingSnapshot
}

// QueuedClosing is an entry of the engine's FIFO of closing deadlines: the scope (an index
// into Snapshot.Scopes), the record time up to which it closes, and when (engine clock).
type QueuedClosing struct {
	Scope    int
	Time     int64
	Deadline int64
}

// ActivitySnapshot is a model call or compaction interval of a scope, or one of its anchor
// spans (see Observe). Start and End are record times, Seen the engine clock of the scope's
// latest Observe (Unix ns).
type ActivitySnapshot struct {
	Key              ConversationKey
	Kind             ActivityKind
	Start, End, Seen int64
	// ID and Anchor are an anchor span's (ActivityTurn, ActivityModelSpan): its trace and
	// span ID (Activity.ID) and the value Anchor returns for it, which Restore takes as the
	// caller decoded it (an anchor without one is not restored).
	ID     [24]byte
	Anchor any
}

// Snapshot is the whole state of an engine at an instant: every call it holds (pending,
// waiting and resolved, each list in its order), its scopes with their queued closings, the
// FIFO of closing deadlines, the hashes of forgotten scopes that saw a use (oldest first),
// and the scopes' model-call and compaction intervals and anchor spans (least recently observed
// scope first). Counters are not part of it.
type Snapshot struct {
	Calls             []CallSnapshot
	Conversations     []ConversationSnapshot
	Queue             []QueuedClosing
	UsedConversations []uint64
	Activity          []ActivitySnapshot
}

// Snapshot copies the engine's state under its lock. held is called, under the lock, for
// every held result record (waiting results and companions) and returns what the snapshot
// keeps of it: a held record may be released and changed by another goroutine as soon as
// the lock is released, so the caller serialises it here. Use payloads are kept as they are
// (the caller must treat them as read-only). held may be nil (payloads kept as they are).
func (e *Engine) Snapshot(held func(any) any) *Snapshot {
	e.mu.Lock()
	defer e.mu.Unlock()
	conv := func(p any) any {
		if held == nil || p == nil {
			return p
		}
		return held(p)
	}
	s := &Snapshot{Calls: make([]CallSnapshot, 0, e.pending.n+e.waiting.n+e.resolved.n)}
	scopeIdx := make(map[*conversation]int, len(e.conversations))
	for _, sc := range e.conversations {
		if !sc.holdsCalls() && len(sc.closings) == 0 && !e.sawUse(sc) {
			// Held by its activity alone, which Activity carries with its key.
			continue
		}
		scopeIdx[sc] = len(s.Conversations)
		ss := ConversationSnapshot{Key: sc.key, UsesSeen: e.sawUse(sc), LastSeen: sc.lastSeen, LastRecord: sc.lastRecord}
		for _, q := range sc.closings {
			ss.Closings = append(ss.Closings, ClosingSnapshot{Kind: q.kind, Time: q.time, Step: deref(q.step)})
		}
		s.Conversations = append(s.Conversations, ss)
	}
	for _, l := range []*fifo{&e.pending, &e.waiting} {
		for ent := l.head; ent != nil; ent = ent.next {
			s.Calls = append(s.Calls, e.callSnapshot(ent, conv))
		}
	}
	for i := range e.resolved.n {
		rc := e.resolved.at(e.resolved.pos(i))
		if rc.ext != nil {
			s.Calls = append(s.Calls, e.callSnapshot(rc.ext, conv))
			continue
		}
		v := rc.view()
		s.Calls = append(s.Calls, e.callSnapshot(&v, conv))
	}
	for ci, chunk := range e.closings.chunks {
		start := 0
		if ci == 0 {
			start = e.closings.head
		}
		for _, c := range chunk[start:] {
			if i, ok := scopeIdx[c.scope]; ok && c.scope.stored {
				s.Queue = append(s.Queue, QueuedClosing{Scope: i, Time: c.time, Deadline: c.deadline})
			}
		}
	}
	s.UsedConversations = e.usedConversations.appendOldestFirst(s.UsedConversations)
	for a := e.acts.head; a != nil; a = a.next {
		for _, iv := range a.intervals {
			s.Activity = append(s.Activity, ActivitySnapshot{Key: a.scope.key, Kind: iv.kind, Start: iv.start, End: iv.end, Seen: a.seen})
		}
		for _, list := range [...]struct {
			kind  ActivityKind
			spans []anchorSpan
		}{{ActivityTurn, a.turns}, {ActivityModelSpan, a.models}} {
			for _, sp := range list.spans {
				s.Activity = append(s.Activity, ActivitySnapshot{Key: a.scope.key, Kind: list.kind, Start: sp.start, End: sp.end, Seen: a.seen, ID: sp.id, Anchor: sp.value})
			}
		}
	}
	return s
}

// HeldRef identifies a held result without a call ID (KindMatch), which no call key names,
// across a restart: its scope and its place in the store (CallSnapshot.Seq, Resolution.HeldSeq).
type HeldRef struct {
	Scope ConversationKey
	Seq   uint64
}

// RestoreStats says what Restore rebuilt.
type RestoreStats struct {
	// Pending calls (including those whose companion is held) and Waiting held results
	// (waiting results and companions).
	Pending, Waiting int
	// Resolved calls remembered, and Replayed resolutions applied from the resolution
	// record (calls resolved after the snapshot was taken).
	Resolved, Replayed int
	// HeldReports are the records of further sources held with waiting results.
	HeldReports int
}

// Restore rebuilds the state of snap in an engine that holds nothing yet, then applies
// resolved: the keys of calls resolved after snap was taken (they become resolved calls,
// their held records dropped, without any outcome), and released: the held results without
// a call ID released after snap was taken (dropped, without any outcome). Calls and closings whose deadlines have
// passed stay in the store: the next Tick expires them as if the engine had run throughout.
// The counters start from the state restored: uses seen = pending, results seen = waiting,
// so conservation holds. It returns an error when the engine is not empty.
func (e *Engine) Restore(snap *Snapshot, resolved []Key, released ...HeldRef) (RestoreStats, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.pending.n+e.waiting.n+e.resolved.n > 0 || len(e.conversations) > 0 || !e.closings.empty() {
		return RestoreStats{}, errors.New("pairing: restore into an engine that is not empty")
	}
	var rs RestoreStats
	// 1. The scopes, with their queued closings; 2. the calls; 3. the activity; 4. the calls
	// resolved since the snapshot; 5. the scopes no call or closing needs, forgotten; 6. the
	// counts.
	scopes := e.restoreScopes(snap)
	rs.Replayed += e.restoreCalls(snap.Calls, released)
	e.restoreActivity(snap.Activity)
	now := e.cfg.Clock.Now().UnixNano()
	for _, k := range resolved {
		if e.markResolved(k, now) {
			rs.Replayed++
		}
	}
	// Scopes made for closings alone that the snapshot had no calls or closings for are not
	// kept (a live engine forgets a scope at zero refs).
	for _, sc := range scopes {
		if sc.refs <= 0 && sc.stored {
			e.forgetConversation(sc)
		}
	}
	e.restoreCounts(&rs)
	e.trimResolved()
	e.recountHeld()
	return rs, nil
}

// restoreScopes makes the scopes of snap (with their queued closings, sorted by time), the
// closing queue and the memory of forgotten scopes that saw a use, and returns the scopes in
// the order of snap.Conversations (the closing queue's Scope indexes).
func (e *Engine) restoreScopes(snap *Snapshot) []*conversation {
	for _, h := range snap.UsedConversations {
		e.usedConversations.add(h)
	}
	scopes := make([]*conversation, len(snap.Conversations))
	for i := range snap.Conversations {
		ss := &snap.Conversations[i]
		// A key listed twice (a state this engine never writes) is one scope.
		sc := e.conversations[ss.Key]
		if sc == nil {
			sc = e.restoreConversation(ss.Key, ss.LastSeen)
		}
		sc.lastSeen = max(sc.lastSeen, ss.LastSeen)
		sc.usesSeen = sc.usesSeen || ss.UsesSeen
		sc.lastRecord = max(sc.lastRecord, ss.LastRecord)
		for _, c := range ss.Closings {
			sc.closings = append(sc.closings, queuedClosing{kind: c.Kind, time: c.Time, step: e.step(c.Step)})
			sc.refs++
			e.closingsQueued++
		}
		slices.SortStableFunc(sc.closings, func(a, b queuedClosing) int { return cmp.Compare(a.time, b.time) })
		scopes[i] = sc
	}
	for _, q := range snap.Queue {
		if q.Scope >= 0 && q.Scope < len(scopes) {
			e.closings.push(closing{scope: scopes[q.Scope], time: q.Time, deadline: q.Deadline})
		}
	}
	return scopes
}

// restoreCalls puts the calls of a snapshot back in their lists and side tables, skipping
// those known already and the held results without a call ID that were released since the
// snapshot (released), which it returns the number of.
func (e *Engine) restoreCalls(calls []CallSnapshot, released []HeldRef) (replayed int) {
	gone := make(map[HeldRef]struct{}, len(released))
	for _, h := range released {
		gone[h] = struct{}{}
	}
	for i := range calls {
		c := &calls[i]
		// A result without a call ID (KindMatch), held or settled, is known by its scope and
		// Match only.
		unkeyed := c.Key.CallID == "" && (c.State == CallWaiting || c.State == CallResolved) && c.HasMatch() && c.Match != 0
		if !unkeyed && (c.Key.CallID == "" || e.lookup(c.Key) != nil) {
			continue
		}
		if _, gone := gone[HeldRef{Scope: c.Key.ConversationKey(), Seq: c.Seq}]; unkeyed && c.State == CallWaiting && gone {
			replayed++
			continue
		}
		e.restoreCall(c, unkeyed)
	}
	return replayed
}

// restoreCall makes the entry of one call of a snapshot, unkeyed when it is a result without
// a call ID, and links it where its state says.
func (e *Engine) restoreCall(c *CallSnapshot, unkeyed bool) {
	sc := e.conversations[c.Key.ConversationKey()]
	if sc == nil {
		sc = e.restoreConversation(c.Key.ConversationKey(), 0)
	}
	ent := &entry{
		scope: sc, callID: strings.Clone(c.Key.CallID), toolName: e.name(c.ToolName), step: e.step(c.Step),
		useTime: c.UseTime, resultTime: c.ResultTime, deadline: c.Deadline,
		source: c.Source, flags: entryFlags(c.Flags) &^ flagMatch, payload: c.Payload,
	}
	var l *fifo
	switch c.State {
	case CallPending:
		ent.state, l = statePending, &e.pending
	case CallPendingHeld:
		ent.state, l = statePendingHeld, &e.waiting
		e.companions[ent] = c.Companion
	case CallWaiting:
		ent.state, l = stateWaiting, &e.waiting
	case CallResolved:
		ent.state, ent.payload = stateResolved, nil
	default:
		return
	}
	switch {
	case l == nil:
		// Resolved: remembered once its listing and side tables are back (remember).
	case unkeyed:
		e.attach(ent)
		l.pushBack(ent)
	default:
		e.insert(ent, l)
	}
	ent.seq = c.Seq
	e.seq = max(e.seq, c.Seq)
	if ent.state == statePending || ent.state == statePendingHeld {
		e.linkConversation(ent)
	}
	if c.HasMatch() {
		e.listMatch(ent, c.Match)
	}
	for _, src := range c.Reporters {
		e.addReporter(ent, src)
	}
	ent.useSig = c.UseSignal
	if c.SignalUseTimes != [2]int64{} {
		e.signalUses[ent] = c.SignalUseTimes
	}
	if ent.state == stateWaiting {
		for _, h := range c.Reports {
			e.addReporter(ent, h.Source)
			e.heldReports[ent] = append(e.heldReports[ent], heldReport{payload: h.Payload, time: h.Time, start: h.Start, source: h.Source, aborted: h.Aborted})
		}
	}
	if ent.state == stateResolved {
		sc.refs++
		e.remember(ent)
	}
}

// restoreCounts counts what Restore put back into rs and the engine's stats: the restored
// pending uses and held results are the uses and results seen (the conservation of section 7
// holds from there).
func (e *Engine) restoreCounts(rs *RestoreStats) {
	for ent := e.pending.head; ent != nil; ent = ent.next {
		rs.Pending++
	}
	for ent := e.waiting.head; ent != nil; ent = ent.next {
		rs.Waiting++
		if ent.state == statePendingHeld {
			rs.Pending++
		}
	}
	rs.Resolved = e.resolved.n
	e.stats.Pending, e.stats.Waiting = rs.Pending, rs.Waiting
	e.stats.HeldReports = 0
	for _, hs := range e.heldReports {
		e.stats.HeldReports += len(hs)
	}
	rs.HeldReports = e.stats.HeldReports
	e.stats.UsesSeen, e.stats.ResultsSeen = uint64(rs.Pending), uint64(rs.Waiting)
}

// restoreConversation makes the scope of key k, stored in the engine, last seen at lastSeen.
func (e *Engine) restoreConversation(k ConversationKey, lastSeen int64) *conversation {
	k = ConversationKey{Tenant: e.tenant(k.Tenant), Conversation: strings.Clone(k.Conversation)}
	sc := &conversation{key: k, usesSeen: e.usedConversations.has(e.conversationHash(k)), stored: true, lastSeen: lastSeen, load: e.loadOf(k.Tenant)}
	e.conversations[k] = sc
	return sc
}
