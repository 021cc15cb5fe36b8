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
