// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

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
//     duplicate, kept while their scope is active (see Config.ResolvedRetention);
//   - scopes: one per tenant and scope, the one registry of the processor. A scope owns the
//     copy of its key its calls share, lists its calls (pending ones first), its queued step
//     boundaries and session ends, and its activity: the model calls, compactions and
//     anchor spans the processor observes (Observe). What was in flight in it at an instant
//     (InFlightAt) is read from those calls and that activity, and Anchor finds the span a
//     synthetic span goes under. A scope is forgotten when nothing of it is left.
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
//
// Each file is one room of the engine; engine.go says which holds what, and transitions.go
// tabulates what each kind of event does to a call in each state.
package pairing
