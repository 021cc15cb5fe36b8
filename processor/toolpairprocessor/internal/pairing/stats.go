// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// stats.go holds the engine's counters and the conservation they obey (specification
// section 7).

package pairing

import (
	"errors"
	"fmt"
)

// Stats returns a snapshot of the engine's counters, taken under its lock, so the
// conservation of specification section 7 holds in every snapshot.
func (e *Engine) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := e.stats
	st.HeldBytes = e.heldBytes
	return st
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
	// Reports counts further reports: result records of a source that had not reported a
	// call yet, once another source's record answered it (see reports.go). They are marked
	// with their own outcome and are not counted in ResultsSeen or any outcome above: the call
	// is counted once, by its first report.
	Reports uint64
	// Interrupted counts interrupted uses by reason.
	Interrupted [numReasons]uint64
	// HeldOverBytes counts the waiting results released early because the held records'
	// bytes exceeded Config.MaxHeldBytes (each also counted as orphan or standalone).
	HeldOverBytes uint64

	// Pending is the number of pending uses; Waiting the number of held results.
	Pending int
	Waiting int
	// HeldReports is the number of records of further sources held with a waiting result
	// (see reports.go): not counted in Waiting, since they are not first reports.
	HeldReports int
	// HeldBytes is the bytes of the held records, as Config.HeldSize gives them.
	HeldBytes int64
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
	uses, results := uint64(s.Pending), uint64(s.Waiting)
	useTerms, resultTerms := fmt.Sprintf("pending %d", s.Pending), fmt.Sprintf("waiting %d", s.Waiting)
	for _, o := range Outcomes() {
		p := o.Props()
		if p.Uses != nil {
			uses += p.Uses(s)
			useTerms = fmt.Sprintf("%s %d + %s", p.Name, p.Uses(s), useTerms)
		}
		if p.Results != nil {
			results += p.Results(s)
			resultTerms = fmt.Sprintf("%s %d + %s", p.Name, p.Results(s), resultTerms)
		}
	}
	if s.UsesSeen != uses {
		errs = append(errs, fmt.Errorf("uses seen %d != %s", s.UsesSeen, useTerms))
	}
	if s.ResultsSeen != results {
		errs = append(errs, fmt.Errorf("results seen %d != %s", s.ResultsSeen, resultTerms))
	}
	return errors.Join(errs...)
}
