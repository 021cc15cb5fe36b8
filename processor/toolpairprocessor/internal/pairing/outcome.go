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

var outcomeNames = [...]string{
	OutcomePaired:      "paired",
	OutcomeInterrupted: "interrupted",
	OutcomeRejected:    "rejected",
	OutcomeOrphan:      "orphan",
	OutcomeDuplicate:   "duplicate",
	OutcomeStandalone:  "standalone",
}

// String returns the specification's name of the outcome ("paired", "interrupted", ...), or ""
// for the zero value.
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return ""
}

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
