// Package pairing is the signal-agnostic heart of the toolpair processor: it pairs each
// tool_use with its tool_result by call key and decides the outcome of every call
// (specification sections 1, 2 and 7). It knows nothing of pdata: callers translate records
// into Events, hand them over in batches, and translate the returned Resolutions back into
// records. Whatever a caller needs to annotate or synthesise records later travels through
// the engine as an opaque payload.
//
// State lives in one store guarded by one mutex:
//
//   - pending uses: calls announced and not yet resolved, expired after pairing_timeout;
//   - waiting results: results whose use has not been seen, held at most orphan_grace; and
//     pending calls whose companion result (KindCompanion) is held at most orphan_grace for
//     the call's main result record;
//   - resolved calls: remembered so that a repeated use is ignored and a late result is a
//     duplicate, kept while their scope is active (see Config.ResolvedRetention).
//
// Each of the three sets is also a FIFO list in insertion order. Because every entry of a
// list has the same time to live, the front of a list is always the next to expire, so a
// single periodic Tick expires everything due in O(expired) without a timer per call.
// Deadlines come from the injected Clock, never from record timestamps, so that replayed or
// skewed telemetry cannot expire calls early; record timestamps are only used to compute
// durations and synthetic record times.
//
// The engine never calls anything outside itself while holding its lock, except the hold
// callback given to Process, which must be quick: the processor's only allocates the holder
// of the record there, and copies the record into it after Process returns.
package pairing

import (
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// Key identifies one tool call (specification section 1). Two records pair only when their Keys
// are equal.
type Key struct {
	// Tenant is service.name plus the values of the configured tenant_attributes.
	Tenant string
	// Scope is the value of the first scope attribute present (for example session.id),
	// else the hex trace ID, else "".
	Scope string
	// CallID is the tool call ID (gen_ai.tool.call.id, tool_use_id, call_id, ...).
	CallID string
}

// ScopeKey identifies a scope within a tenant.
type ScopeKey struct {
	Tenant string
	Scope  string
}

// Scope returns the scope part of the key.
func (k Key) ScopeKey() ScopeKey { return ScopeKey{Tenant: k.Tenant, Scope: k.Scope} }

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
	// when the call is already resolved.
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
	// at once.
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
	// Match, on a use, is a hash of the call's tool name and arguments (made by the dialect,
	// never 0 when set) under which a KindMatch result can find the call; 0 when the
	// dialect resolves the call by its ID alone. On a KindMatch, the hash it looks for.
	Match uint64

	// Verdict is set by Process.
	Verdict Verdict
	// Owned is set by Process when it replaced the strings of Key with the engine's own
	// copies of them: for an event of a call the engine keeps, whatever its Verdict, and for
	// a step boundary or session end without a CallID whose scope it keeps. Those copies
	// alias no buffer of the caller and never change, so the caller may keep them without
	// copying them again (the processor's in-flight tracker does).
	Owned bool
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
}

// DurationMs is ResultTime minus UseTime in whole milliseconds (truncated), for
// OutcomePaired; 0 otherwise.
func (r *Resolution) DurationMs() int64 {
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
	// MaxPending bounds pending uses plus waiting results; reaching it evicts the oldest.
	MaxPending int
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
	// Clock defaults to SystemClock.
	Clock Clock
}

// Validate returns an error when a limit is not positive.
func (c Config) Validate() error {
	var errs []error
	if c.PairingTimeout <= 0 {
		errs = append(errs, errors.New("pairing timeout must be positive"))
	}
	if c.OrphanGrace <= 0 {
		errs = append(errs, errors.New("orphan grace must be positive"))
	}
	if c.MaxPending < 1 {
		errs = append(errs, errors.New("max pending must be at least 1"))
	}
	return errors.Join(errs...)
}

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
	scope      *scopeState
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
	// hash is the key's index hash (Engine.hash), kept so that dropping the entry does not
	// read its key's strings again.
	hash uint32
	step *string
	// sprev and snext link the pending entries of one scope.
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
	// or a held KindMatch result (waiting, with no call ID).
	flagMatch
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
	return Key{Tenant: ent.scope.key.Tenant, Scope: ent.scope.key.Scope, CallID: ent.callID}
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
	return ent.callID == k.CallID && ent.scope.key.Scope == k.Scope && ent.scope.key.Tenant == k.Tenant
}

// fifo is an intrusive doubly linked list of entries in insertion order.
type fifo struct {
	head, tail *entry
	n          int
}

func (l *fifo) pushBack(e *entry) {
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
}

// scopeState is what the engine knows of one scope.
type scopeState struct {
	key ScopeKey
	// usesSeen: at least one use was seen in the scope, so a result without its use is an
	// orphan rather than standalone.
	usesSeen bool
	// stored: the scope is the one Engine.scopes holds for its key (it is put there once,
	// when made, and taken out once, by forgetScope), which spares forgetScope a lookup.
	stored bool
	// lastSeen is the engine clock (Unix ns) of the scope's latest event.
	lastSeen int64
	// lastRecord is the latest record time (Unix ns) of the scope's events: any use, result,
	// echo, refusal, step boundary or session end of the scope, whatever call it is of. It is
	// the scope's last sign of life, where a call interrupted for want of its result (expired,
	// evicted, shutdown) ends.
	lastRecord int64
	// refs counts the entries of the scope; the scope is forgotten when it drops to zero.
	refs int
	// pending is the first of the scope's pending entries, linked through sprev/snext.
	pending *entry
	// closings are the scope's step boundaries and session ends waiting for
	// Config.CloseDelay, sorted by time. Each holds a ref.
	closings []queuedClosing
}

// saw notes an event of the scope at engine clock now with record time t (Unix ns, 0 when
// unknown).
func (sc *scopeState) saw(now, t int64) {
	sc.lastSeen = now
	if t > sc.lastRecord {
		sc.lastRecord = t
	}
}

// queuedClosing is a step boundary (KindBoundary) or session end (KindSessionEnd) waiting
// in its scope's list: what closeScope needs of its Event, in a quarter of the space.
type queuedClosing struct {
	time int64
	step *string // the engine's copy (see Engine.step), nil for ""
	kind Kind
}

// Engine pairs tool calls. It is safe for concurrent use. Create it with New.
//
// The call index maps a 32-bit hash of the call key to its entry rather than the key itself:
// a key is three strings (48 bytes of headers) and the entry already knows its key (and keeps
// the hash in what would be padding), so a slot costs 16 bytes instead of 56. Keys whose hash
// is already taken by another key (about one in 4,000 at 10^6 calls, one in 40,000 at the
// default bound of 10^5) go to a side map from the same hash to the list of those entries.
// An entry is in the side map only while the index slot of its hash is taken: drop moves a
// colliding entry into the slot it frees. So a hash whose slot is empty is a miss without
// another lookup (every new use is one), and no lookup hashes a key twice. See find.
type Engine struct {
	mu         sync.Mutex
	cfg        Config
	seed       maphash.Seed
	hashMask   uint64 // all ones; tests narrow it to force collisions
	index      map[uint64]*entry
	collisions map[uint64][]*entry
	scopes     map[ScopeKey]*scopeState
	// names interns tool names (a small, fixed vocabulary per agent) and tenants the scopes'
	// tenants, each bounded by maxNames; lastStep is the step of the latest use, shared by
	// the calls of one model request.
	names    map[string]*string
	tenants  map[string]string
	lastStep *string
	// last is the scope most recently looked up by scope: a batch's events come in runs
	// of one scope. It is cleared when its scope is forgotten.
	last     *scopeState
	pending  fifo
	waiting  fifo
	resolved fifo
	seq      uint64
	stats    Stats
	// closings is the FIFO of step boundaries and session ends waiting for CloseDelay (see
	// deferClose). closingsQueued counts the closings waiting in the scopes' lists.
	closings       closingQueue
	closingsQueued int
	// usedScopes remembers the scopes forgotten (their last entry dropped) after they saw a
	// use, so that a later unmatched result in one is still an orphan (specification section 2).
	usedScopes scopeMemory
	// companions holds the companion records held for pending calls (statePendingHeld), by
	// entry: they are rare, and a field of their own would push every entry out of its size
	// class.
	companions map[*entry]any
	// matches lists, by scope and Match, the pending and resolved calls whose use had a
	// Match and the results held under one; matchOf is each listed entry's place (see
	// match.go). An entry is listed exactly when it has flagMatch.
	matches map[matchKey]*matchList
	matchOf map[*entry]*matchNode
}

// closing is an entry of the closings FIFO: a step boundary or session end of scope, at
// record time time, waiting until deadline (engine clock, Unix ns).
type closing struct {
	scope    *scopeState
	time     int64
	deadline int64
}

// closingChunk is the number of entries in a chunk of a closingQueue (96 KiB).
const closingChunk = 4096

// closingQueue is a FIFO of closings stored in fixed chunks of closingChunk entries. It grows
// by one chunk at a time and never copies its entries; the chunk emptied last is kept for the
// next growth, so a queue that takes as many entries as it gives allocates nothing.
// (It replaced a slice reclaimed by copying and grown by doubling: at the default bound of
// 100,000 closings that slice reached 224,000 entries, 5 MiB of pointers the GC scanned.)
type closingQueue struct {
	chunks [][]closing // chunks[0][head:], chunks[1], ...: oldest first
	head   int
	spare  []closing // an emptied chunk, length 0, or nil
}

// empty reports whether the queue holds no closing.
func (q *closingQueue) empty() bool { return len(q.chunks) == 0 }

// front returns the oldest closing. The queue must not be empty.
func (q *closingQueue) front() *closing { return &q.chunks[0][q.head] }

// push appends c.
func (q *closingQueue) push(c closing) {
	n := len(q.chunks)
	if n == 0 || len(q.chunks[n-1]) == closingChunk {
		chunk := q.spare
		q.spare = nil
		if chunk == nil {
			chunk = make([]closing, 0, closingChunk)
		}
		q.chunks = append(q.chunks, chunk)
		n++
	}
	q.chunks[n-1] = append(q.chunks[n-1], c)
}

// pop removes and returns the oldest closing. The queue must not be empty.
func (q *closingQueue) pop() closing {
	first := q.chunks[0]
	c := first[q.head]
	first[q.head] = closing{}
	q.head++
	if q.head == len(first) {
		// The first chunk is used up (only the last chunk can be short): it becomes the spare.
		q.head = 0
		q.spare = first[:0]
		n := copy(q.chunks, q.chunks[1:])
		q.chunks[n] = nil
		q.chunks = q.chunks[:n]
	}
	return c
}

// reset empties the queue and releases its storage.
func (q *closingQueue) reset() { *q = closingQueue{} }

// New returns an engine. It returns an error when cfg does not validate.
func New(cfg Config) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.ResolvedRetention <= 0 {
		cfg.ResolvedRetention = cfg.PairingTimeout
	}
	if cfg.MaxResolved <= 0 {
		cfg.MaxResolved = cfg.MaxPending
	}
	if cfg.Clock == nil {
		cfg.Clock = SystemClock{}
	}
	return &Engine{
		cfg:        cfg,
		seed:       maphash.MakeSeed(),
		hashMask:   ^uint64(0),
		index:      make(map[uint64]*entry),
		collisions: make(map[uint64][]*entry),
		scopes:     make(map[ScopeKey]*scopeState),
		names:      make(map[string]*string),
		tenants:    make(map[string]string),
		companions: make(map[*entry]any),
		matches:    make(map[matchKey]*matchList),
		matchOf:    make(map[*entry]*matchNode),
		usedScopes: scopeMemory{max: cfg.MaxResolved},
	}, nil
}

// scopeHash is the hash of a scope key in usedScopes (never narrowed by hashMask: a
// collision there would make a standalone result an orphan). It is the same in every
// process, so the memory survives a restart (see Snapshot).
func (e *Engine) scopeHash(k ScopeKey) uint64 {
	return stableScopeHash(k)
}

// scopeMemory is a bounded set of scope key hashes: the oldest added is forgotten first once
// it holds max. The zero value with max 0 holds nothing.
type scopeMemory struct {
	max  int
	set  map[uint64]struct{}
	ring []uint64 // in order of addition, a ring once full
	next int      // the oldest, once full
}

func (m *scopeMemory) has(h uint64) bool {
	_, ok := m.set[h]
	return ok
}

func (m *scopeMemory) add(h uint64) {
	if m.max <= 0 || m.has(h) {
		return
	}
	if m.set == nil {
		m.set = make(map[uint64]struct{})
	}
	if len(m.ring) < m.max {
		m.ring = append(m.ring, h)
	} else {
		delete(m.set, m.ring[m.next])
		m.ring[m.next] = h
		m.next = (m.next + 1) % m.max
	}
	m.set[h] = struct{}{}
}

// maxNames bounds the interned tool names, and the interned tenants; names beyond it are
// copied per call, tenants per scope.
const maxNames = 4096

// hash returns the index hash of a call key: 32 bits of its maphash.
func (e *Engine) hash(k Key) uint64 {
	return uint64(uint32(maphash.Comparable(e.seed, k))) & e.hashMask
}

// lookup returns the entry of call key k, or nil.
func (e *Engine) lookup(k Key) *entry {
	ent, _ := e.find(k)
	return ent
}

// find returns the entry of call key k, or nil, and k's index hash.
func (e *Engine) find(k Key) (*entry, uint64) {
	h := e.hash(k)
	ent := e.index[h]
	if ent == nil || ent.is(k) {
		return ent, h // an empty slot has no colliding entries either
	}
	if len(e.collisions) == 0 {
		return nil, h
	}
	for _, c := range e.collisions[h] {
		if c.is(k) {
			return c, h
		}
	}
	return nil, h
}

// name returns the engine's copy of a tool name (nil for ""), interned while there are
// fewer than maxNames.
func (e *Engine) name(s string) *string {
	if s == "" {
		return nil
	}
	if c, ok := e.names[s]; ok {
		return c
	}
	c := strings.Clone(s)
	if len(e.names) < maxNames {
		e.names[c] = &c
	}
	return &c
}

// tenant returns the engine's copy of a tenant, interned while there are fewer than maxNames:
// a component sees a few tenants, each in many scopes.
func (e *Engine) tenant(s string) string {
	if c, ok := e.tenants[s]; ok {
		return c
	}
	c := strings.Clone(s)
	if len(e.tenants) < maxNames {
		e.tenants[c] = c
	}
	return c
}

// step returns the engine's copy of a step ID (nil for ""). Consecutive uses of one model
// request share one copy.
func (e *Engine) step(s string) *string {
	if s == "" {
		return nil
	}
	if e.lastStep == nil || *e.lastStep != s {
		e.lastStep = cloneBoxed(s)
	}
	return e.lastStep
}

// cloneBoxed returns a pointer to a copy of s made in one allocation, the string header
// followed by its bytes, where a separate header and copy would take two: step IDs (span IDs
// in hex, message IDs) are a few dozen bytes. The object takes at most 8 bytes more than the
// two would.
func cloneBoxed(s string) *string {
	switch n := len(s); {
	case n <= 16:
		return boxed[[16]byte](s)
	case n <= 32:
		return boxed[[32]byte](s)
	case n <= 48:
		return boxed[[48]byte](s)
	case n <= 64:
		return boxed[[64]byte](s)
	case n <= 80:
		return boxed[[80]byte](s)
	case n <= 96:
		return boxed[[96]byte](s)
	case n <= 112:
		return boxed[[112]byte](s)
	}
	c := strings.Clone(s)
	return &c
}

// boxed is cloneBoxed for a string that fits in B, a byte array.
func boxed[B any](s string) *string {
	x := new(struct {
		s string
		b B
	})
	b := unsafe.Slice((*byte)(unsafe.Pointer(&x.b)), unsafe.Sizeof(x.b))
	x.s = unsafe.String(&b[0], copy(b, s))
	return &x.s
}

// Process applies a batch of events in order and appends the outcomes it decided to out,
// which it returns. Each event's Verdict is set, and its Key replaced by the engine's copy
// when it keeps one (see Event.Owned). For each result that must wait for its use,
// hold is called once, under the engine's lock, and returns the caller's holder of the
// record (the engine hands it back as a ResultPayload when it releases the result, possibly
// from another goroutine's call), which the caller then removes from its batch; or nil when
// the record cannot wait (then the result is settled at once as orphan or standalone). hold
// must be quick: it runs under the lock that serialises the engine's callers. hold itself
// may be nil.
func (e *Engine) Process(events []Event, hold func(*Event) any, out []Resolution) []Resolution {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.cfg.Clock.Now().UnixNano()
	for i := range events {
		ev := &events[i]
		ev.Owned = false // set below only when the key was replaced by the engine's copy
		if ev.Key.CallID == "" && ev.Kind != KindBoundary && ev.Kind != KindSessionEnd && ev.Kind != KindMatch {
			ev.Verdict = VerdictNone
			continue
		}
		switch ev.Kind {
		case KindBoundary, KindSessionEnd:
			out = e.deferClose(ev, now, out)
		case KindUse:
			out = e.use(ev, now, out)
		case KindResult, KindAbort, KindCompanion:
			out = e.result(ev, now, hold, out)
		case KindEcho:
			out = e.echo(ev, now, out)
		case KindReject:
			out = e.reject(ev, now, out)
		case KindMatch:
			out = e.matchResult(ev, now, hold, out)
		case KindRefused:
			out = e.refuse(ev, now, hold, out)
		default:
			ev.Verdict = VerdictNone
		}
	}
	return out
}

func (e *Engine) scope(k ScopeKey, now int64) *scopeState {
	if s := e.last; s != nil && s.key == k {
		s.lastSeen = now
		return s
	}
	s := e.scopes[k]
	if s == nil {
		k = ScopeKey{Tenant: e.tenant(k.Tenant), Scope: strings.Clone(k.Scope)}
		s = &scopeState{key: k, usesSeen: e.usedScopes.has(e.scopeHash(k)), stored: true}
		e.scopes[k] = s
	}
	e.last = s
	s.lastSeen = now
	return s
}

// forgetScope removes a scope from the store; a scope that saw a use is remembered in
// usedScopes.
func (e *Engine) forgetScope(sc *scopeState) {
	if sc.usesSeen {
		e.usedScopes.add(e.scopeHash(sc.key))
	}
	if sc.stored {
		delete(e.scopes, sc.key)
		sc.stored = false
	}
	if e.last == sc {
		e.last = nil
	}
}

func (e *Engine) use(ev *Event, now int64, out []Resolution) []Resolution {
	ent, h := e.find(ev.Key)
	if ent != nil {
		own(ev, ent)
		ent.scope.saw(now, ev.Time)
		ent.scope.usesSeen = true
		if ent.state == stateWaiting && ent.has(flagCompanion) {
			// Only a companion came first: the call is now pending, and the companion goes on
			// waiting for the main result for the rest of its grace.
			e.stats.UsesSeen++
			e.stats.Pending++
			e.companions[ent] = ent.payload
			ent.state = statePendingHeld
			ent.set(flagCompanion, false)
			ent.payload = ev.Payload
			ent.useTime = earliest(ent.useTime, ev.Time) // the companion's start, or the use
			ent.step = e.step(ev.Step)
			if ent.toolName == nil {
				ent.toolName = e.name(ev.ToolName)
			}
			e.linkScope(ent)
			e.addMatch(ent, ev.Match)
			ev.Verdict = VerdictPending
			return out
		}
		if ent.state != stateWaiting {
			ev.Verdict = VerdictRepeated
			e.stats.UsesRepeated++
			if ent.state == statePending || ent.state == statePendingHeld {
				// A record of the call that arrives later may show an earlier time (the
				// model's tool_use arriving after the agent's decision): the call starts at
				// the earliest.
				ent.useTime = earliest(ent.useTime, ev.Time)
				if ent.has(flagMatch) {
					e.relistMatch(ent)
				}
			}
			return out
		}
		// The result came first and is held: the pair is complete. Its entry's useTime is the
		// held result's start, when its record showed one.
		e.stats.UsesSeen++
		ev.Verdict = VerdictResolved
		ent.useTime = earliest(ent.useTime, ev.Time)
		r := Resolution{
			Outcome:       OutcomePaired,
			Key:           ev.Key,
			ToolName:      firstNonEmpty(ev.ToolName, ent.tool()),
			UseTime:       ent.useTime,
			ResultTime:    ent.resultTime,
			UseRef:        ev.Ref,
			ResultRef:     -1,
			UsePayload:    ev.Payload,
			ResultPayload: ent.payload,
		}
		e.waiting.remove(ent)
		e.stats.Waiting--
		if ent.has(flagAborted) {
			e.countAborted(&r)
		} else {
			e.stats.Paired++
		}
		e.toResolved(ent, now)
		e.listMatch(ent, ev.Match) // a tool span without a call ID may still repeat its result
		return append(out, r)
	}
	if out, ok := e.useMatched(ev, h, now, out); ok {
		return out
	}
	e.stats.UsesSeen++
	// Make room before looking the scope up: an eviction may forget the scope.
	out = e.makeRoom(now, out)
	sc := e.scope(ev.Key.ScopeKey(), now)
	sc.saw(now, ev.Time)
	sc.usesSeen = true
	ent = &entry{
		scope:    sc,
		callID:   strings.Clone(ev.Key.CallID),
		toolName: e.name(ev.ToolName),
		payload:  ev.Payload,
		useTime:  ev.Time,
		deadline: now + int64(e.cfg.PairingTimeout),
		state:    statePending,
		step:     e.step(ev.Step),
	}
	e.insertHashed(ent, &e.pending, h)
	own(ev, ent)
	e.stats.Pending++
	e.linkScope(ent)
	e.addMatch(ent, ev.Match)
	ev.Verdict = VerdictPending
	return out
}

// own replaces the key of ev, an event of the call of ent, with the engine's copy (see
// Event.Owned).
func own(ev *Event, ent *entry) {
	ev.Key = ent.key()
	ev.Owned = true
}

// ownScope replaces the scope part of the key of ev, a step boundary or session end of
// scope sc, with the engine's copy (see Event.Owned).
func ownScope(ev *Event, sc *scopeState) {
	ev.Key.Tenant, ev.Key.Scope = sc.key.Tenant, sc.key.Scope
	ev.Owned = ev.Key.CallID == ""
}

// linkScope adds a pending entry to its scope's pending list.
func (e *Engine) linkScope(ent *entry) {
	sc := ent.scope
	ent.snext = sc.pending
	if sc.pending != nil {
		sc.pending.sprev = ent
	}
	sc.pending = ent
}

func (e *Engine) result(ev *Event, now int64, hold func(*Event) any, out []Resolution) []Resolution {
	e.stats.ResultsSeen++
	companion := ev.Kind == KindCompanion
	ent, h := e.find(ev.Key)
	if ent != nil {
		own(ev, ent)
		ent.scope.saw(now, ev.Time)
		switch {
		case ent.state == statePending && companion:
			if held := callHold(hold, ev); held != nil {
				e.holdCompanion(ent, ev, held, now)
				return out
			}
			fallthrough // the record cannot wait: it resolves the call
		case ent.state == statePending, ent.state == statePendingHeld && !companion:
			ev.Verdict = VerdictResolved
			dup, held := e.takeCompanion(ent)
			r := e.pairPending(ent, ev, now)
			r.ResultRef = ev.Ref
			out = append(out, r)
			if held {
				out = append(out, dup)
			}
			return out
		case ent.state == stateWaiting && ent.has(flagCompanion) && !companion:
			if held := callHold(hold, ev); held != nil {
				// The main result takes the companion's place and waits for the use; the
				// companion is a duplicate.
				out = append(out, e.companionDuplicate(ent, ent.payload))
				e.waiting.remove(ent)
				e.holdResult(ent, ev, held, now)
				return out
			}
			fallthrough
		default:
			// Already resolved, or a second copy of a result still waiting for its use (an
			// export retry): either way this record is not a new answer.
			return append(out, e.duplicate(ent, ev))
		}
	}
	held := callHold(hold, ev)
	if held == nil {
		// The record cannot wait: it is settled at once.
		sc := e.scope(ev.Key.ScopeKey(), now)
		sc.saw(now, ev.Time)
		ev.Verdict = VerdictResolved
		r := Resolution{Key: ev.Key, ToolName: ev.ToolName, ResultTime: ev.Time, UseRef: -1, ResultRef: ev.Ref}
		e.settleUnmatched(&r, sc.usesSeen, false)
		ent = &entry{scope: sc, callID: strings.Clone(ev.Key.CallID), toolName: e.name(ev.ToolName), resultTime: ev.Time, source: ev.Source}
		e.insertResolved(ent, now)
		own(ev, ent)
		return append(out, r)
	}
	// Make room before looking the scope up: an eviction may forget the scope.
	out = e.makeRoom(now, out)
	sc := e.scope(ev.Key.ScopeKey(), now)
	sc.saw(now, ev.Time)
	ent = &entry{scope: sc, callID: strings.Clone(ev.Key.CallID), toolName: e.name(ev.ToolName)}
	e.insertHashed(ent, nil, h)
	own(ev, ent)
	e.holdResult(ent, ev, held, now)
	e.stats.Waiting++
	return out
}

// duplicate counts the result ev of the call of ent, already resolved or waiting, as a
// duplicate and returns its resolution.
func (e *Engine) duplicate(ent *entry, ev *Event) Resolution {
	ev.Verdict = VerdictResolved
	e.stats.Duplicate++
	same := ent.source == 0 || ent.source == ev.Source
	if ent.has(flagRejected) && ent.source == 0 {
		// The first result of a refused call: no result resolved it, and this record is its
		// source's only record of the call (Codex answers a denied call with "exec command
		// rejected by user"). Later copies from the same source are retries.
		same = false
		ent.source = ev.Source
	}
	return Resolution{
		Outcome:    OutcomeDuplicate,
		Key:        ev.Key,
		ToolName:   firstNonEmpty(ev.ToolName, ent.tool()),
		UseTime:    ent.useTime,
		ResultTime: ev.Time,
		UseRef:     -1,
		ResultRef:  ev.Ref,
		SameSource: same,
		Matched:    ev.Kind == KindMatch,
	}
}

// callHold returns hold's copy of ev's record, or nil when there is no hold callback.
func callHold(hold func(*Event) any, ev *Event) any {
	if hold == nil {
		return nil
	}
	return hold(ev)
}

// holdResult makes ent, indexed and in no list, the waiting result ev whose record is held,
// at the back of the waiting list.
func (e *Engine) holdResult(ent *entry, ev *Event, held any, now int64) {
	ent.state = stateWaiting
	ent.payload = held
	// No use yet: useTime keeps the earliest start the call's results showed.
	ent.useTime = earliest(ent.useTime, ev.Start)
	ent.resultTime = ev.Time
	ent.deadline = now + int64(e.cfg.OrphanGrace)
	ent.source = ev.Source
	ent.set(flagAborted, ev.Kind == KindAbort)
	ent.set(flagCompanion, ev.Kind == KindCompanion)
	if ent.toolName == nil {
		ent.toolName = e.name(ev.ToolName)
	}
	e.seq++
	ent.seq = e.seq
	e.waiting.pushBack(ent)
	ev.Verdict = VerdictHeld
}

// holdCompanion holds the companion ev of the pending call ent: the call moves to the
// waiting list, to wait orphan_grace for its main result.
func (e *Engine) holdCompanion(ent *entry, ev *Event, held any, now int64) {
	e.pending.remove(ent)
	ent.state = statePendingHeld
	e.companions[ent] = held
	ent.useTime = earliest(ent.useTime, ev.Start)
	ent.resultTime = ev.Time
	ent.source = ev.Source
	ent.deadline = now + int64(e.cfg.OrphanGrace)
	e.seq++
	ent.seq = e.seq
	e.waiting.pushBack(ent)
	e.stats.Waiting++
	ev.Verdict = VerdictHeld
}

// companionDuplicate counts a held companion record as a duplicate of its call's main
// result and returns the resolution that releases it. ent holds the companion's times.
func (e *Engine) companionDuplicate(ent *entry, held any) Resolution {
	e.stats.Duplicate++
	return Resolution{
		Outcome:       OutcomeDuplicate,
		Key:           ent.key(),
		ToolName:      ent.tool(),
		UseTime:       ent.useTime,
		ResultTime:    ent.resultTime,
		UseRef:        -1,
		ResultRef:     -1,
		ResultPayload: held,
	}
}

// takeCompanion takes the companion held for the pending call ent (statePendingHeld), when
// its main result arrived: it returns the resolution that releases the companion as a
// duplicate, and false when no companion is held. ent stays in its lists.
func (e *Engine) takeCompanion(ent *entry) (Resolution, bool) {
	held, ok := e.companions[ent]
	if !ok {
		return Resolution{}, false
	}
	delete(e.companions, ent)
	e.stats.Waiting--
	return e.companionDuplicate(ent, held), true
}

// settleCompanion resolves the pending call ent (statePendingHeld) with its held companion,
// whose main result did not come in time: paired, the companion released with the outcome.
func (e *Engine) settleCompanion(ent *entry, now int64, out []Resolution) []Resolution {
	held := e.companions[ent]
	delete(e.companions, ent)
	e.stats.Waiting--
	e.removePending(ent)
	e.stats.Paired++
	out = append(out, Resolution{
		Outcome:       OutcomePaired,
		Key:           ent.key(),
		ToolName:      ent.tool(),
		UseTime:       ent.useTime,
		ResultTime:    ent.resultTime,
		UseRef:        -1,
		ResultRef:     -1,
		UsePayload:    ent.payload,
		ResultPayload: held,
	})
	e.toResolved(ent, now)
	return out
}

func (e *Engine) reject(ev *Event, now int64, out []Resolution) []Resolution {
	r := Resolution{
		Outcome:    OutcomeRejected,
		Key:        ev.Key,
		ToolName:   ev.ToolName,
		UseTime:    ev.Time,
		EndTime:    ev.Time,
		UseRef:     ev.Ref,
		ResultRef:  -1,
		UsePayload: ev.Payload,
	}
	ent := e.lookup(ev.Key)
	if ent != nil {
		own(ev, ent)
		ent.scope.saw(now, ev.Time)
		ent.scope.usesSeen = true
		switch ent.state {
		case stateResolved:
			ev.Verdict = VerdictRepeated
			e.stats.UsesRepeated++
			return out
		case statePending:
			// Announced first (a model's tool_use), then refused by the agent.
			ev.Verdict = VerdictResolved
			e.removePending(ent)
			e.stats.Rejected++
			r.ToolName = firstNonEmpty(ent.tool(), ev.ToolName)
			r.UseTime = ent.useTime
			r.UsePayload = ent.payload
			ent.set(flagRejected, true)
			e.toResolved(ent, now)
			return append(out, r)
		case statePendingHeld:
			// The call ran (its companion is held): the refusal is a repeated use.
			ev.Verdict = VerdictRepeated
			e.stats.UsesRepeated++
			return e.settleCompanion(ent, now, out)
		case stateWaiting:
			// A result held before the refusal: released as what it would be after it, a
			// duplicate kept as its source's only record of the refused call, so the order
			// of arrival does not change the outcome (specification section 2).
			e.stats.UsesSeen++
			e.stats.Rejected++
			ev.Verdict = VerdictResolved
			out = append(out, r)
			e.waiting.remove(ent)
			e.stats.Waiting--
			e.stats.Duplicate++
			out = append(out, Resolution{
				Outcome:       OutcomeDuplicate,
				Key:           ent.key(),
				ToolName:      firstNonEmpty(ent.tool(), ev.ToolName),
				UseTime:       ev.Time,
				ResultTime:    ent.resultTime,
				UseRef:        -1,
				ResultRef:     -1,
				ResultPayload: ent.payload,
			})
			ent.set(flagRejected, true)
			e.toResolved(ent, now)
			return out
		}
	}
	e.stats.UsesSeen++
	e.stats.Rejected++
	ev.Verdict = VerdictResolved
	sc := e.scope(ev.Key.ScopeKey(), now)
	sc.saw(now, ev.Time)
	sc.usesSeen = true
	ent = &entry{scope: sc, callID: strings.Clone(ev.Key.CallID), toolName: e.name(ev.ToolName), useTime: ev.Time, flags: flagRejected}
	e.insertResolved(ent, now)
	own(ev, ent)
	return append(out, r)
}

// refuse applies a KindRefused event: a result record saying the user refused its call.
func (e *Engine) refuse(ev *Event, now int64, hold func(*Event) any, out []Resolution) []Resolution {
	ent := e.lookup(ev.Key)
	if ent != nil && ent.state == stateResolved {
		// Already resolved: a result record like any other, a duplicate.
		return e.result(ev, now, hold, out)
	}
	r := Resolution{
		Outcome:    OutcomeRejected,
		Key:        ev.Key,
		ToolName:   ev.ToolName,
		UseTime:    ev.Time,
		EndTime:    ev.Time,
		UseRef:     -1,
		ResultRef:  ev.Ref,
		ResultTime: ev.Time,
	}
	ev.Verdict = VerdictResolved
	e.stats.Rejected++
	if ent == nil {
		// The refusal came before the call's use: the use is seen through it.
		e.stats.UsesSeen++
		sc := e.scope(ev.Key.ScopeKey(), now)
		sc.saw(now, ev.Time)
		sc.usesSeen = true
		ent = &entry{scope: sc, callID: strings.Clone(ev.Key.CallID), useTime: ev.Time, source: ev.Source, flags: flagRejected}
		e.insertResolved(ent, now)
		own(ev, ent)
		return append(out, r)
	}
	own(ev, ent)
	ent.scope.saw(now, ev.Time)
	ent.scope.usesSeen = true
	r.Key = ev.Key
	if ent.state == stateWaiting {
		// A result held before the refusal (and the use not seen): released as a kept
		// duplicate, as after a KindReject.
		e.stats.UsesSeen++
		e.waiting.remove(ent)
		e.stats.Waiting--
		e.stats.Duplicate++
		r.ToolName = firstNonEmpty(ent.tool(), ev.ToolName)
		out = append(out, r, Resolution{
			Outcome:       OutcomeDuplicate,
			Key:           ent.key(),
			ToolName:      r.ToolName,
			UseTime:       ev.Time,
			ResultTime:    ent.resultTime,
			UseRef:        -1,
			ResultRef:     -1,
			ResultPayload: ent.payload,
		})
		ent.set(flagRejected, true)
		e.toResolved(ent, now)
		return out
	}
	// Pending (its companion perhaps held: released as a duplicate of this record).
	dup, held := e.takeCompanion(ent)
	e.removePending(ent)
	r.ToolName = firstNonEmpty(ent.tool(), ev.ToolName)
	r.UseTime = ent.useTime
	r.UsePayload = ent.payload
	ent.set(flagRejected, true)
	ent.source = ev.Source
	e.toResolved(ent, now)
	out = append(out, r)
	if held {
		out = append(out, dup)
	}
	return out
}

func (e *Engine) echo(ev *Event, now int64, out []Resolution) []Resolution {
	ent := e.lookup(ev.Key)
	if ent != nil {
		own(ev, ent)
		ent.scope.saw(now, ev.Time)
	} else if sc := e.scopes[ev.Key.ScopeKey()]; sc != nil {
		// Ignored, but a sign of life of its scope all the same.
		sc.saw(now, ev.Time)
	}
	if ent == nil || ent.state != statePending {
		ev.Verdict = VerdictIgnored
		e.stats.EchoesIgnored++
		return out
	}
	e.stats.ResultsSeen++
	ev.Verdict = VerdictResolved
	r := e.pairPending(ent, ev, now)
	// The echo's record is the only record of the result seen: it carries the outcome, so
	// that every call counted paired has a record marked paired.
	r.ResultRef = ev.Ref
	return append(out, r)
}

// pairPending resolves a pending entry with the result ev: paired, or interrupted/aborted
// when ev is a KindAbort.
func (e *Engine) pairPending(ent *entry, ev *Event, now int64) Resolution {
	ent.useTime = earliest(ent.useTime, ev.Start)
	r := Resolution{
		Outcome:    OutcomePaired,
		Key:        ent.key(),
		ToolName:   firstNonEmpty(ent.tool(), ev.ToolName),
		UseTime:    ent.useTime,
		ResultTime: ev.Time,
		UseRef:     -1,
		UsePayload: ent.payload,
	}
	e.removePending(ent)
	if ev.Kind == KindAbort {
		e.countAborted(&r)
	} else {
		e.stats.Paired++
	}
	ent.resultTime = ev.Time
	ent.source = ev.Source
	e.toResolved(ent, now)
	return r
}

// countAborted turns a pairing resolution into interrupted/aborted: the call (use side) is
// interrupted and its result record (result side) is counted as aborted.
func (e *Engine) countAborted(r *Resolution) {
	r.Outcome, r.Reason = OutcomeInterrupted, ReasonAborted
	r.EndTime = r.ResultTime
	e.stats.Interrupted[ReasonAborted]++
	e.stats.Aborted++
}

// removePending takes a pending entry out of its list (pending, or waiting for one whose
// companion is held) and its scope's list.
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
	if ent.sprev != nil {
		ent.sprev.snext = ent.snext
	} else if ent.scope.pending == ent {
		ent.scope.pending = ent.snext
	}
	if ent.snext != nil {
		ent.snext.sprev = ent.sprev
	}
	ent.sprev, ent.snext = nil, nil
}

// deferClose queues a step boundary or session end for CloseDelay, or applies it at once
// when CloseDelay is zero. A queued event gets VerdictPending.
//
// A queued closing waits in its scope's list, sorted by record time, and in the engine's
// FIFO of deadlines. When one falls due, every closing of its scope with a record time at or
// before its own is applied, earliest first: each pending call is closed by the first
// boundary or session end that follows it in time, whatever order they arrived in.
func (e *Engine) deferClose(ev *Event, now int64, out []Resolution) []Resolution {
	if e.cfg.CloseDelay <= 0 {
		sc := e.scopes[ev.Key.ScopeKey()]
		if sc == nil {
			ev.Verdict = VerdictIgnored
			return out
		}
		ownScope(ev, sc)
		sc.saw(now, ev.Time)
		out, closed := e.closeScope(sc, ev.Kind, ev.Time, ev.Step, now, out)
		ev.Verdict = VerdictIgnored
		if closed {
			ev.Verdict = VerdictResolved
		}
		return out
	}
	ev.Verdict = VerdictPending
	for e.closingsQueued >= e.cfg.MaxPending && !e.closings.empty() {
		out = e.applyClosing(now, out)
	}
	sc := e.scope(ev.Key.ScopeKey(), now)
	ownScope(ev, sc)
	sc.saw(now, ev.Time)
	// Keep sc.closings sorted by Time; consecutive lines of one message (a transcript)
	// repeat the same boundary, queued once.
	i := len(sc.closings)
	for i > 0 && sc.closings[i-1].time > ev.Time {
		i--
	}
	for j := i - 1; j >= 0 && sc.closings[j].time == ev.Time; j-- {
		if c := &sc.closings[j]; c.kind == ev.Kind && deref(c.step) == ev.Step {
			return out
		}
	}
	// The uses of the model request whose start this is share its step: e.step keeps one
	// copy for both.
	if sc.closings == nil {
		// A scope's closings come a few at a time (the steps of a turn, its end): room for
		// four in one allocation rather than growing by one, two, then four.
		sc.closings = make([]queuedClosing, 0, 4)
	}
	sc.closings = slices.Insert(sc.closings, i, queuedClosing{kind: ev.Kind, time: ev.Time, step: e.step(ev.Step)})
	sc.refs++
	e.closingsQueued++
	e.closings.push(closing{scope: sc, time: ev.Time, deadline: now + int64(e.cfg.CloseDelay)})
	return out
}

// applyClosing takes the oldest entry of the closings FIFO and applies the closings of its
// scope up to its record time.
func (e *Engine) applyClosing(now int64, out []Resolution) []Resolution {
	c := e.closings.pop()
	sc := c.scope
	n := 0
	for n < len(sc.closings) && sc.closings[n].time <= c.time {
		q := &sc.closings[n]
		out, _ = e.closeScope(sc, q.kind, q.time, deref(q.step), now, out)
		n++
	}
	if n == 0 {
		return out // applied already, with a later closing of the scope
	}
	clear(sc.closings[:n])
	sc.closings = sc.closings[n:]
	if len(sc.closings) == 0 {
		sc.closings = nil
	}
	e.closingsQueued -= n
	sc.refs -= n
	if sc.refs <= 0 {
		e.forgetScope(sc)
	}
	return out
}

// closeScope applies a step boundary (kind KindBoundary) or a session end at record time
// at, of step step, to the pending calls of scope sc, and reports whether it closed any.
func (e *Engine) closeScope(sc *scopeState, kind Kind, at int64, step string, now int64, out []Resolution) ([]Resolution, bool) {
	sc.lastSeen = now
	reason := ReasonSessionEnd
	if kind == KindBoundary {
		reason = ReasonNextStep
	}
	closed := false
	for p := sc.pending; p != nil; {
		next := p.snext
		if p.useTime <= at && closesStep(kind == KindBoundary, step, p.stepID()) {
			if p.state == statePendingHeld {
				// The call ran: its companion answers it.
				out = e.settleCompanion(p, now, out)
			} else {
				out = e.interruptPending(p, reason, now, at, out)
			}
			closed = true
		}
		p = next
	}
	return out, closed
}

// deref returns *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// settleUnmatched decides the outcome of a result that never met its use: orphan when its
// scope saw a use (usesSeen), else standalone. matched says the result is a KindMatch (also
// counted in Stats.UnmatchedOrphan or Stats.Unmatched).
func (e *Engine) settleUnmatched(r *Resolution, usesSeen, matched bool) {
	switch {
	case usesSeen:
		r.Outcome = OutcomeOrphan
		e.stats.Orphan++
		if matched {
			e.stats.UnmatchedOrphan++
		}
	default:
		r.Outcome = OutcomeStandalone
		e.stats.Standalone++
		if matched {
			e.stats.Unmatched++
		}
	}
}

func (e *Engine) insert(ent *entry, l *fifo) {
	e.insertHashed(ent, l, e.hash(ent.key()))
}

// insertHashed is insert for an entry whose key's index hash is h. A nil l leaves the entry
// in no list (the caller adds it).
func (e *Engine) insertHashed(ent *entry, l *fifo, h uint64) {
	e.seq++
	ent.seq = e.seq
	ent.hash = uint32(h)
	if e.index[h] == nil {
		e.index[h] = ent
	} else {
		e.collisions[h] = append(e.collisions[h], ent)
	}
	ent.scope.refs++
	if l != nil {
		l.pushBack(ent)
	}
}

func (e *Engine) insertResolved(ent *entry, now int64) {
	ent.state = stateResolved
	ent.payload = nil
	ent.deadline = now + int64(e.cfg.ResolvedRetention)
	e.insert(ent, &e.resolved)
	e.trimResolved()
}

// toResolved moves an entry that was already removed from its list to the resolved set.
func (e *Engine) toResolved(ent *entry, now int64) {
	ent.state = stateResolved
	ent.payload = nil
	ent.deadline = now + int64(e.cfg.ResolvedRetention)
	e.seq++
	ent.seq = e.seq
	e.resolved.pushBack(ent)
	e.trimResolved()
}

func (e *Engine) trimResolved() {
	for e.resolved.n > e.cfg.MaxResolved {
		e.forget(e.resolved.head)
	}
}

// forget drops a resolved entry.
func (e *Engine) forget(ent *entry) {
	e.resolved.remove(ent)
	if ent.has(flagMatch) {
		e.unlistMatch(ent)
	}
	e.drop(ent)
}

// drop removes an entry, already out of its list, from the index.
func (e *Engine) drop(ent *entry) {
	h := uint64(ent.hash)
	if e.index[h] == ent {
		// A colliding entry of the same hash takes the freed slot, so that an empty slot
		// always means no entry of that hash (see find).
		if cs := e.collisions[h]; len(cs) > 0 {
			e.index[h] = cs[len(cs)-1]
			e.setCollisions(h, cs[:len(cs)-1])
		} else {
			delete(e.index, h)
		}
	} else if cs := e.collisions[h]; len(cs) > 0 {
		if i := slices.Index(cs, ent); i >= 0 {
			cs[i] = cs[len(cs)-1]
			e.setCollisions(h, cs[:len(cs)-1])
		}
	}
	ent.payload = nil
	if ent.scope != nil {
		ent.scope.refs--
		if ent.scope.refs <= 0 {
			e.forgetScope(ent.scope)
		}
	}
}

// setCollisions stores the colliding entries of hash h, deleting the key when there are
// none left. cs shares the backing array of the stored list; its vacated slot is cleared so
// that it keeps no dropped entry alive.
func (e *Engine) setCollisions(h uint64, cs []*entry) {
	if len(cs) == 0 {
		delete(e.collisions, h)
		return
	}
	cs[:len(cs)+1][len(cs)] = nil
	e.collisions[h] = cs
}

// makeRoom evicts the oldest pending use or waiting result while the bound is reached.
func (e *Engine) makeRoom(now int64, out []Resolution) []Resolution {
	for e.pending.n+e.waiting.n >= e.cfg.MaxPending {
		p, w := e.pending.head, e.waiting.head
		if w == nil || (p != nil && p.seq < w.seq) {
			out = e.interruptPending(p, ReasonEvicted, now, p.lastSign(), out)
		} else {
			out = e.releaseWaiting(w, now, out)
		}
	}
	return out
}

// lastSign is where a pending call interrupted for want of its result (expired, evicted,
// shutdown) ends, in record time (Unix ns): the latest record time seen in its scope, when it
// is at or after the call's use time, else the use time (specification section 3). Never the
// engine's clock: a replayed or late capture must not yield a call days long.
func (ent *entry) lastSign() int64 {
	return max(ent.useTime, ent.scope.lastRecord)
}

// interruptPending closes a pending use as interrupted, ending at end (Unix ns); now is the
// engine clock.
func (e *Engine) interruptPending(ent *entry, reason Reason, now, end int64, out []Resolution) []Resolution {
	e.removePending(ent)
	e.stats.Interrupted[reason]++
	out = append(out, Resolution{
		Outcome:    OutcomeInterrupted,
		Reason:     reason,
		Key:        ent.key(),
		ToolName:   ent.tool(),
		UseTime:    ent.useTime,
		EndTime:    end,
		UseRef:     -1,
		ResultRef:  -1,
		UsePayload: ent.payload,
	})
	e.toResolved(ent, now)
	return out
}

// releaseWaiting settles a waiting result as orphan or standalone and releases its record;
// a pending call whose companion is held is paired with the companion.
func (e *Engine) releaseWaiting(ent *entry, now int64, out []Resolution) []Resolution {
	if ent.state == statePendingHeld {
		return e.settleCompanion(ent, now, out)
	}
	if ent.has(flagMatch) {
		return e.releaseMatched(ent, now, out)
	}
	e.waiting.remove(ent)
	e.stats.Waiting--
	r := Resolution{
		Key:           ent.key(),
		ToolName:      ent.tool(),
		ResultTime:    ent.resultTime,
		UseRef:        -1,
		ResultRef:     -1,
		ResultPayload: ent.payload,
	}
	e.settleUnmatched(&r, ent.scope.usesSeen, false)
	e.toResolved(ent, now)
	return append(out, r)
}

// Tick expires what is due at the clock's now: step boundaries and session ends queued for
// Config.CloseDelay close their scope's pending calls, pending uses past pairing_timeout become
// interrupted/expired, waiting results past orphan_grace become orphan or standalone, and
// resolved calls of idle scopes are forgotten. It appends the outcomes to out and returns it.
func (e *Engine) Tick(out []Resolution) []Resolution {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.cfg.Clock.Now().UnixNano()
	for !e.closings.empty() && e.closings.front().deadline <= now {
		out = e.applyClosing(now, out)
	}
	for p := e.pending.head; p != nil && p.deadline <= now; p = e.pending.head {
		out = e.interruptPending(p, ReasonExpired, now, p.lastSign(), out)
	}
	for w := e.waiting.head; w != nil && w.deadline <= now; w = e.waiting.head {
		out = e.releaseWaiting(w, now, out)
	}
	retention := int64(e.cfg.ResolvedRetention)
	for r := e.resolved.head; r != nil && r.deadline <= now; r = e.resolved.head {
		if active := r.scope.lastSeen + retention; active > now {
			// The scope is still active: an invoke_agent span may yet repeat this call.
			e.resolved.remove(r)
			r.deadline = active
			e.resolved.pushBack(r)
			continue
		}
		e.forget(r)
	}
	return out
}

// Shutdown applies every queued step boundary and session end, then closes every pending use
// left as interrupted/shutdown and releases every waiting
// result as orphan or standalone, appending the outcomes to out. The store is empty after.
func (e *Engine) Shutdown(out []Resolution) []Resolution {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.cfg.Clock.Now().UnixNano()
	for !e.closings.empty() {
		out = e.applyClosing(now, out)
	}
	e.closings.reset()
	e.closingsQueued = 0
	for p := e.pending.head; p != nil; p = e.pending.head {
		out = e.interruptPending(p, ReasonShutdown, now, p.lastSign(), out)
	}
	for w := e.waiting.head; w != nil; w = e.waiting.head {
		out = e.releaseWaiting(w, now, out)
	}
	for r := e.resolved.head; r != nil; r = e.resolved.head {
		e.forget(r)
	}
	return out
}

// Stats returns a snapshot of the engine's counters, taken under its lock, so the
// conservation of specification section 7 holds in every snapshot.
func (e *Engine) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stats
}

// Stats are the engine's counters since it was created. Counts are of calls for uses and of
// records for results.
type Stats struct {
	// UsesSeen counts calls announced (the first use of each call key).
	UsesSeen uint64
	// UsesRepeated counts uses of a call already pending or resolved (ignored).
	UsesRepeated uint64
	// ResultsSeen counts result records, and echoes that resolved a pending call.
	ResultsSeen uint64
	// EchoesIgnored counts echoes of calls that were not pending.
	EchoesIgnored uint64

	Paired     uint64
	Rejected   uint64
	Orphan     uint64
	Duplicate  uint64
	Standalone uint64
	// Unmatched counts the KindMatch results that met no call and were settled standalone
	// (counted in Standalone too); UnmatchedOrphan those settled orphan (counted in Orphan
	// too).
	Unmatched       uint64
	UnmatchedOrphan uint64
	// Aborted counts results that said their call was aborted.
	Aborted uint64
	// Interrupted counts interrupted uses by reason.
	Interrupted [numReasons]uint64

	// Pending is the number of pending uses; Waiting the number of held results.
	Pending int
	Waiting int
}

// InterruptedTotal sums Interrupted over all reasons.
func (s Stats) InterruptedTotal() uint64 {
	var n uint64
	for _, v := range s.Interrupted {
		n += v
	}
	return n
}

// CheckConservation returns an error when the conservation of specification section 7 does not
// hold: uses seen = paired + interrupted + rejected + pending, and results seen = paired +
// aborted + orphan + duplicate + standalone + waiting.
func (s Stats) CheckConservation() error {
	var errs []error
	uses := s.Paired + s.InterruptedTotal() + s.Rejected + uint64(s.Pending)
	if s.UsesSeen != uses {
		errs = append(errs, fmt.Errorf("uses seen %d != paired %d + interrupted %d + rejected %d + pending %d",
			s.UsesSeen, s.Paired, s.InterruptedTotal(), s.Rejected, s.Pending))
	}
	results := s.Paired + s.Aborted + s.Orphan + s.Duplicate + s.Standalone + uint64(s.Waiting)
	if s.ResultsSeen != results {
		errs = append(errs, fmt.Errorf("results seen %d != paired %d + aborted %d + orphan %d + duplicate %d + standalone %d + waiting %d",
			s.ResultsSeen, s.Paired, s.Aborted, s.Orphan, s.Duplicate, s.Standalone, s.Waiting))
	}
	return errors.Join(errs...)
}

// earliest returns the earlier of two record times in Unix ns, where 0 means unknown.
func earliest(a, b int64) int64 {
	switch {
	case a == 0:
		return b
	case b == 0:
		return a
	}
	return min(a, b)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
