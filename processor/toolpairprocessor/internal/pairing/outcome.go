// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package pairing

// Outcome is what became of one tool_use or one tool_result (specification section 2).
// Its String form is the value written to the `toolpair.outcome` attribute.
type Outcome uint8

// The outcomes of specification section 2. The zero value is not an outcome.
const (
	// OutcomePaired: the result arrived for a pending call (or the call's use arrived
	// while its result was waiting).
	OutcomePaired Outcome = iota + 1
	// OutcomeInterrupted: no usable result; the Reason says why.
	OutcomeInterrupted
	// OutcomeRejected: the agent refused the call before running it.
	OutcomeRejected
	// OutcomeOrphan: a result whose use never arrived within orphan_grace, in a scope
	// where uses are visible.
	OutcomeOrphan
	// OutcomeDuplicate: a result for a call that was already resolved.
	OutcomeDuplicate
	// OutcomeStandalone: a result in a scope where no use is visible; it keeps its own timing.
	OutcomeStandalone
)

// Drop names the disposition key that may drop a record of an outcome instead of marking it
// (specification section 6).
type Drop uint8

const (
	// DropNever: the outcome's records are always marked.
	DropNever Drop = iota
	// DropOrphans: `orphans: drop` drops them.
	DropOrphans
	// DropDuplicates: `duplicates: drop` drops them.
	DropDuplicates
)

// Props is what an outcome is, for every package that handles one: the one place where an
// outcome's properties are declared (outcomes table). The transitions that give a call its
// outcome are the engine's (transitions.go, refusal.go, reports.go); everything else asks
// Outcome.Props.
type Props struct {
	// Name is the toolpair.outcome value (specification section 2).
	Name string
	// Uses and Results are the outcome's terms in the conservation of specification section
	// 7 (uses seen = the Uses of every outcome + pending; results seen = the Results of every
	// outcome + waiting), nil where it has none.
	Uses, Results func(Stats) uint64
	// Drop is the disposition key that may drop its result records; with SameSourceOnly only
	// a record of the source that resolved the call is dropped (a duplicate from another
	// signal is that pipeline's only record of the result: marked, never dropped).
	Drop           Drop
	SameSourceOnly bool
	// Counts: a result record with this outcome counts its call (toolpair.call.counted) when
	// it is the call's first report; a duplicate never does (its call was counted before).
	Counts bool
	// Settles: the resolution settles its call, so the state file's resolution record names
	// it (a duplicate settles nothing: its call was settled before).
	Settles bool
	// Timed: its record carries the call's durations (toolpair.call.duration_ms, and
	// toolpair.call.elapsed_ms where it differs; section 3).
	Timed bool
	// PerReason: it has an interrupt reason (toolpair.interrupt.reason), and the outcomes
	// metric one series per reason.
	PerReason bool
	// Unmatched, when set, is the part of its count settled by results without a call ID
	// that met no call: the outcomes metric's series with why=no_matching_call.
	Unmatched func(Stats) uint64
}

// outcomes is the table of Props, by Outcome.
var outcomes = [...]Props{
	OutcomePaired: {
		Name: "paired", Counts: true, Settles: true, Timed: true,
		Uses: func(s Stats) uint64 { return s.Paired }, Results: func(s Stats) uint64 { return s.Paired },
	},
	OutcomeInterrupted: {
		Name: "interrupted", Counts: true, Settles: true, PerReason: true,
		// Every interrupted use; of results, those that said their call was aborted.
		Uses: Stats.InterruptedTotal, Results: func(s Stats) uint64 { return s.Aborted },
	},
	OutcomeRejected: {
		Name: "rejected", Counts: true, Settles: true,
		Uses: func(s Stats) uint64 { return s.Rejected },
	},
	OutcomeOrphan: {
		Name: "orphan", Counts: true, Settles: true, Drop: DropOrphans,
		Results:   func(s Stats) uint64 { return s.Orphan },
		Unmatched: func(s Stats) uint64 { return s.UnmatchedOrphan },
	},
	OutcomeDuplicate: {
		Name: "duplicate", Drop: DropDuplicates, SameSourceOnly: true,
		Results: func(s Stats) uint64 { return s.Duplicate },
	},
	OutcomeStandalone: {
		Name: "standalone", Counts: true, Settles: true,
		Results:   func(s Stats) uint64 { return s.Standalone },
		Unmatched: func(s Stats) uint64 { return s.Unmatched },
	},
}

// noProps are the Props of the zero Outcome: nothing.
var noProps Props

// Props returns the properties of o (the zero value's are empty).
func (o Outcome) Props() *Props {
	if o > 0 && int(o) < len(outcomes) {
		return &outcomes[o]
	}
	return &noProps
}

// Outcomes lists every outcome, in declaration order.
func Outcomes() []Outcome {
	all := make([]Outcome, 0, len(outcomes)-1)
	for o := OutcomePaired; int(o) < len(outcomes); o++ {
		all = append(all, o)
	}
	return all
}

// String returns the specification's name of the outcome ("paired", "interrupted", ...), or ""
// for the zero value.
func (o Outcome) String() string { return o.Props().Name }

// Reason qualifies OutcomeInterrupted. Its String form is the value written to the
// `toolpair.interrupt.reason` attribute.
type Reason uint8

// The interrupt reasons of specification section 2. ReasonNone goes with every outcome other
// than OutcomeInterrupted.
const (
	ReasonNone Reason = iota
	// ReasonNextStep: a later step boundary of the scope came before the result.
	ReasonNextStep
	// ReasonSessionEnd: the turn or session ended before the result.
	ReasonSessionEnd
	// ReasonExpired: no result within pairing_timeout.
	ReasonExpired
	// ReasonEvicted: the max_pending_calls bound was reached and this was the oldest entry.
	ReasonEvicted
	// ReasonShutdown: the processor shut down with the call pending.
	ReasonShutdown
	// ReasonAborted: the result record itself says the call was aborted.
	ReasonAborted

	numReasons
)

var reasonNames = [...]string{
	ReasonNone:       "",
	ReasonNextStep:   "next_step",
	ReasonSessionEnd: "session_end",
	ReasonExpired:    "expired",
	ReasonEvicted:    "evicted",
	ReasonShutdown:   "shutdown",
	ReasonAborted:    "aborted",
}

// String returns the specification's name of the reason ("next_step", "expired", ...), or "" for
// ReasonNone.
func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return ""
}

// Reasons lists every interrupt reason, in declaration order, for callers that report
// per-reason figures.
func Reasons() []Reason {
	return []Reason{ReasonNextStep, ReasonSessionEnd, ReasonExpired, ReasonEvicted, ReasonShutdown, ReasonAborted}
}
