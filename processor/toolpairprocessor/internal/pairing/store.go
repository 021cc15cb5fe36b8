// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// store.go holds what the store is made of: an entry per call key and its states and flags,
// the insertion-ordered lists (fifo) the entries live in, the scope table (conversation, the
// memory of forgotten scopes that saw a use) and each scope's list of its entries, pending
// calls first.

package pairing

import "strings"

type state uint8

const (
	statePending state = iota + 1
	stateWaiting
	stateResolved
	// statePendingHeld: a pending call whose companion result is held, waiting for the
	// call's main result. The entry is in the waiting list (deadline: orphan_grace after the
	// companion arrived) and in its scope's pending list; it counts as pending and waiting.
	// The companion record is in Engine.companions; resultTime and source are the
	// companion's.
	statePendingHeld
)

// entry is one call key in the store. It is in exactly one of the three lists. Its key is
// its scope's key plus callID. Its strings are the engine's own copies, so that a pending
// call never pins the buffers of the batch that announced it. The tool name and the step are
// shared by many calls (see Engine.name and Engine.step) and held by pointer (nil for ""),
// which keeps the entry in the 128-byte size class.
type entry struct {
	scope      *conversation
	callID     string
	toolName   *string
	payload    any // pending: the use's payload; waiting: the held result
	useTime    int64
	resultTime int64
	deadline   int64 // engine clock, Unix ns
	seq        uint64
	prev, next *entry
	state      state
	source     uint8 // Source of the result that resolved or is held, 0 when none
	flags      entryFlags
	// useSig is the Signal of the use useTime came from while every use came through one
	// signal; once uses came through both, Engine.signalUses has each signal's earliest.
	useSig uint8
	// hash is the key's index hash (Engine.hash), kept so that dropping the entry does not
	// read its key's strings again.
	hash uint32
	step *string
	// sprev and snext link the entries of one scope (conversation.entries).
	sprev, snext *entry
}

// entryFlags are an entry's flags (one byte, so that the entry keeps its size class).
type entryFlags uint8

const (
	// flagAborted: waiting: the held result says its call was aborted.
	flagAborted entryFlags = 1 << iota
	// flagCompanion: waiting: the held result is a companion (KindCompanion).
	flagCompanion
	// flagRejected: resolved by a refusal (KindReject). The first result record of each
	// Source that arrives for it is kept (SameSource false): it is that source's only record
	// of the refused call.
	flagRejected
	// flagMatch: listed in Engine.matches: a pending or resolved call whose use had a Match,
	// or a KindMatch result held or settled (with no call ID).
	flagMatch
	// flagAnswered: resolved by a report (see answered): a result record of another source
	// arriving later is a further report, not a duplicate.
	flagAnswered
	// flagOrphan, flagStandalone: answered by a result settled orphan or standalone (its use
	// never seen); its further reports get the same outcome.
	flagOrphan
	flagStandalone
)

// has reports whether the entry has flag f.
func (ent *entry) has(f entryFlags) bool { return ent.flags&f != 0 }

// set sets flag f of the entry to on.
func (ent *entry) set(f entryFlags, on bool) {
	if on {
		ent.flags |= f
	} else {
		ent.flags &^= f
	}
}

// key returns the entry's call key.
func (ent *entry) key() Key {
	return Key{Tenant: ent.scope.key.Tenant, Conversation: ent.scope.key.Conversation, CallID: ent.callID}
}

// tool returns the entry's tool name, or "".
func (ent *entry) tool() string {
	if ent.toolName == nil {
		return ""
	}
	return *ent.toolName
}

// stepID returns the entry's step, or "".
func (ent *entry) stepID() string {
	if ent.step == nil {
		return ""
	}
	return *ent.step
}

// is reports whether the entry's call key is k.
func (ent *entry) is(k Key) bool {
	return ent.callID == k.CallID && ent.scope.key.Conversation == k.Conversation && ent.scope.key.Tenant == k.Tenant
}

// fifo is an intrusive doubly linked list of entries in insertion order.
type fifo struct {
	head, tail *entry
	n          int
	// count, when set, is told each entry that enters (+1) or leaves (-1) the list: the
	// pending and waiting lists count their entries per tenant (bounds_tenants.go).
	count func(ent *entry, delta int)
}

func (l *fifo) pushBack(e *entry) {
	if l.count != nil {
		l.count(e, 1)
	}
	e.prev, e.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = e
	} else {
		l.head = e
	}
	l.tail = e
	l.n++
}

func (l *fifo) remove(e *entry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		l.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		l.tail = e.prev
	}
	e.prev, e.next = nil, nil
	l.n--
	if l.count != nil {
		l.count(e, -1)
	}
}

// conversation is what the engine knows of one scope.
type conversation struct {
	key ConversationKey
	// load counts the pending calls and held results of the conversation's tenant.
	load *tenantLoad
	// usesSeen: at least one use was seen in the scope, so a result without its use is an
	// orphan rather than standalone. Read it through Engine.sawUse: usesUnknown says the
	// memory of forgotten scopes (Engine.usedConversations) was not asked yet, which a scope
	// made by its first use never needs (a cold lookup spared for most new scopes).
	usesSeen, usesUnknown bool
	// memoryHash is the key's stableConversationHash once computed (scopeHash), else 0.
	memoryHash uint64
	// stored: the scope is the one Engine.conversations holds for its key (it is put there once,
	// when made, and taken out once, by forgetScope), which spares forgetScope a lookup.
	stored bool
	// lastSeen is the engine clock (Unix ns) of the scope's latest event.
	lastSeen int64
	// lastRecord is the latest record time (Unix ns) of the scope's events: any use, result,
	// echo, refusal, step boundary or session end of the scope, whatever call it is of. It is
	// the scope's last sign of life, where a call interrupted for want of its result (expired,
	// evicted, shutdown) ends.
	lastRecord int64
	// refs counts the entries of the scope, its resolved calls, its queued closings and its
	// activity (one for all of it); the scope is forgotten when it drops to zero.
	refs int
	// entries and last list every entry of the scope, linked through sprev/snext: the
	// pending ones (statePending, statePendingHeld) first, so that a closing walks only
	// them, then the held results, which "what was in flight at T" (InFlightAt) reads as
	// well, with the scope's resolved calls.
	entries, tail *entry
	// resolvedFirst and resolvedLast are the positions (plus one, 0 for none) of the scope's
	// oldest and newest resolved calls in Engine.resolved, chained by resolvedCall.next.
	resolvedFirst, resolvedLast uint32
	// act is what the scope did besides its tool calls (model calls, compactions, anchor
	// spans), nil when nothing was observed or it expired.
	act *activity
	// closings are the scope's step boundaries and session ends waiting for
	// Config.CloseDelay, sorted by time. Each holds a ref.
	closings []queuedClosing
}

// saw notes an event of the scope at engine clock now with record time t (Unix ns, 0 when
// unknown).
func (sc *conversation) saw(now, t int64) {
	sc.lastSeen = now
	if t > sc.lastRecord {
		sc.lastRecord = t
	}
}

func (e *Engine) conversationOf(k ConversationKey, now int64) *conversation {
	return e.conversationFor(k, now, false)
}

// conversationOfUse is conversationOf for a use (or a refusal, which stands for one): the
// scope saw a use, so a scope it makes need not ask the memory of forgotten scopes.
func (e *Engine) conversationOfUse(k ConversationKey, now int64) *conversation {
	sc := e.conversationFor(k, now, true)
	sc.usesSeen = true
	return sc
}

// conversationFor returns the scope of key k, made when missing. A scope made for anything
// but a use asks the memory of forgotten scopes at once: the memory may forget the scope's
// hash (other scopes forgotten after it) before a result of the scope needs the answer.
func (e *Engine) conversationFor(k ConversationKey, now int64, use bool) *conversation {
	if s := e.last; s != nil && s.key == k {
		s.lastSeen = now
		return s
	}
	s := e.conversations[k]
	if s == nil {
		k = ConversationKey{Tenant: e.tenant(k.Tenant), Conversation: strings.Clone(k.Conversation)}
		s = &conversation{key: k, usesUnknown: true, stored: true, load: e.loadOf(k.Tenant)}
		e.conversations[k] = s
		if use {
			s.usesSeen = true
		} else {
			e.sawUse(s)
		}
	}
	e.last = s
	s.lastSeen = now
	return s
}

// forgetConversation removes a scope from the store; a scope that saw a use is remembered in
// usedScopes.
func (e *Engine) forgetConversation(sc *conversation) {
	if e.sawUse(sc) {
		e.usedConversations.add(scopeHash(sc))
	}
	if sc.stored {
		delete(e.conversations, sc.key)
		sc.stored = false
	}
	if e.last == sc {
		e.last = nil
	}
}

// sawUse reports whether scope sc saw a use, in this engine or before it was last forgotten.
func (e *Engine) sawUse(sc *conversation) bool {
	if sc.usesUnknown {
		sc.usesUnknown = false
		sc.usesSeen = sc.usesSeen || e.usedConversations.has(scopeHash(sc))
	}
	return sc.usesSeen
}

// scopeHash returns the stableConversationHash of sc's key, computed once.
func scopeHash(sc *conversation) uint64 {
	if sc.memoryHash == 0 {
		sc.memoryHash = stableConversationHash(sc.key)
	}
	return sc.memoryHash
}

// conversationHash is the hash of a scope key in usedScopes (never narrowed by hashMask: a
// collision there would make a standalone result an orphan). It is the same in every
// process, so the memory survives a restart (see Snapshot).
func (e *Engine) conversationHash(k ConversationKey) uint64 {
	return stableConversationHash(k)
}

// attach counts ent among its scope's entries and lists it there, after its pending ones
// (see linkScope). An entry already attached is left as it is.
func (e *Engine) attach(ent *entry) {
	sc := ent.scope
	if ent.sprev != nil || sc.entries == ent {
		return
	}
	sc.refs++
	ent.sprev, ent.snext = sc.tail, nil
	if sc.tail != nil {
		sc.tail.snext = ent
	} else {
		sc.entries = ent
	}
	sc.tail = ent
}

// unlinkConversation takes ent out of its scope's list of entries (not out of its refs).
func unlinkConversation(ent *entry) {
	sc := ent.scope
	if ent.sprev != nil {
		ent.sprev.snext = ent.snext
	} else if sc.entries == ent {
		sc.entries = ent.snext
	} else {
		return // not listed
	}
	if ent.snext != nil {
		ent.snext.sprev = ent.sprev
	} else {
		sc.tail = ent.sprev
	}
	ent.sprev, ent.snext = nil, nil
}

// linkConversation puts a pending entry at the front of its scope's entries, attaching it first
// when it is new.
func (e *Engine) linkConversation(ent *entry) {
	e.attach(ent)
	sc := ent.scope
	if sc.entries == ent {
		return
	}
	unlinkConversation(ent)
	ent.snext = sc.entries
	sc.entries.sprev = ent
	sc.entries = ent
}

// removePending takes a pending entry out of its list (pending, or waiting for one whose
// companion is held) and moves it behind its scope's pending entries: the caller resolves
// it.
func (e *Engine) removePending(ent *entry) {
	if ent.state == statePendingHeld {
		e.waiting.remove(ent)
	} else {
		e.pending.remove(ent)
	}
	e.stats.Pending--
	if ent.has(flagMatch) {
		e.matchResolvedCall(ent)
	}
	sc := ent.scope
	if sc.tail == ent {
		return
	}
	unlinkConversation(ent)
	ent.sprev = sc.tail
	sc.tail.snext = ent
	sc.tail = ent
}

// own replaces the key of ev, an event of the call of ent, with the engine's copy: its
// strings alias no buffer of the caller, and a KindMatch learns its call ID from it.
func own(ev *Event, ent *entry) {
	ev.Key = ent.key()
}

// ownConversation replaces the scope part of the key of ev, a step boundary or session end of
// scope sc, with the engine's copy.
func ownConversation(ev *Event, sc *conversation) {
	ev.Key.Tenant, ev.Key.Conversation = sc.key.Tenant, sc.key.Conversation
}
