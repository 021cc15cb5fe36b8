// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// api.go holds the engine's public vocabulary: the call key (Key, ConversationKey), what an event
// reports (Kind, Event) and what Process decided for it (Verdict), the outcome of a call
// (Resolution), and the engine's limits (Config) and clock (Clock, SystemClock).

package pairing

import (
	"time"
)

// Key identifies one tool call (specification section 1). Two records pair only when their Keys
// are equal.
type Key struct {
	// Tenant is service.name plus the values of the configured tenant_attributes.
	Tenant string
	// Conversation is the value of the first scope attribute present (for example session.id),
	// else the hex trace ID, else "".
	Conversation string
	// CallID is the tool call ID (gen_ai.tool.call.id, tool_use_id, call_id, ...).
	CallID string
}

// ConversationKey identifies a scope within a tenant.
type ConversationKey struct {
	Tenant       string
	Conversation string
}

// Scope returns the scope part of the key.
func (k Key) ConversationKey() ConversationKey {
	return ConversationKey{Tenant: k.Tenant, Conversation: k.Conversation}
}

// Kind says what an Event reports.
type Kind uint8

const (
	// KindUse announces a call (a tool_use).
	KindUse Kind = iota + 1
	// KindResult resolves a call (a tool_result). A result that finds no pending use is
	// held until its use arrives or orphan_grace passes.
	KindResult
	// KindEcho is a result repeated as history in a later model request (a
	// tool_call_response part of gen_ai.input.messages). It resolves the call when the call
	// is pending, and its record is then the call's result record (ResultRef is its Ref, so
	// the caller marks it paired); otherwise it is ignored: it is never held, never an
	// orphan, never a duplicate.
	KindEcho
	// KindReject announces a call the agent refused to run (for example a tool decision
	// "reject"). The call is resolved as rejected; no synthetic record is due. A result of
	// the refused call, before or after the refusal, is a duplicate with SameSource false
	// (the first of each Source; later copies are retries).
	KindReject
	// KindBoundary says the agent began its next model request in the scope of Key (CallID is
	// ignored) at Time, for the step Step. Every call of the scope still pending that was
	// announced by another step at or before Time is interrupted with reason next_step,
	// ending at Time: strict providers require every call of a step to have its result
	// before the next request.
	KindBoundary
	// KindAbort is a result record that says its call was aborted (Codex aborted=true, a
	// transcript result carrying the agent's interrupt marker). It resolves its call as
	// interrupted with reason aborted, on the use and on this result; no synthetic record is
	// due. Otherwise it behaves as KindResult: held while its use is missing, a duplicate
	// when the call is already resolved. Whether or not its use is seen: a KindAbort whose
	// use does not come within orphan_grace (or that cannot wait) resolves its call as
	// interrupted/aborted all the same (specification section 2), the call then counted as
	// seen through it (Stats.UsesSeen; a later use is a repeat).
	KindAbort
	// KindSessionEnd says the agent's turn or session in the scope of Key ended at Time.
	// Every call of the scope still pending that was announced at or before Time is
	// interrupted with reason session_end, ending at Time. A grouped Step (GroupStep)
	// limits both kinds of closing to the calls of its group.
	KindSessionEnd
	// KindCompanion is a second result record of a call whose main result record is another
	// one of the same agent (Claude Code's claude_code.tool.execution span, inside the
	// claude_code.tool span of the call). Whatever the order they arrive in, the main record
	// (a KindResult or KindAbort) is the one that pairs and the companion is a duplicate,
	// reported with SameSource false: it is held (the hold callback) for up to orphan_grace
	// while its call is pending, or while its use is missing, and released as a duplicate
	// when the main record arrives. A companion whose main record never comes within that
	// time, or before a boundary, session end, eviction or shutdown closes its call, resolves
	// the call itself: paired (or orphan or standalone without a use), as a KindResult would.
	KindCompanion
	// KindMatch is a result record that carries no call ID (an OpenLLMetry or OpenInference
	// tool span): Key.CallID is empty and Match says what it ran (see Event.Match). It
	// resolves the pending call of its scope whose use has the same Match, the earliest use
	// first, as paired; Process then sets the event's Key.CallID to that call's ID, so that the
	// caller can write it on the record (Resolution.Matched). When no call is pending but one
	// with the same Match is resolved and remembered, it is a duplicate of the one resolved
	// last (with that call's ID). Otherwise it is held, as a KindResult without its use, under
	// its scope and Match: a use with that Match pairs the result held first, and after
	// orphan_grace it is an orphan or standalone (also counted in Stats.UnmatchedOrphan or
	// Stats.Unmatched). A Match of 0, or a record the hold callback cannot hold, is settled so
	// at once. Settled so, it resolves its call as a result with a call ID does: a later use
	// with its Match (none held) is a repeat, and a copy of it a duplicate.
	KindMatch
	// KindRefused is a result record that says the user refused its call (a Claude Code
	// transcript tool_result the agent marks "User rejected tool use" with a toolDenialKind).
	// It resolves its call as rejected on this record (the Resolution's ResultRef is its Ref,
	// so the caller marks it rejected); no synthetic record is due. The record is the call's
	// refusal, as a tool decision "reject" is: it is counted once, under Rejected, on the use
	// side of the conservation (a call first seen through it counts as a use seen, and its
	// later use is a repeat), and not among results seen. A result held for the call before it
	// is released as a kept duplicate (SameSource false), as with KindReject. Only when the
	// call is already resolved is the record a result like any other: a duplicate.
	KindRefused
)

// Verdict is what Process decided for one Event.
type Verdict uint8

const (
	// VerdictNone: the event was not processed (an unknown Kind or an empty call ID).
	VerdictNone Verdict = iota
	// VerdictPending: a use that is now a pending call, or a step boundary or session end
	// queued for Config.CloseDelay.
	VerdictPending
	// VerdictRepeated: a use of a call already pending or resolved; ignored and counted.
	VerdictRepeated
	// VerdictResolved: the event took part in a Resolution returned by the same call.
	VerdictResolved
	// VerdictHeld: a result now held by the engine; the caller must remove the record from
	// its batch, since the hold callback's copy is what will be released.
	VerdictHeld
	// VerdictIgnored: an echo of a call that is not pending.
	VerdictIgnored
)

// Event is one tool_use or tool_result extracted from a record.
type Event struct {
	Kind Kind
	Key  Key
	// Time is the record's time in Unix nanoseconds: the use time for a use (for example the
	// announcing chat span's end), the result time for a result.
	Time int64
	// Start is, for a result, the start of the operation its record shows, in Unix
	// nanoseconds: the start of a result span (a tool span may start before the record that
	// announced its call, as Codex's tool spans start before its decision event); 0 when the
	// record shows none. A call starts at the earliest time any of its records shows (the
	// use, a repeated use such as a decision, a result's Start): that is the UseTime of its
	// resolution and the start of its synthetic record (specification section 3).
	Start int64
	// ToolName is the tool's name when the record gives it, else "".
	ToolName string
	// Payload is kept with a pending use and handed back in its Resolution (the caller
	// puts what it needs to build a synthetic record there). Unused for results: their
	// payload comes from the hold callback.
	Payload any
	// Ref is the caller's index of the record; it comes back as UseRef or ResultRef.
	Ref int32
	// Source tells apart the streams results arrive in (the processor uses the dialect). It
	// only decides Resolution.SameSource of duplicates.
	Source uint8
	// Step identifies the model request a use was announced by, or the request a boundary
	// starts (a chat span's ID, a transcript message.id). Uses with an empty Step are never
	// closed by an ungrouped boundary; see GroupStep for grouped steps.
	Step string
	// Signal is the signal the record came through (1 and 2: the caller's numbering, the
	// processor's synth.Signal; 0 unknown). A result's duration is measured from the earliest
	// use of its own signal when that signal announced the call, so that it does not depend
	// on whether another signal's announcement, with a clock of other precision, came first
	// (specification section 3).
	Signal uint8
	// Match, on a use, is a hash of the call's tool name and arguments (made by the dialect,
	// never 0 when set) under which a KindMatch result can find the call; 0 when the
	// dialect resolves the call by its ID alone. On a KindMatch, the hash it looks for.
	Match uint64
	// Abort, on a KindMatch, says the record reports its call's abort: it resolves the call
	// it matches, or settles without one, as a KindAbort does (interrupted/aborted).
	Abort bool

	// Verdict is set by Process.
	Verdict Verdict

	// hash is Key's index hash when hashed, computed by Process before it applies the batch
	// (see hashEvents).
	hash   uint32
	hashed bool
}

// aborts reports whether the result ev says its call was aborted: a KindAbort, or a KindMatch
// with Abort.
func (ev *Event) aborts() bool {
	return ev.Kind == KindAbort || (ev.Kind == KindMatch && ev.Abort)
}

// Resolution is one outcome decided by the engine.
type Resolution struct {
	Outcome Outcome
	Reason  Reason
	Key     Key
	// ToolName is the tool name of the use, else of the result.
	ToolName string
	// UseTime is the call's start in Unix nanoseconds: the earliest time any of its records
	// showed (see Event.Start), 0 when unknown. ResultTime is the result record's time.
	UseTime    int64
	ResultTime int64
	// EndTime is the end of the call for a synthetic record, in Unix nanoseconds, in record
	// time: the boundary's or session end's time for next_step and session_end, the result's
	// for aborted, the refusal's for rejected; for expired, evicted and shutdown the latest
	// record time seen in the call's scope, else the use time (never the engine's clock).
	EndTime int64
	// UseRef and ResultRef are the Refs of the events of the current Process call that took
	// part, or -1.
	UseRef    int32
	ResultRef int32
	// UsePayload is the use's Payload (nil when no use took part).
	UsePayload any
	// ResultPayload is a held result released by this resolution (nil when the result was
	// not held). The caller must emit it.
	ResultPayload any
	// Matched: the result record carries no call ID of its own (KindMatch); Key.CallID, when
	// set, is the ID of the call it was matched to, for the caller to write on the record.
	Matched bool
	// HeldSeq, on the release of a held Matched result (ResultPayload set), is its place in
	// the store (its CallSnapshot.Seq): a resolution record keeps it, as HeldRef, so that a
	// restore from an earlier snapshot does not hold the released record again. 0 otherwise.
	HeldSeq uint64
	// SameSource is set on duplicates: true when the call was resolved by a result of the
	// same Source, or without a result (interrupted); false when the duplicate is the first
	// result seen in its own Source (an agent that reports a call both as a span and as a log
	// event, or a result of a refused call).
	SameSource bool
	// Report is set on a further report: the first record of its Source for a call that
	// another source's record answered first (specification section 2). It carries its own
	// outcome (paired, with ResultTime and its own UseTime; interrupted/aborted; or the
	// orphan or standalone outcome of a call whose use was never seen) but the call was
	// counted by the first report, not by this one.
	Report bool
}

// ElapsedMs is ResultTime minus UseTime in whole milliseconds (truncated), for
// OutcomePaired; 0 otherwise. What the processor writes on records is synth.Durations.
func (r *Resolution) ElapsedMs() int64 {
	if r.Outcome != OutcomePaired {
		return 0
	}
	return (r.ResultTime - r.UseTime) / int64(time.Millisecond)
}

// Synthesize reports whether the resolution calls for a synthetic record (specification
// section 3): an interrupted call for any reason but aborted.
func (r *Resolution) Synthesize() bool {
	return r.Outcome == OutcomeInterrupted && r.Reason != ReasonAborted
}

// Clock gives the engine its notion of now. Tests inject a fake one; production uses
// SystemClock.
type Clock interface {
	Now() time.Time
}

// SystemClock is the wall clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// Config holds the engine's limits.
type Config struct {
	// PairingTimeout: a pending use with no result after this long is interrupted/expired.
	PairingTimeout time.Duration
	// OrphanGrace: a result held this long without its use becomes an orphan (or standalone).
	OrphanGrace time.Duration
	// MaxPending bounds pending uses plus waiting results; reaching it evicts the oldest of
	// the tenant holding the most.
	MaxPending int
	// MaxPendingPerTenant bounds the pending uses plus waiting results of one tenant
	// (Key.Tenant); reaching it evicts the tenant's own oldest. Zero means no bound of its own.
	MaxPendingPerTenant int
	// ResolvedRetention is how long a resolved call is remembered after its scope last saw
	// an event. Zero means PairingTimeout.
	ResolvedRetention time.Duration
	// MaxResolved bounds the remembered resolved calls; the oldest are forgotten first
	// (silently: forgetting is not an outcome). It also bounds the scopes remembered as having
	// seen a use once every entry of theirs is forgotten (8-byte hashes, oldest forgotten
	// first), so that a later unmatched result there is an orphan, not standalone. Zero means
	// MaxPending.
	MaxResolved int
	// CloseDelay is how long a step boundary or session end waits before it closes the
	// pending calls of its scope, so that results (and uses) that arrive after it, out of
	// order within this delay, still pair: records of one scope travel in separate batches
	// and signals, and a batch's order is not the order of events. The processor uses
	// orphan_grace. Zero closes at once. At most MaxPending closings wait; beyond that the
	// oldest is applied early.
	CloseDelay time.Duration
	// Linger is how long after its end a model call or compaction still counts as in flight
	// (InFlightAt), and how far apart two of one kind may be and still merge (Observe).
	Linger time.Duration
	// ActivityRetention is how long a scope's activity (Observe) is kept after it was last
	// observed. Zero means PairingTimeout plus OrphanGrace: an anchor span must outlive every
	// call announced in it, which pairing_timeout interrupts at the latest, within
	// orphan_grace of the span's end.
	ActivityRetention time.Duration
	// MaxActivity bounds the intervals and anchor spans kept over all scopes; beyond it, the
	// scope observed least recently loses its activity first. Zero means MaxPending.
	MaxActivity int
	// Clock defaults to SystemClock.
	Clock Clock
	// MergePayload, when set, is called under the engine's lock when a repeated use with a
	// Payload arrives for a pending call: it returns the payload the call keeps (the
	// processor keeps the announcing record of each signal, so that a call announced in
	// both gets its synthetic records in both whatever came first). It must be quick.
	MergePayload func(kept, repeated any) any
	// MaxHeldBytes bounds the bytes of the records held for their use (results, companions,
	// further reports), as HeldSize gives them; zero means no bound. Beyond it the oldest
	// waiting result is released as it would be at OrphanGrace (orphan or standalone, its
	// held records with it).
	MaxHeldBytes int64
	// HeldSize returns the size in bytes of a record the hold callback returned. Nil counts
	// every record as 0 bytes.
	HeldSize func(held any) int64
}
