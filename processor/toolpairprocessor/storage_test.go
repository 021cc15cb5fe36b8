// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadata"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadatatest"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/statefile"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/statestore"
)

// memStorage is a storage extension whose data outlives its clients, as a storage file
// outlives a process: each run of a component gets a client over the same map, so a run that
// is abandoned without shutting down (a crash) leaves exactly what it wrote. failSets makes
// every Set and Batch fail.
type memStorage struct {
	component.StartFunc
	component.ShutdownFunc
	mu       sync.Mutex
	data     map[string][]byte
	failSets bool
	// failGet, when set, makes every Get of a key it returns true for fail.
	failGet func(key string) bool
	// failSet, when set, makes every Set of a key it returns true for fail.
	failSet func(key string) bool
	// failDeletes makes every Delete fail.
	failDeletes bool
}

func newMemStorage() *memStorage { return &memStorage{data: map[string][]byte{}} }

func (m *memStorage) GetClient(context.Context, component.Kind, component.ID, string) (storage.Client, error) {
	return &memClient{m: m}, nil
}

func (m *memStorage) snapshot() map[string][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.data)
}

type memClient struct{ m *memStorage }

var errSetFailed = errors.New("set refused")

func (c *memClient) Get(_ context.Context, key string) ([]byte, error) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	if c.m.failGet != nil && c.m.failGet(key) {
		return nil, errGetFailed
	}
	return c.m.data[key], nil
}

var errGetFailed = errors.New("get refused")

func (c *memClient) Set(_ context.Context, key string, value []byte) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	if c.m.failSets || (c.m.failSet != nil && c.m.failSet(key)) {
		return errSetFailed
	}
	c.m.data[key] = value
	return nil
}

func (c *memClient) Delete(_ context.Context, key string) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	if c.m.failDeletes {
		return errSetFailed
	}
	delete(c.m.data, key)
	return nil
}

func (c *memClient) Batch(_ context.Context, ops ...*storage.Operation) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	if c.m.failSets {
		return errSetFailed
	}
	for _, op := range ops {
		switch op.Type {
		case storage.Get:
			op.Value = c.m.data[op.Key]
		case storage.Set:
			c.m.data[op.Key] = op.Value
		case storage.Delete:
			delete(c.m.data, op.Key)
		}
	}
	return nil
}

func (c *memClient) Close(context.Context) error { return nil }

var memStorageID = component.MustNewIDWithName("mem_storage", "state")

// storageHost offers extensions by ID.
type storageHost map[component.ID]component.Component

func (h storageHost) GetExtensions() map[component.ID]component.Component { return h }

// startRun starts a run of the component on clock, with storage ext under memStorageID: a
// traces and a logs pipeline, duplicates marked.
func startRun(t *testing.T, clock *testClock, ext component.Component, mutate func(*Config)) *rig {
	t.Helper()
	return newRig(t, withClock(clock), withHost(storageHost{memStorageID: ext}), withConfig(func(c *Config) {
		id := memStorageID
		c.Storage = &id
		c.Duplicates = DispositionMark
	}), withConfig(mutate))
}

// TestStorageGracefulRestart: with storage, a shutdown interrupts nothing; after the
// restart the pending call pairs with its result (its true duration), the held result pairs
// with its use, and a call whose deadline passed during the downtime expires at start.
func TestStorageGracefulRestart(t *testing.T) {
	for _, ext := range []struct {
		name string
		make func(t *testing.T) component.Component
	}{
		{"mem", func(*testing.T) component.Component { return newMemStorage() }},
		{"storagetest_file", func(t *testing.T) component.Component {
			return storagetest.NewFileBackedStorageExtension("state", t.TempDir())
		}},
	} {
		t.Run(ext.name, func(t *testing.T) {
			e := ext.make(t)
			clock := newTestClock()
			// The reference: the same records through one run without restart.
			ref := newRig(t, withConfig(func(c *Config) { c.Duplicates = DispositionMark }))
			ref.clock.now = clock.now
			ref.spans(ctChat(1, 1, 0, 0, 1000, "c1", "c2"))
			ref.spans(ctTool(1, 9, 0, "c3", 1100, 1200))
			ref.advance(time.Second)
			ref.spans(ctTool(1, 2, 0, "c1", 1500, 2500), ctChat(1, 3, 0, 2600, 2700, "c3"))

			run1 := startRun(t, clock, e, nil)
			run1.spans(ctChat(1, 1, 0, 0, 1000, "c1", "c2"))
			run1.spans(ctTool(1, 9, 0, "c3", 1100, 1200)) // held: its use comes after the restart
			run1.spans(ctChat(2, 1, 0, 0, 1000, "c5"))    // another trace: never closed by a step
			run1.shutdown()
			assert.Empty(t, run1.marks(nil), "nothing is interrupted at shutdown")
			assert.Equal(t, 2, run1.tsink.SpanCount(), "the held result is stored, not sent")

			clock.Advance(time.Second)
			run2 := startRun(t, clock, e, nil)
			run2.spans(ctTool(1, 2, 0, "c1", 1500, 2500), ctChat(1, 3, 0, 2600, 2700, "c3"))
			got := run2.marks(nil)
			want := ref.marks(nil)
			assert.Equal(t, want, got)
			assert.Equal(t, []string{"span:paired"}, got["c1"])
			assert.Equal(t, []string{"span:paired"}, got["c3"])
			for _, s := range run2.outSpans() {
				if ctCallIDOf(s.Attributes()) == "c1" {
					v, _ := s.Attributes().Get("toolpair.call.elapsed_ms")
					assert.Equal(t, int64(2500-1000), v.Int())
					v, _ = s.Attributes().Get("toolpair.call.duration_ms")
					assert.Equal(t, int64(2500-1500), v.Int(), "the tool span's own length")
				}
			}
			run2.shutdown()

			// Down for longer than pairing_timeout: the step boundary queued before the
			// shutdown closes c2, and c5 expires, at start.
			clock.Advance(11 * time.Minute)
			run3 := startRun(t, clock, e, nil)
			run3.tick()
			// The component's own start-up tick may have taken these closings first and still
			// be sending them: wait for what it sends.
			want3 := map[string][]string{
				"c2": {"span:interrupted/next_step+synthetic"},
				"c5": {"span:interrupted/expired+synthetic"},
			}
			assert.EventuallyWithT(t, func(c *assert.CollectT) {
				assert.Equal(c, want3, run3.marks(nil))
			}, 5*time.Second, 10*time.Millisecond)
		})
	}
}

// TestStorageHeldLogRecordRestored: a held log record is stored and released after the
// restart, marked paired, in the logs pipeline.
func TestStorageHeldLogRecordRestored(t *testing.T) {
	e, clock := newMemStorage(), newTestClock()
	run1 := startRun(t, clock, e, nil)
	run1.logRecords(ctClaudeResult("toolu_1", 2000))
	run1.shutdown()
	assert.Empty(t, run1.outLogs())
	run2 := startRun(t, clock, e, nil)
	run2.logRecords(ctClaudeDecision("toolu_1", "accept", 1000))
	assert.Equal(t, map[string][]string{"toolu_1": {"log:paired"}}, run2.marks(nil))
	lrs := run2.outLogs()
	require.Len(t, lrs, 2)
	bodies := []string{lrs[0].Body().Str(), lrs[1].Body().Str()}
	assert.Contains(t, bodies, "claude_code.tool_result", "the stored record itself comes back")
}

// TestStorageCrashNeverContradicts: after a crash, a call that left the processor paired
// after the last checkpoint is not pending again (no expiry, no synthetic record; its result
// sent again is a duplicate), a call pending at the checkpoint still expires, and a call
// announced after the checkpoint is restored from its batch's record: its result pairs.
func TestStorageCrashNeverContradicts(t *testing.T) {
	e, clock := newMemStorage(), newTestClock()
	run1 := startRun(t, clock, e, nil)
	run1.spans(ctChat(1, 1, 0, 0, 1000, "c1", "c2"))
	run1.checkpointNow()
	run1.spans(ctTool(1, 2, 0, "c1", 1500, 2500)) // paired after the checkpoint
	run1.spans(ctChat(2, 3, 0, 2600, 2700, "c4")) // announced after the checkpoint
	assert.Equal(t, []string{"span:paired"}, run1.marks(nil)["c1"])
	run1.crash()

	run2 := startRun(t, clock, e, nil)
	run2.spans(ctTool(1, 4, 0, "c1", 1500, 2500), ctTool(2, 5, 0, "c4", 2800, 2900))
	clock.Advance(11 * time.Minute)
	run2.tick()
	// The component's own ticker may be settling the same calls: wait for what it sends.
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, map[string][]string{
			"c1": {"span:duplicate"},
			"c2": {"span:interrupted/expired+synthetic"},
			"c4": {"span:paired"},
		}, run2.marks(nil))
	}, 5*time.Second, 10*time.Millisecond)
}

// TestStorageCheckpointAtomic: a checkpoint whose writes fail leaves the previous one
// readable; the shutdown then falls back to the behaviour without storage (shutdown
// interruptions), so nothing is lost silently.
func TestStorageCheckpointAtomic(t *testing.T) {
	e, clock := newMemStorage(), newTestClock()
	run1 := startRun(t, clock, e, nil)
	run1.spans(ctChat(1, 1, 0, 0, 1000, "c1"))
	run1.checkpointNow()
	run1.spans(ctChat(1, 2, 0, 1100, 1200, "c2"))
	before := e.snapshot()
	e.mu.Lock()
	e.failSets = true
	e.mu.Unlock()
	require.Error(t, run1.checkpoint())
	assert.Equal(t, before, e.snapshot(), "a failed checkpoint changes nothing stored")
	require.NoError(t, run1.traces.Shutdown(context.Background()), "the first pipeline's shutdown writes nothing")
	require.Error(t, run1.logs.Shutdown(context.Background()), "the last pipeline's shutdown writes the state")
	run1.down = true
	assert.Equal(t, map[string][]string{
		"c1": {"span:interrupted/next_step+synthetic"}, // the step of c2 closes it first
		"c2": {"span:interrupted/shutdown+synthetic"},
	}, run1.marks(nil))
}

// TestStorageDiscarded: a stored state that cannot be used (corrupt, another format version,
// another configuration) is counted by reason and discarded; the collector starts clean.
func TestStorageDiscarded(t *testing.T) {
	for _, tc := range []struct {
		reason string
		spoil  func(m map[string][]byte)
		mutate func(*Config)
	}{
		{reason: "corrupt", spoil: func(m map[string][]byte) {
			for k, v := range m {
				if k != statestore.PointerKey {
					v[len(v)/2] ^= 0xff
				}
			}
		}},
		{reason: "version", spoil: func(m map[string][]byte) {
			for k, v := range m {
				if k != statestore.PointerKey {
					v[len(statefile.StateMagic)] = statefile.Version + 1
				}
			}
		}},
		{reason: "config", mutate: func(c *Config) { c.ConversationAttributes = []string{"session.id"} }},
		{reason: "missing", spoil: func(m map[string][]byte) {
			for k := range m {
				if k != statestore.PointerKey {
					delete(m, k)
				}
			}
		}},
		{reason: "corrupt", spoil: func(m map[string][]byte) { m[statestore.PointerKey] = []byte("garbage") }},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			e, clock := newMemStorage(), newTestClock()
			run1 := startRun(t, clock, e, nil)
			run1.spans(ctChat(1, 1, 0, 0, 1000, "c1"))
			run1.shutdown()
			if tc.spoil != nil {
				e.mu.Lock()
				tc.spoil(e.data)
				e.mu.Unlock()
			}
			run2 := startRun(t, clock, e, tc.mutate)
			assert.Equal(t, 0, run2.stats().Pending, "a clean start")
			metadatatest.AssertEqualProcessorToolpairStateDiscarded(t, run2.tel, []metricdata.DataPoint[int64]{
				{Value: 1, Attributes: attribute.NewSet(attribute.String("reason", tc.reason))},
			}, metricdatatest.IgnoreTimestamp())
		})
	}
}

// TestStorageRestoredCounted: what a restart restored is counted by kind.
func TestStorageRestoredCounted(t *testing.T) {
	e, clock := newMemStorage(), newTestClock()
	run1 := startRun(t, clock, e, nil)
	run1.spans(ctChat(1, 1, 0, 0, 1000, "c1", "c2"), ctTool(1, 2, 0, "c9", 900, 950))
	run1.shutdown()
	run2 := startRun(t, clock, e, nil)
	metadatatest.AssertEqualProcessorToolpairStateRestored(t, run2.tel, []metricdata.DataPoint[int64]{
		{Value: 2, Attributes: attribute.NewSet(attribute.String("toolpair.state.kind", "pending_calls"))},
		{Value: 1, Attributes: attribute.NewSet(attribute.String("toolpair.state.kind", "held_results"))},
		{Value: 0, Attributes: attribute.NewSet(attribute.String("toolpair.state.kind", "resolved_calls"))},
		{Value: 0, Attributes: attribute.NewSet(attribute.String("toolpair.state.kind", "replayed_resolutions"))},
	}, metricdatatest.IgnoreTimestamp())
}

// TestStorageExtensionRequired: a storage key naming no extension, or an extension that is
// not a storage extension, fails start with an error naming the key.
func TestStorageExtensionRequired(t *testing.T) {
	for name, host := range map[string]component.Host{
		"missing":     storageHost{},
		"not_storage": storageHost{memStorageID: storagetest.NewNonStorageExtension("state")},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFactoryWithClock(newTestClock())
			cfg := f.CreateDefaultConfig().(*Config)
			id := memStorageID
			cfg.Storage = &id
			p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
			require.NoError(t, err)
			err = p.Start(context.Background(), host)
			require.ErrorContains(t, err, "storage")
			require.ErrorContains(t, err, memStorageID.String())
			require.NoError(t, p.Shutdown(context.Background()))
		})
	}
}

// TestRouteModeIgnoresStorage: route mode keeps no state, so a storage key is ignored there:
// it starts whether or not the extension exists, routes every record, and writes nothing.
func TestRouteModeIgnoresStorage(t *testing.T) {
	e := newMemStorage()
	for name, host := range map[string]component.Host{
		"extension": storageHost{memStorageID: e},
		"missing":   storageHost{},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFactoryWithClock(newTestClock())
			cfg := f.CreateDefaultConfig().(*Config)
			id := memStorageID
			cfg.Storage, cfg.Mode = &id, ModeRoute
			sink := new(consumertest.LogsSink)
			p, err := f.CreateLogs(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, sink)
			require.NoError(t, err)
			require.NoError(t, p.Start(context.Background(), host))
			ld := loadLogs(t, "claude", "interrupt_sigterm", "logs.json")
			n := ld.LogRecordCount()
			require.NoError(t, p.ConsumeLogs(context.Background(), ld))
			require.NoError(t, p.Shutdown(context.Background()))
			require.Equal(t, n, sink.LogRecordCount())
			assert.Empty(t, e.snapshot(), "route mode stores nothing")
		})
	}
}

// TestStorageCheckpointDuringBatches: checkpoints taken while batches hold and resolve
// results, from other goroutines, never deadlock (a checkpoint waits for a batch's held
// records to be copied in, while the batch writes its resolution record), and what each
// batch resolved survives a crash right after.
func TestStorageCheckpointDuringBatches(t *testing.T) {
	e, clock := newMemStorage(), newTestClock()
	run1 := startRun(t, clock, e, nil)
	done := make(chan struct{})
	stop := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				_ = run1.checkpoint()
			}
		}
	}()
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		// Batch i holds the result of call i (its use comes in the next batch) and pairs call
		// i-1 with the result held by the previous batch.
		for i := range 201 {
			var spans []ctSpan
			if i < 200 {
				spans = append(spans, ctTool(1, byte(i%100+100), 0, fmt.Sprintf("c%d", i), int64(i)+500, int64(i)+600))
			}
			if i > 0 {
				spans = append(spans, ctChat(1, byte(i%90+1), 0, int64(i-1), int64(i-1)+10, fmt.Sprintf("c%d", i-1)))
			}
			_ = run1.traces.ConsumeTraces(context.Background(), ctTraces(spans...))
		}
	}()
	select {
	case <-finished:
	case <-time.After(30 * time.Second):
		t.Fatal("batches did not finish while checkpoints ran")
	}
	close(stop)
	<-done
	marks := run1.marks(nil)
	run1.crash()
	require.Len(t, marks, 200)

	run2 := startRun(t, clock, e, nil)
	clock.Advance(11 * time.Minute)
	run2.tick()
	assert.Empty(t, run2.marks(nil), "every call paired before the crash stays resolved")
}
