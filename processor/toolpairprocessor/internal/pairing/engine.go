// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// engine.go holds the Engine itself: the store's fields and New. The rest of the package
// (doc.go: its documentation), by room:
//
//   - the vocabulary: api.go, the types callers use (Key, Kind, Event, Verdict, Resolution,
//     Config, Clock); outcome.go, the outcomes, their properties (Props) and reasons;
//     steps.go, grouped steps;
//   - the store: store.go, entries, their states and lists, and the scopes; callindex.go, the
//     call index of pending calls and held results; resolved.go, the memory of resolved calls
//     (its ring and index in resolvedring.go) and the reading ahead of a batch (hashEvents,
//     readAhead); intern.go, the strings calls share; forgottenscopes.go, the scopes
//     forgotten after a use (orphan, not standalone);
//   - the state machine: transitions.go, Process and the table of what each event does to a
//     call, transitions_use.go (uses) and transitions_result.go (results), with refusal.go, companion.go and match.go for refusals, companion results
//     and results found by Match; reports.go, the further reports of a call (each source's
//     first record with its own outcome), the records held with a waiting result, each
//     signal's earliest use; closing.go, step boundaries and session ends;
//   - bounds (bounds_*): bounds_expiry.go, Tick, eviction and Shutdown; bounds_tenants.go,
//     each tenant's share of the pending calls; bounds_heldbytes.go, the bound on held
//     records' bytes; stats.go, the counters;
//   - timeout activity (activity*): activity.go, model calls, compactions and anchor spans of
//     a scope (Observe, Anchor); activity_inflight.go, what was in flight at an instant
//     (InFlightAt);
//   - persistence (persist_*): persist_snapshot.go, Snapshot and Restore, for the processor's
//     stored state; persist_added.go, what a batch added (Added) and the merge of such
//     additions into a snapshot (Merge), for the records written between snapshots.

package pairing

import (
	"hash/maphash"
	"sync"
)

// Engine pairs tool calls. It is safe for concurrent use. Create it with New.
//
// The call index (callIndex) maps a 32-bit hash of the call key to its entry rather than the
// key itself: a key is three strings (48 bytes of headers) and the entry already knows its key
// (and keeps the hash in what would be padding), so a slot costs 16 bytes instead of 56. Keys
// of the same hash are told apart by the entries' keys. It holds the pending calls and held
// results; a resolved call leaves its entry for the ring of resolved calls (resolvedMemory),
// whose index is of 8-byte slots. No lookup hashes a key twice: Process hashes a batch's keys
// before applying it (hashEvents). See find.
type Engine struct {
	mu            sync.Mutex
	cfg           Config
	seed          maphash.Seed
	hashMask      uint64 // all ones; tests narrow it to force collisions
	index         callIndex
	conversations map[ConversationKey]*conversation
	// names interns tool names (a small, fixed vocabulary per agent) and tenants the scopes'
	// tenants, each bounded by maxNames; lastStep is the step of the latest use, shared by
	// the calls of one model request.
	names    map[string]*string
	tenants  map[string]string
	lastStep *string
	// last is the scope most recently looked up by scope: a batch's events come in runs
	// of one scope. It is cleared when its scope is forgotten.
	last     *conversation
	pending  fifo
	waiting  fifo
	resolved resolvedMemory
	seq      uint64
	stats    Stats
	// loads counts the pending uses and waiting results of each tenant holding any, and of
	// idle, the last tenant to hold none, if it has held none since; heavy is the one last
	// seen holding the most (bounds_tenants.go).
	loads map[string]*tenantLoad
	heavy *tenantLoad
	idle  *tenantLoad
	// heldBytes is the HeldSize of the records held (waiting results, companions, further
	// reports): added when the hold callback returns one, taken off when a resolution
	// releases it (bounds_heldbytes.go).
	heldBytes int64
	// closings is the FIFO of step boundaries and session ends waiting for CloseDelay (see
	// deferClose). closingsQueued counts the closings waiting in the scopes' lists.
	closings       closingQueue
	closingsQueued int
	// usedConversations remembers the scopes forgotten (their last entry dropped) after they saw a
	// use, so that a later unmatched result in one is still an orphan (specification section 2).
	usedConversations conversationMemory
	// companions holds the companion records held for pending calls (statePendingHeld), by
	// entry: they are rare, and a field of their own would push every entry out of its size
	// class.
	companions map[*entry]any
	// reported lists the further sources that reported a call, for the calls that more than
	// one source reported; heldReports the records of further sources held with a waiting
	// result (see reports.go). Both are rare and kept out of the entry for its size class.
	reported    map[*entry]reportSet
	heldReports map[*entry][]heldReport
	// signalUses has, for calls announced through both signals, each signal's earliest use
	// time (see useFor).
	signalUses map[*entry][2]int64
	// matches lists, by scope and Match, the pending and resolved calls whose use had a
	// Match and the results held or settled under one; matchOf is each listed entry's place
	// (see match.go). An entry is listed exactly when it has flagMatch.
	matches map[matchKey]*matchList
	matchOf map[*entry]*matchNode
	// acts lists the scopes' activities, least recently observed first (see activity.go).
	acts actList
	// touched keeps what readAhead read, so that the compiler keeps the reads.
	touched uint32
}

// New returns an engine of cfg, which it trusts: the processor's configuration check
// (toolpairprocessor's Config.Validate, the one place a limit is validated, naming its key)
// guarantees what it needs, a positive PairingTimeout and OrphanGrace, a MaxPending of at
// least 1 and no negative bound. Its other zero values mean the defaults their fields give.
func New(cfg Config) *Engine {
	if cfg.ResolvedRetention <= 0 {
		cfg.ResolvedRetention = cfg.PairingTimeout
	}
	if cfg.MaxResolved <= 0 {
		cfg.MaxResolved = cfg.MaxPending
	}
	if cfg.ActivityRetention == 0 {
		cfg.ActivityRetention = cfg.PairingTimeout + cfg.OrphanGrace
	}
	if cfg.MaxActivity == 0 {
		cfg.MaxActivity = cfg.MaxPending
	}
	if cfg.Clock == nil {
		cfg.Clock = SystemClock{}
	}
	e := &Engine{
		cfg:               cfg,
		seed:              maphash.MakeSeed(),
		hashMask:          ^uint64(0),
		conversations:     make(map[ConversationKey]*conversation),
		names:             make(map[string]*string),
		tenants:           make(map[string]string),
		companions:        make(map[*entry]any),
		reported:          make(map[*entry]reportSet),
		heldReports:       make(map[*entry][]heldReport),
		signalUses:        make(map[*entry][2]int64),
		matches:           make(map[matchKey]*matchList),
		matchOf:           make(map[*entry]*matchNode),
		usedConversations: conversationMemory{max: cfg.MaxResolved},
		resolved:          resolvedMemory{limit: cfg.MaxResolved + 1},
		loads:             make(map[string]*tenantLoad),
	}
	e.pending.count, e.waiting.count = e.countLoad, e.countLoad
	return e
}
