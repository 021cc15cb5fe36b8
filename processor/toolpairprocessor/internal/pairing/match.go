// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package pairing

import "strings"

// Results without a call ID (KindMatch) find their call by scope and match hash. Each
// (scope, match) has a matchList of four lists of the entries listed under it:
//
//   - pending: the pending calls whose use had that match, in use-time order (the first to
//     arrive first among equal times); a result pairs the head;
//   - resolved: those calls once resolved, in order of resolution, for as long as the
//     resolved call itself is remembered (Config.MaxResolved, Config.ResolvedRetention), so
//     that another result of the same match that finds no pending call is a duplicate;
//   - held: the results that found neither, held for orphan_grace in order of arrival; a
//     use of that match pairs the head;
//   - settled: those results once released as orphan or standalone, remembered as resolved
//     calls are: as a result released so resolves its call, a use of that match arriving
//     later, when no result is held, takes the head as its call and is a repeat, and
//     another copy of the result is a duplicate.
//
// Every operation on a list is O(1) but the sorted insertion of a use that arrives after
// a later use of the same match (it walks back from the tail past the later ones).

// matchKey locates a matchList.
type matchKey struct {
	scope *conversation
	match uint64
}

// matchNode places one entry in the list of its matchList that its state says (see in).
type matchNode struct {
	ent        *entry
	list       *matchList
	prev, next *matchNode
}

// in returns the list of n's matchList that n is in, by its entry's state and call ID:
// pending calls (also those whose companion is held), resolved calls, held results, or
// settled results (resolved, without a call ID).
func (n *matchNode) in() *nodeList {
	switch n.ent.state {
	case statePending, statePendingHeld:
		return &n.list.pending
	case stateResolved:
		if n.ent.callID == "" {
			return &n.list.settled
		}
		return &n.list.resolved
	}
	return &n.list.held
}

// nodeList is a doubly linked list of matchNodes.
type nodeList struct {
	head, tail *matchNode
}

// matchList is the entries listed under one matchKey.
type matchList struct {
	key                              matchKey
	pending, resolved, held, settled nodeList
}

func (l *nodeList) pushBack(n *matchNode) { l.insertAfter(n, l.tail) }

// insertAfter links n after at (at the front when at is nil).
func (l *nodeList) insertAfter(n, at *matchNode) {
	n.prev = at
	if at == nil {
		n.next = l.head
		l.head = n
	} else {
		n.next = at.next
		at.next = n
	}
	if n.next != nil {
		n.next.prev = n
	} else {
		l.tail = n
	}
}

func (l *nodeList) remove(n *matchNode) {
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		l.head = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else {
		l.tail = n.prev
	}
	n.prev, n.next = nil, nil
}

// insertByUse links n, a pending call, into l after the calls whose use is at or before its
// own.
func (l *nodeList) insertByUse(n *matchNode) {
	at := l.tail
	for at != nil && at.ent.useTime > n.ent.useTime {
		at = at.prev
	}
	l.insertAfter(n, at)
}

func (m *matchList) empty() bool {
	return m.pending.head == nil && m.resolved.head == nil && m.held.head == nil && m.settled.head == nil
}

// matchList returns the list of (sc, m), made when missing.
func (e *Engine) matchList(sc *conversation, m uint64) *matchList {
	k := matchKey{scope: sc, match: m}
	l := e.matches[k]
	if l == nil {
		l = &matchList{key: k}
		e.matches[k] = l
	}
	return l
}

// listMatch lists ent under its scope and match m in the list of its state (pending,
// resolved or a held matched result). Nothing when m is 0 or ent is listed already.
func (e *Engine) listMatch(ent *entry, m uint64) {
	if m == 0 || ent.has(flagMatch) {
		return
	}
	n := &matchNode{ent: ent, list: e.matchList(ent.scope, m)}
	if l := n.in(); l == &n.list.pending {
		l.insertByUse(n)
	} else {
		l.pushBack(n)
	}
	e.matchOf[ent] = n
	ent.set(flagMatch, true)
}

// addMatch lists the pending call ent under its use's Match m (nothing when m is 0).
func (e *Engine) addMatch(ent *entry, m uint64) { e.listMatch(ent, m) }

// matchHash returns the match hash ent is listed under, 0 when none.
func (e *Engine) matchHash(ent *entry) uint64 {
	if n := e.matchOf[ent]; n != nil {
		return n.list.key.match
	}
	return 0
}

// relistMatch moves the pending call ent to its place after its use time changed (a record
// of the call showing an earlier start, or the first to show one).
func (e *Engine) relistMatch(ent *entry) {
	n := e.matchOf[ent]
	if n == nil {
		return
	}
	if (n.prev == nil || n.prev.ent.useTime <= ent.useTime) && (n.next == nil || ent.useTime <= n.next.ent.useTime) {
		return
	}
	l := n.in()
	l.remove(n)
	l.insertByUse(n)
}

// matchResolvedCall moves the listed call ent, pending until now (its state not changed
// yet), to the resolved list of its match.
func (e *Engine) matchResolvedCall(ent *entry) {
	n := e.matchOf[ent]
	if n == nil {
		return
	}
	n.list.pending.remove(n)
	n.list.resolved.pushBack(n)
}

// unlistMatch takes ent out of its match's lists, dropping the list once empty.
func (e *Engine) unlistMatch(ent *entry) {
	n := e.matchOf[ent]
	delete(e.matchOf, ent)
	ent.set(flagMatch, false)
	if n == nil {
		return
	}
	n.in().remove(n)
	if n.list.empty() {
		delete(e.matches, n.list.key)
	}
}

// matchResult applies a KindMatch result. It pairs the pending call of its scope with the
// same Match whose use is the earliest. Without one, the resolved call listed under the Match
// (the most recently resolved) takes it as a further report when its source has not reported
// that call (the tool span of a call that the next model request's history resolved), and as a
// duplicate otherwise (an export retry of a tool span). Otherwise it is held (the hold
// callback) for orphan_grace under its scope and Match, waiting for its use, and settled as
// orphan or standalone when it cannot be held or its Match is 0 (then nothing is remembered of
// it: a Match of 0 finds nothing).
func (e *Engine) matchResult(ev *Event, now int64, hold func(*Event) any, out []Resolution) []Resolution {
	ev.Verdict = VerdictResolved
	sc := e.conversations[ev.Key.ConversationKey()]
	var l *matchList
	if sc != nil {
		sc.saw(now, ev.Time)
		if ev.Match != 0 {
			l = e.matches[matchKey{scope: sc, match: ev.Match}]
		}
	}
	if l != nil {
		if n := l.pending.head; n != nil {
			e.stats.ResultsSeen++
			ent := n.ent
			own(ev, ent)
			dup, held := e.takeCompanion(ent)
			r := e.pairPending(ent, ev, now)
			r.ResultRef = ev.Ref
			r.Matched = true
			out = append(out, r)
			if held {
				out = append(out, dup)
			}
			return out
		}
		n := l.resolved.tail
		if n != nil && n.ent.answered() && !e.reportedBy(n.ent, ev.Source) {
			own(ev, n.ent)
			return append(out, e.report(n.ent, ev))
		}
		if n == nil {
			n = l.settled.tail
		}
		if n != nil {
			e.stats.ResultsSeen++
			own(ev, n.ent)
			return append(out, e.duplicate(n.ent, ev))
		}
	}
	e.stats.ResultsSeen++
	var held any
	if ev.Match != 0 {
		held = e.callHold(hold, ev)
	}
	if held == nil {
		// Nothing can match it, or the record cannot wait: it is settled at once.
		r := Resolution{Key: ev.Key, ToolName: ev.ToolName, ResultTime: ev.Time, UseRef: -1, ResultRef: ev.Ref, Matched: true}
		if ev.Match == 0 {
			usesSeen := sc != nil && e.sawUse(sc)
			if sc == nil {
				usesSeen = e.usedConversations.has(e.conversationHash(ev.Key.ConversationKey()))
			}
			e.settleUnmatched(&r, usesSeen, true, ev.aborts())
			return append(out, r)
		}
		sc = e.conversationOf(ev.Key.ConversationKey(), now)
		sc.saw(now, ev.Time)
		ownConversation(ev, sc)
		e.settleUnmatched(&r, e.sawUse(sc), true, ev.aborts())
		ent := &entry{scope: sc, toolName: e.name(ev.ToolName), useTime: ev.Start, resultTime: ev.Time, state: stateResolved}
		e.firstReport(ent, ev.Source, r.Outcome)
		e.attach(ent)
		e.listMatch(ent, ev.Match) // settled, before toResolved, which may forget it at once
		e.toResolved(ent, now)
		return append(out, r)
	}
	// Make room before looking the scope up: an eviction may forget the scope.
	out = e.makeRoom(now, out, ev.Key.Tenant)
	sc = e.conversationOf(ev.Key.ConversationKey(), now)
	sc.saw(now, ev.Time)
	ent := &entry{scope: sc, toolName: e.name(ev.ToolName)}
	e.attach(ent)
	ownConversation(ev, sc)
	e.holdResult(ent, ev, held, now)
	e.listMatch(ent, ev.Match)
	e.stats.Waiting++
	return out
}

// useMatched pairs the new call of use ev with the result held under its scope and Match
// that arrived first, when there is one, and reports whether it did. h is ev's index hash.
func (e *Engine) useMatched(ev *Event, h uint64, now int64, out []Resolution) ([]Resolution, bool) {
	if ev.Match == 0 {
		return out, false
	}
	sc := e.conversations[ev.Key.ConversationKey()]
	if sc == nil {
		return out, false
	}
	l := e.matches[matchKey{scope: sc, match: ev.Match}]
	if l == nil {
		return out, false
	}
	if l.held.head == nil {
		if l.settled.head == nil {
			return out, false
		}
		return e.adoptSettled(l.settled.head, ev, h, now, out), true
	}
	ent := l.held.head.ent
	e.stats.UsesSeen++
	e.stats.Waiting--
	sc.saw(now, ev.Time)
	sc.usesSeen = true
	e.waiting.remove(ent)
	e.unlistMatch(ent)
	// The held result becomes the call's entry: indexed under the use's key, resolved, and
	// listed under the Match as a resolved call.
	ent.callID = strings.Clone(ev.Key.CallID)
	useTime := earliest(ent.useTime, ev.Time) // the held result's start, or the use
	ent.useTime, ent.useSig = ev.Time, ev.Signal
	if ent.toolName == nil {
		ent.toolName = e.name(ev.ToolName)
	}
	held, heldSeq := ent.payload, ent.seq
	r := Resolution{
		Outcome:       OutcomePaired,
		Key:           ev.Key,
		ToolName:      firstNonEmpty(ev.ToolName, ent.tool()),
		UseTime:       useTime,
		ResultTime:    ent.resultTime,
		UseRef:        ev.Ref,
		ResultRef:     -1,
		UsePayload:    ev.Payload,
		ResultPayload: held,
		Matched:       true,
		HeldSeq:       heldSeq,
	}
	if ent.has(flagAborted) {
		e.countAborted(&r)
	} else {
		e.stats.Paired++
	}
	e.firstReport(ent, ent.source, r.Outcome)
	ent.hash = uint32(h)
	e.seq++
	ent.seq = e.seq
	e.resolve(ent, now, ev.Match, false)
	own(ev, ent)
	ev.Verdict = VerdictResolved
	return append(out, r), true
}

// adoptSettled makes the settled result of n the result of the call of ev, a use arriving
// after the result was released without it: the use is a repeat of a resolved call, as it is
// when the result names its call; the call is remembered under its key. h is ev's index hash.
func (e *Engine) adoptSettled(n *matchNode, ev *Event, h uint64, now int64, out []Resolution) []Resolution {
	ent := n.ent
	e.stats.UsesRepeated++
	ev.Verdict = VerdictRepeated
	ent.scope.saw(now, ev.Time)
	ent.scope.usesSeen = true
	n.list.settled.remove(n)
	ent.callID = strings.Clone(ev.Key.CallID)
	n.list.resolved.pushBack(n)
	ent.useTime = earliest(ent.useTime, ev.Time)
	if ent.toolName == nil {
		ent.toolName = e.name(ev.ToolName)
	}
	e.indexResolved(ent, h)
	own(ev, ent)
	return out
}

// releaseMatched settles a held matched result whose use did not come within orphan_grace
// (or that is evicted or shut down) as orphan or standalone and releases its record. It is
// remembered as settled, like a resolved call.
func (e *Engine) releaseMatched(ent *entry, now int64, out []Resolution) []Resolution {
	e.waiting.remove(ent)
	e.stats.Waiting--
	r := Resolution{
		Key:           ent.key(),
		ToolName:      ent.tool(),
		ResultTime:    ent.resultTime,
		UseRef:        -1,
		ResultRef:     -1,
		ResultPayload: ent.payload,
		Matched:       true,
		HeldSeq:       ent.seq,
	}
	e.settleUnmatched(&r, e.sawUse(ent.scope), true, ent.has(flagAborted))
	e.firstReport(ent, ent.source, r.Outcome)
	// Settled: listed as such before toResolved, which may forget it at once.
	n := e.matchOf[ent]
	n.list.held.remove(n)
	ent.state = stateResolved
	n.list.settled.pushBack(n)
	e.toResolved(ent, now)
	return append(out, r)
}
