// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadata"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadatatest"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/statestore"
)

// blockingTraces is a next consumer that blocks every call until release is closed, or, when
// honourCtx is set, until the call's context ends.
type blockingTraces struct {
	consumertest.TracesSink
	entered   chan struct{}
	release   chan struct{}
	honourCtx bool
}

func newBlockingTraces(honourCtx bool) *blockingTraces {
	return &blockingTraces{entered: make(chan struct{}, 16), release: make(chan struct{}), honourCtx: honourCtx}
}

func (b *blockingTraces) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (b *blockingTraces) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	b.entered <- struct{}{}
	if b.honourCtx {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-b.release:
		}
	} else {
		<-b.release
	}
	return b.TracesSink.ConsumeTraces(ctx, td)
}

// restartBlocked stores a pending call through one traces pipeline, shuts it down, and
// starts another run 11 minutes later whose next consumer is next: the start-up tick expires
// the call and blocks sending its synthetic span. It returns the second run's processor.
func restartBlocked(t *testing.T, ext *memStorage, next *blockingTraces) processor.Traces {
	t.Helper()
	clock := newTestClock()
	f := newFactoryWithClock(clock)
	set := processortest.NewNopSettings(metadata.Type)
	host := storageHost{memStorageID: ext}
	config := func() *Config {
		cfg := f.CreateDefaultConfig().(*Config)
		id := memStorageID
		cfg.Storage = &id
		return cfg
	}
	run1 := newRig(t, withClock(clock), withConfigOf(config()), tracesOnly(), withHost(host))
	run1.spans(ctChat(1, 1, 0, 0, 1000, "down"))
	run1.shutdown()

	clock.Advance(11 * time.Minute)
	tp, err := f.CreateTraces(context.Background(), set, config(), next)
	require.NoError(t, err)
	require.NoError(t, tp.Start(context.Background(), host))
	select {
	case <-next.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the start-up tick sent nothing")
	}
	return tp
}

// TestStorageShutdownCancelsBlockedTick: a shutdown cancels the context of a tick blocked
// sending downstream, waits for it, then writes the state.
func TestStorageShutdownCancelsBlockedTick(t *testing.T) {
	ext := newMemStorage()
	next := newBlockingTraces(true)
	tp := restartBlocked(t, ext, next)
	before := ext.snapshot()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	require.NoError(t, tp.Shutdown(ctx))
	assert.NotEqual(t, before, ext.snapshot(), "the shutdown checkpoint is written")
}

// TestStorageShutdownTimeoutSkipsCheckpoint: when the ticker does not return before the
// shutdown's deadline, the shutdown reports it and neither writes nor closes the store the
// ticker may still use.
func TestStorageShutdownTimeoutSkipsCheckpoint(t *testing.T) {
	ext := newMemStorage()
	next := newBlockingTraces(false)
	tp := restartBlocked(t, ext, next)
	before := ext.snapshot()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, tp.Shutdown(ctx), context.DeadlineExceeded)
	assert.Equal(t, before, ext.snapshot(), "no checkpoint while the ticker may still run")
	close(next.release)
}

// storedRecords returns the sequence numbers of the resolution records in m, and the
// pointer's generation and first record number.
func storedRecords(t *testing.T, m map[string][]byte) (seqs []uint64, gen, logStart uint64) {
	t.Helper()
	for k := range m {
		if n, ok := strings.CutPrefix(k, statestore.ResolvedKeyPrefix); ok {
			seq, err := strconv.ParseUint(n, 10, 64)
			require.NoError(t, err)
			seqs = append(seqs, seq)
		}
	}
	slices.Sort(seqs)
	gen, logStart, err := statestore.DecodePointer(m[statestore.PointerKey])
	require.NoError(t, err)
	return seqs, gen, logStart
}

// TestStorageReadErrorStartsFresh: a resolution record, a checkpoint or the pointer that
// cannot be read (a storage error, not absence) discards the stored state: it is counted
// and logged, the component starts clean under a fresh pointer whose record numbers lie past
// every stored record, so the records it did not read are neither replayed at a later start
// nor written over.
func TestStorageReadErrorStartsFresh(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail func(key string, logStart uint64) bool
	}{
		{"resolution record", func(key string, logStart uint64) bool { return key == statestore.ResolvedKey(logStart+1) }},
		{"checkpoint", func(key string, _ uint64) bool { return strings.HasPrefix(key, statestore.StateKeyPrefix) }},
		{"pointer", func(key string, _ uint64) bool { return key == statestore.PointerKey }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, clock := newMemStorage(), newTestClock()
			run1 := startRun(t, clock, e, nil)
			run1.spans(ctChat(1, 1, 0, 0, 1000, "c1", "c2", "c3", "c9"))
			run1.checkpointNow()
			run1.spans(ctTool(1, 2, 0, "c1", 1100, 1200))
			run1.spans(ctTool(1, 3, 0, "c2", 1300, 1400))
			run1.spans(ctTool(1, 4, 0, "c3", 1500, 1600))
			run1.crash()
			seqs, gen, logStart := storedRecords(t, e.snapshot())
			require.Equal(t, []uint64{logStart, logStart + 1, logStart + 2}, seqs, "three resolution records after the checkpoint")
			require.NotZero(t, gen)

			e.mu.Lock()
			e.failGet = func(key string) bool { return tc.fail(key, logStart) }
			e.mu.Unlock()
			run2 := startRun(t, clock, e, nil)
			e.mu.Lock()
			e.failGet = nil
			e.mu.Unlock()
			assert.Equal(t, 0, run2.stats().Pending, "a clean start")
			metadatatest.AssertEqualProcessorToolpairStorageErrors(t, run2.tel, []metricdata.DataPoint[int64]{
				{Value: 1, Attributes: attribute.NewSet(attribute.String("operation", "read"))},
			}, metricdatatest.IgnoreTimestamp())
			_, gen2, logStart2 := storedRecords(t, e.snapshot())
			assert.Zero(t, gen2, "the fresh pointer names no checkpoint")
			assert.Greater(t, logStart2, logStart+2, "record numbers start past every stored record")

			// Run 2 resolves a call and crashes: run 3 replays nothing of run 1.
			run2.spans(ctChat(2, 1, 0, 0, 1000, "d1"), ctTool(2, 2, 0, "d1", 1100, 1200))
			seqs, _, _ = storedRecords(t, e.snapshot())
			assert.Contains(t, seqs, logStart2, "run 2's record is numbered from the fresh pointer")
			run2.crash()
			run3 := startRun(t, clock, e, nil)
			assert.Equal(t, 0, run3.stats().Pending)
			run3.spans(ctTool(1, 2, 0, "c1", 1100, 1200))
			clock.Advance(11 * time.Minute)
			run3.tick()
			assert.EventuallyWithT(t, func(c *assert.CollectT) {
				assert.Equal(c, map[string][]string{"c1": {"span:standalone"}}, run3.marks(nil), "run 1's records are not replayed: a scope new to run 3")
			}, 5*time.Second, 10*time.Millisecond)
		})
	}
}

// TestStorageFailedShutdownCheckpointRetiresState: when the shutdown checkpoint fails and the
// pending calls are flushed as interrupted/shutdown, the stored state is retired, so the
// next start does not restore calls that already left as interrupted.
func TestStorageFailedShutdownCheckpointRetiresState(t *testing.T) {
	e, clock := newMemStorage(), newTestClock()
	run1 := startRun(t, clock, e, nil)
	run1.spans(ctChat(1, 1, 0, 0, 1000, "c1"))
	run1.checkpointNow()
	e.mu.Lock()
	e.failSets = true
	e.mu.Unlock()
	require.NoError(t, run1.traces.Shutdown(context.Background()))
	require.Error(t, run1.logs.Shutdown(context.Background()))
	run1.down = true
	assert.Equal(t, map[string][]string{"c1": {"span:interrupted/shutdown+synthetic"}}, run1.marks(nil))

	e.mu.Lock()
	e.failSets = false
	e.mu.Unlock()
	run2 := startRun(t, clock, e, nil)
	assert.Equal(t, 0, run2.stats().Pending, "c1 is not restored after leaving as interrupted")
}

// TestStorageFailedResolutionRecordCheckpoints: when a batch's resolution record cannot be
// written, a checkpoint is written before its outcomes leave, so after a crash the call paired
// in that batch is not pending again; when the checkpoint fails too, both failures are
// counted.
func TestStorageFailedResolutionRecordCheckpoints(t *testing.T) {
	e, clock := newMemStorage(), newTestClock()
	run1 := startRun(t, clock, e, nil)
	run1.spans(ctChat(1, 1, 0, 0, 1000, "c1", "c2", "c3"))
	run1.checkpointNow()
	e.mu.Lock()
	e.failSet = func(key string) bool { return strings.HasPrefix(key, statestore.ResolvedKeyPrefix) }
	e.mu.Unlock()
	run1.spans(ctTool(1, 2, 0, "c1", 1500, 2500)) // paired after the checkpoint; its record fails
	assert.Equal(t, []string{"span:paired"}, run1.marks(nil)["c1"])
	metadatatest.AssertEqualProcessorToolpairStorageErrors(t, run1.tel, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.String("operation", "resolution_record"))},
	}, metricdatatest.IgnoreTimestamp())

	e.mu.Lock()
	e.failSet = nil
	e.failSets = true
	e.mu.Unlock()
	run1.spans(ctTool(1, 3, 0, "c2", 2600, 2700)) // neither record nor checkpoint can be written
	metadatatest.AssertEqualProcessorToolpairStorageErrors(t, run1.tel, []metricdata.DataPoint[int64]{
		{Value: 2, Attributes: attribute.NewSet(attribute.String("operation", "resolution_record"))},
		{Value: 1, Attributes: attribute.NewSet(attribute.String("operation", "checkpoint"))},
	}, metricdatatest.IgnoreTimestamp())
	run1.crash()

	e.mu.Lock()
	e.failSets = false
	e.mu.Unlock()
	run2 := startRun(t, clock, e, nil)
	assert.Equal(t, 2, run2.stats().Pending,
		"c1 is covered by the checkpoint; c2, whose outcome no write covers, comes back with c3")
}

// TestStorageStateNotRetiredCounted: when neither a fresh pointer nor the pointer's deletion
// can retire the stored state after a failed shutdown checkpoint, the failure is counted and
// returned.
func TestStorageStateNotRetiredCounted(t *testing.T) {
	e, clock := newMemStorage(), newTestClock()
	run1 := startRun(t, clock, e, nil)
	run1.spans(ctChat(1, 1, 0, 0, 1000, "c1"))
	e.mu.Lock()
	e.failSets, e.failDeletes = true, true
	e.mu.Unlock()
	require.NoError(t, run1.traces.Shutdown(context.Background()))
	require.Error(t, run1.logs.Shutdown(context.Background()))
	run1.down = true
	// The metrics as the last shutdown left them, before the telemetry shut down.
	m, err := metricIn(run1.metrics(), "otelcol_processor_toolpair_storage_errors")
	require.NoError(t, err)
	errs := m.Data.(metricdata.Sum[int64]).DataPoints
	metricdatatest.AssertEqual(t, metricdata.Sum[int64]{
		Temporality: metricdata.CumulativeTemporality, IsMonotonic: true,
		DataPoints: []metricdata.DataPoint[int64]{
			{Value: 1, Attributes: attribute.NewSet(attribute.String("operation", "checkpoint"))},
			{Value: 1, Attributes: attribute.NewSet(attribute.String("operation", "pointer"))},
			// The flush's synthetic span, stored before it is sent (write-ahead).
			{Value: 1, Attributes: attribute.NewSet(attribute.String("operation", "unsent"))},
		},
	}, metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true, DataPoints: errs},
		metricdatatest.IgnoreTimestamp())
}

// TestStorageFreshPointerUnwritableFailsStart: a stored state that cannot be read and cannot
// be replaced by a fresh pointer fails the start with an error naming the extension.
func TestStorageFreshPointerUnwritableFailsStart(t *testing.T) {
	e := newMemStorage()
	e.failGet = func(key string) bool { return key == statestore.PointerKey }
	e.failSets = true
	p := newRig(t, withConfig(func(c *Config) {
		id := memStorageID
		c.Storage = &id
	}), tracesOnly(), unstarted())
	err := p.comps[0].Start(context.Background(), storageHost{memStorageID: e})
	require.ErrorContains(t, err, memStorageID.String())
	require.ErrorContains(t, err, "fresh pointer")
	require.NoError(t, p.comps[0].Shutdown(context.Background()))
}
