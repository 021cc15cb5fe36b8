// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadata"
)

// The restart property: the conservation sequences (conservation_test.go) through a component
// with storage that is shut down and started again, on the same storage, after random
// batches (a third of them). Every restart stores the whole state and restores it, so the
// outcomes written on every record and the synthetic records made must equal those of the
// reference model, exactly as without restarts; every record still leaves exactly once, and
// conservation holds in the engine's counters after every batch (a restarted engine counts
// from the state it restored). The last run is flushed as a component without storage is at
// shutdown, so that the calls still pending are interrupted with reason shutdown, as the
// model expects.

// consRestart shuts r's component down (storing its state) and starts a new one with the same
// configuration, sinks and clock, which restores it.
func consRestart(r *consRun, ext *memStorage) error {
	ctx := context.Background()
	if err := r.traces.Shutdown(ctx); err != nil {
		return err
	}
	if err := r.logs.Shutdown(ctx); err != nil {
		return err
	}
	cfg := *configOf(r.shared)
	f := newFactoryWithClock(r.clock)
	set := processortest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = r.tel.NewTelemetrySettings()
	var err error
	if r.traces, err = f.CreateTraces(ctx, set, &cfg, r.tsink); err != nil {
		return err
	}
	if r.logs, err = f.CreateLogs(ctx, set, &cfg, r.lsink); err != nil {
		return err
	}
	host := storageHost{memStorageID: ext}
	if err := r.traces.Start(ctx, host); err != nil {
		return err
	}
	if err := r.logs.Start(ctx, host); err != nil {
		return err
	}
	r.shared = sharedOf(&cfg)
	return engineStats(r.shared).CheckConservation()
}

// consCheckRestarts runs one sequence with restarts and compares its outcomes with the
// model's.
func consCheckRestarts(t *testing.T, sc *consScenario) (restarts int, err error) {
	r := consStart(t, sc)
	ext := newMemStorage()
	ctx := context.Background()
	defer func() {
		_ = r.traces.Shutdown(ctx)
		_ = r.logs.Shutdown(ctx)
		_ = r.tel.Shutdown(ctx)
	}()
	// Restarted before any record, the component keeps its state in ext from then on.
	id := memStorageID
	configOf(r.shared).Storage = &id
	if err := consRestart(r, ext); err != nil {
		return 0, err
	}
	rng := rand.New(rand.NewPCG(sc.seed, 0x5707e))
	r.between = func() error {
		if rng.IntN(3) != 0 {
			return nil
		}
		restarts++
		return consRestart(r, ext)
	}
	if err := r.deliver(); err != nil {
		return restarts, err
	}
	// The last run ends as a component without storage does: pending calls are interrupted
	// (shutdown), held results released; the shutdown then stores an empty state.
	if err := flushPending(ctx, r.shared); err != nil {
		return restarts, err
	}
	if err := r.traces.Shutdown(ctx); err != nil {
		return restarts, err
	}
	if err := r.logs.Shutdown(ctx); err != nil {
		return restarts, err
	}
	got, err := r.observe()
	if err != nil {
		return restarts, err
	}
	want := consModel(sc)
	for c := range sc.calls {
		if !slices.Equal(got.results[c], want.results[c]) {
			return restarts, fmt.Errorf("call %d: result outcomes %v, model %v", c, got.results[c], want.results[c])
		}
		if !slices.Equal(got.synthetic[c], want.synthetic[c]) {
			return restarts, fmt.Errorf("call %d: synthetic records %v, model %v", c, got.synthetic[c], want.synthetic[c])
		}
	}
	return restarts, nil
}

// TestConservationPropertyWithRestarts runs 1,000 sequences (100,000 with -toolpair.long,
// one with -toolpair.seed) with random graceful restarts between batches.
func TestConservationPropertyWithRestarts(t *testing.T) {
	seeds := []uint64{*toolpairSeed}
	if *toolpairSeed == 0 {
		n := 1_000
		if *toolpairLong {
			n = 100_000
		}
		seeds = make([]uint64, n)
		for i := range seeds {
			seeds[i] = consBase + uint64(i)
		}
	}
	total := 0
	for _, seed := range seeds {
		sc := consGenerate(seed)
		n, err := consCheckRestarts(t, sc)
		total += n
		if err != nil {
			t.Fatalf("%v (after %d restarts)\nrerun alone with: go test -run '^TestConservationPropertyWithRestarts$' . -toolpair.seed=%d\n%s", err, n, seed, sc)
		}
	}
	require.Positive(t, total, "no sequence restarted")
	t.Logf("%d sequences, %d restarts", len(seeds), total)
}
