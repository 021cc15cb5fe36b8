package inflight

import (
	"strconv"
	"testing"
	"time"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// BenchmarkApply applies batches shaped like the processor's: runs of updates per scope (a
// model call, calls announced, then started and resolved), every batch with scopes of its
// own, at the default bounds, so the tracker stays full and forgets as much as it records.
// Reports ns per update.
func BenchmarkApply(b *testing.B) {
	now := time.Unix(1_700_000_000, 0)
	tr, err := New(Config{Retention: 5 * time.Minute, MaxOperations: 100_000, Settle: time.Second, Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	const scopesPerBatch, callsPerScope = 40, 4
	tools := []string{"Bash", "Read", "Edit", "Grep"}
	mk := func(batch int) []Update {
		var us []Update
		for s := range scopesPerBatch {
			k := pairing.ScopeKey{Tenant: "svc", Scope: "session-" + strconv.Itoa(batch) + "-" + strconv.Itoa(s)}
			t0 := int64(batch)*int64(time.Minute) + 1
			us = append(us, Update{Op: OpInterval, Kind: Model, Scope: k, Start: t0, End: t0 + 10})
			for c := range callsPerScope {
				id := "call_" + strconv.Itoa(batch) + "_" + strconv.Itoa(s) + "_" + strconv.Itoa(c)
				us = append(us, Update{Op: OpAnnounce, Scope: k, CallID: id, Tool: tools[c], Start: t0 + 10})
			}
			for c := range callsPerScope {
				id := "call_" + strconv.Itoa(batch) + "_" + strconv.Itoa(s) + "_" + strconv.Itoa(c)
				us = append(us, Update{Op: OpAnnounce, Scope: k, CallID: id, Tool: tools[c], Start: t0 + 11},
					Update{Op: OpResolve, Scope: k, CallID: id, Tool: tools[c], End: t0 + 20})
			}
		}
		return us
	}
	batches := make([][]Update, 64)
	for i := range batches {
		batches[i] = mk(i)
	}
	// Fill the tracker to its bound first.
	for i := 0; tr.Len() < 100_000; i++ {
		tr.Apply(mk(1000 + i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		us := batches[i%len(batches)]
		if i%len(batches) == 0 {
			// Fresh call IDs for every round, so calls are new as in a real stream.
			b.StopTimer()
			for j := range batches {
				batches[j] = mk(2000 + i + j)
			}
			b.StartTimer()
		}
		tr.Apply(us)
		n += len(us)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/update")
}
