// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// persist_added.go holds what the processor's record of a batch between checkpoints carries and how
// Restore replays it: what one Process call added to the state, as a Snapshot of its own
// (Added, copying calls as Snapshot does: callSnapshot), such snapshots merged into the full
// one they follow (Merge), and the calls the records resolved (markResolved).

package pairing

import (
	"slices"
	"strings"
)

// Added copies, under the engine's lock, what the events evs of one Process call (their
// Verdicts set) and the activities acts of the same batch added to the state, for a record
// written before the batch's records leave the processor:
//
//   - Calls: the calls whose use in evs is now pending (VerdictPending) and still pending,
//     as CallPending with their use payload (a held companion is not copied);
//   - Conversations: the scopes of those calls, and of the step boundaries and session ends evs
//     queued, each with these closings (ConversationSnapshot.Closings) and a Queue entry per
//     closing, due Config.CloseDelay from now;
//   - Activity: the anchor spans of acts (ActivityTurn, ActivityModelSpan), seen now.
//
// Model-call and compaction intervals are not copied. It returns nil when there is nothing
// to copy. Use payloads are kept as they are (the caller must treat them as read-only).
func (e *Engine) Added(evs []Event, acts []Activity) *Snapshot {
	return e.AddedBatch(evs, acts, nil, nil)
}

// AddedBatch is Added that also copies, so that a crash right after the batch neither
// forgets nor changes them:
//
//   - the calls res resolved (those with a call ID, but duplicates), as CallResolved with what
//     a checkpoint keeps of a resolved call (the source and reporters that answered it, its
//     orphan and standalone flags, its use times), and their scopes (whether they saw a use):
//     after a restart a further report of the call gets the outcome it would have had, and a
//     result of the scope whose use never came is an orphan, not standalone;
//   - when conv is set, the results with a call ID evs held (VerdictHeld) and still held, as CallWaiting with
//     their records converted by conv (as Snapshot does), the records of other sources held
//     with them included: a held result whose batch was acknowledged survives a crash.
func (e *Engine) AddedBatch(evs []Event, acts []Activity, res []Resolution, conv func(any) any) *Snapshot {
	var anchors []ActivitySnapshot
	for i := range acts {
		a := &acts[i]
		if (a.Kind == ActivityTurn || a.Kind == ActivityModelSpan) && a.End > 0 {
			anchors = append(anchors, ActivitySnapshot{Key: a.Key, Kind: a.Kind, Start: a.Start, End: a.End, ID: a.ID, Anchor: a.Anchor})
		}
	}
	pending := 0
	for i := range evs {
		if v := evs[i].Verdict; v == VerdictPending || (v == VerdictHeld && conv != nil) {
			pending++
		}
	}
	resolved := 0
	for i := range res {
		if res[i].Outcome.Props().Settles && res[i].Key.CallID != "" {
			resolved++
		}
	}
	if pending == 0 && resolved == 0 && len(anchors) == 0 {
		return nil
	}
	b := addedBuilder{e: e, s: &Snapshot{Activity: anchors}}
	if pending+resolved > 0 {
		b.s.Calls = make([]CallSnapshot, 0, pending+resolved)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	b.now = e.cfg.Clock.Now().UnixNano()
	for i := range b.s.Activity {
		b.s.Activity[i].Seen = b.now
	}
	for i := range evs {
		b.addEvent(&evs[i], conv)
	}
	for i := range res {
		b.addResolved(&res[i])
	}
	if len(b.s.Calls)+len(b.s.Conversations)+len(b.s.Activity) == 0 {
		return nil
	}
	return b.s
}

// addedBuilder builds the Snapshot of AddedBatch, under the engine's lock: each scope once,
// in the order its calls and closings come.
type addedBuilder struct {
	e        *Engine
	s        *Snapshot
	now      int64
	scopeIdx map[*conversation]int
	copied   map[*entry]bool // the waiting calls copied, each once
}

// scopeOf returns the index of sc's ConversationSnapshot in the snapshot, adding it first.
func (b *addedBuilder) scopeOf(sc *conversation) int {
	if i, ok := b.scopeIdx[sc]; ok {
		return i
	}
	if b.scopeIdx == nil {
		b.scopeIdx = map[*conversation]int{}
	}
	b.scopeIdx[sc] = len(b.s.Conversations)
	b.s.Conversations = append(b.s.Conversations, ConversationSnapshot{Key: sc.key, UsesSeen: b.e.sawUse(sc), LastSeen: sc.lastSeen, LastRecord: sc.lastRecord})
	return len(b.s.Conversations) - 1
}

// noHeld converts no held record: the calls AddedBatch copies as pending or resolved keep
// none.
func noHeld(any) any { return nil }

// addEvent copies what event ev of the batch left: a result still held (with conv set), a
// call left pending, a closing queued.
func (b *addedBuilder) addEvent(ev *Event, conv func(any) any) {
	e := b.e
	switch {
	case ev.Verdict == VerdictHeld && conv != nil:
		ent := e.lookup(ev.Key)
		if ent == nil || ent.state != stateWaiting || b.copied[ent] {
			return
		}
		if b.copied == nil {
			b.copied = map[*entry]bool{}
		}
		b.copied[ent] = true
		b.scopeOf(ent.scope)
		b.s.Calls = append(b.s.Calls, e.callSnapshot(ent, conv))
		return
	case ev.Verdict != VerdictPending:
		return
	}
	switch ev.Kind {
	case KindBoundary, KindSessionEnd:
		sc := e.conversations[ev.Key.ConversationKey()]
		if sc == nil {
			return
		}
		j := b.scopeOf(sc)
		b.s.Conversations[j].Closings = append(b.s.Conversations[j].Closings, ClosingSnapshot{Kind: ev.Kind, Time: ev.Time, Step: ev.Step})
		b.s.Queue = append(b.s.Queue, QueuedClosing{Scope: j, Time: ev.Time, Deadline: b.now + int64(e.cfg.CloseDelay)})
	default:
		ent := e.lookup(ev.Key)
		if ent == nil || (ent.state != statePending && ent.state != statePendingHeld) {
			return
		}
		c := e.callSnapshot(ent, noHeld)
		c.State, c.Companion = CallPending, nil
		b.scopeOf(ent.scope)
		b.s.Calls = append(b.s.Calls, c)
	}
}

// addResolved copies the call resolution r settled, as the memory of resolved calls keeps it.
func (b *addedBuilder) addResolved(r *Resolution) {
	e := b.e
	if !r.Outcome.Props().Settles || r.Key.CallID == "" {
		return
	}
	p, ok := e.resolved.find(uint32(e.hash(r.Key)), r.Key)
	if !ok {
		return
	}
	rc := e.resolved.at(p)
	ent := rc.ext
	if ent == nil {
		v := rc.view()
		ent = &v
	}
	c := e.callSnapshot(ent, noHeld)
	c.Payload, c.Companion, c.Reports = nil, nil, nil
	if rc.scope != nil {
		b.scopeOf(rc.scope)
	}
	b.s.Calls = append(b.s.Calls, c)
}

// Merge returns snap with the additions adds (Added, in the order they were made) merged in,
// for Restore: snap is a full snapshot (nil for none) taken no later than the first addition
// it does not hold. Calls are appended (Restore keeps the first copy of a key, so a call of
// snap wins over a later copy, and a resolved call over a pending one); scopes listed in snap
// take the additions' closings they do not hold already (same kind, time and step) with
// their Queue entries, and the latest LastSeen and LastRecord; other scopes are appended;
// activity is appended (Restore keeps one copy of an anchor). snap is modified in place.
func Merge(snap *Snapshot, adds ...*Snapshot) *Snapshot {
	if snap == nil {
		snap = &Snapshot{}
	}
	var scopeIdx map[ConversationKey]int
	// The additions' resolved calls come before every other copy, the latest addition's
	// first: Restore keeps the first copy of a key, and a call an addition resolved was
	// resolved after the snapshot and after every earlier addition (a checkpoint's or an
	// earlier record's pending copy of it is older).
	var resolvedFirst []CallSnapshot
	for i := len(adds) - 1; i >= 0; i-- {
		if adds[i] == nil {
			continue
		}
		for _, c := range adds[i].Calls {
			if c.State == CallResolved {
				resolvedFirst = append(resolvedFirst, c)
			}
		}
	}
	if len(resolvedFirst) > 0 {
		snap.Calls = append(resolvedFirst, snap.Calls...)
	}
	for _, a := range adds {
		if a == nil {
			continue
		}
		for _, c := range a.Calls {
			if c.State != CallResolved {
				snap.Calls = append(snap.Calls, c)
			}
		}
		snap.Activity = append(snap.Activity, a.Activity...)
		if len(a.Conversations) == 0 {
			continue
		}
		if scopeIdx == nil {
			scopeIdx = make(map[ConversationKey]int, len(snap.Conversations)+len(a.Conversations))
			for i := range snap.Conversations {
				scopeIdx[snap.Conversations[i].Key] = i
			}
		}
		// where[i] is the index in snap of a's scope i; added[i] its closings new to snap,
		// each taken by the first Queue entry of its time.
		where := make([]int, len(a.Conversations))
		added := make([][]ClosingSnapshot, len(a.Conversations))
		for i := range a.Conversations {
			as := &a.Conversations[i]
			j, ok := scopeIdx[as.Key]
			if !ok {
				j = len(snap.Conversations)
				scopeIdx[as.Key] = j
				snap.Conversations = append(snap.Conversations, ConversationSnapshot{Key: as.Key})
			}
			where[i] = j
			ss := &snap.Conversations[j]
			ss.UsesSeen = ss.UsesSeen || as.UsesSeen
			ss.LastSeen, ss.LastRecord = max(ss.LastSeen, as.LastSeen), max(ss.LastRecord, as.LastRecord)
			for _, c := range as.Closings {
				if !hasClosing(ss.Closings, c) {
					ss.Closings = append(ss.Closings, c)
					added[i] = append(added[i], c)
				}
			}
		}
		for _, q := range a.Queue {
			if q.Scope < 0 || q.Scope >= len(a.Conversations) {
				continue
			}
			list := added[q.Scope]
			for k := range list {
				if list[k].Time == q.Time {
					snap.Queue = append(snap.Queue, QueuedClosing{Scope: where[q.Scope], Time: q.Time, Deadline: q.Deadline})
					added[q.Scope] = append(list[:k:k], list[k+1:]...)
					break
				}
			}
		}
	}
	return snap
}

// hasClosing reports whether list holds a closing of c's kind, time and step.
func hasClosing(list []ClosingSnapshot, c ClosingSnapshot) bool {
	for _, l := range list {
		if l == c {
			return true
		}
	}
	return false
}

// callSnapshot copies ent, its held records converted by conv (see Snapshot). The caller
// holds the lock.
func (e *Engine) callSnapshot(ent *entry, conv func(any) any) CallSnapshot {
	c := CallSnapshot{
		Key: ent.key(), ToolName: ent.tool(), Step: ent.stepID(),
		UseTime: ent.useTime, ResultTime: ent.resultTime, Deadline: ent.deadline,
		Seq: ent.seq, Source: ent.source, Flags: uint8(ent.flags),
	}
	if ent.has(flagMatch) {
		c.Match = e.matchHash(ent)
	}
	if rs, ok := e.reported[ent]; ok {
		c.Reporters = slices.Clone(rs.src[:rs.n])
	}
	c.UseSignal, c.SignalUseTimes = ent.useSig, e.signalUses[ent]
	for _, h := range e.heldReports[ent] {
		c.Reports = append(c.Reports, ReportSnapshot{Source: h.source, Aborted: h.aborted, Time: h.time, Start: h.start, Payload: conv(h.payload)})
	}
	switch ent.state {
	case statePending:
		c.State, c.Payload = CallPending, ent.payload
	case statePendingHeld:
		c.State, c.Payload, c.Companion = CallPendingHeld, ent.payload, conv(e.companions[ent])
	case stateWaiting:
		c.State, c.Payload = CallWaiting, conv(ent.payload)
	case stateResolved:
		c.State = CallResolved
	}
	return c
}

// markResolved makes call k resolved, whatever its state, dropping any held record: the call
// was resolved (and its outcome sent downstream) after the snapshot was restored from. It
// reports whether anything changed.
func (e *Engine) markResolved(k Key, now int64) bool {
	ent := e.lookup(k)
	switch {
	case ent == nil:
		sc := e.conversations[k.ConversationKey()]
		if sc == nil {
			sc = e.restoreConversation(k.ConversationKey(), now)
		}
		e.insertResolved(&entry{scope: sc, callID: strings.Clone(k.CallID)}, now)
	case ent.state == statePending || ent.state == statePendingHeld:
		delete(e.companions, ent)
		e.removePending(ent)
		e.toResolved(ent, now)
	case ent.state == stateWaiting:
		e.waiting.remove(ent)
		e.stats.HeldReports -= len(e.heldReports[ent])
		delete(e.heldReports, ent)
		e.toResolved(ent, now)
	default:
		return false
	}
	return true
}
