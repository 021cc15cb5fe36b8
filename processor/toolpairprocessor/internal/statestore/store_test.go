// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package statestore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/batch"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/statefile"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

var (
	storageID = component.MustNewIDWithName("file_storage", "state")
	ownerID   = component.MustNewID("toolpair")
	fp        = [8]byte{1, 2, 3, 4, 5, 6, 7, 8}
	scope     = pairing.ConversationKey{Tenant: "claude-code", Conversation: "d5b1e536"}
)

// memExt is a storage extension whose data outlives its clients, as a file outlives a
// process: a run abandoned without closing its client (a crash) leaves what it wrote.
type memExt struct {
	component.StartFunc
	component.ShutdownFunc
	mu   sync.Mutex
	data map[string][]byte
}

func newMemExt() *memExt { return &memExt{data: map[string][]byte{}} }

func (m *memExt) GetClient(context.Context, component.Kind, component.ID, string) (storage.Client, error) {
	return memClient{m}, nil
}

type memClient struct{ m *memExt }

func (c memClient) Get(_ context.Context, key string) ([]byte, error) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	return c.m.data[key], nil
}

func (c memClient) Set(_ context.Context, key string, value []byte) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	c.m.data[key] = value
	return nil
}

func (c memClient) Delete(_ context.Context, key string) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	delete(c.m.data, key)
	return nil
}

func (c memClient) Batch(ctx context.Context, ops ...*storage.Operation) error {
	for _, op := range ops {
		var err error
		switch op.Type {
		case storage.Get:
			op.Value, err = c.Get(ctx, op.Key)
		case storage.Set:
			err = c.Set(ctx, op.Key, op.Value)
		case storage.Delete:
			err = c.Delete(ctx, op.Key)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (memClient) Close(context.Context) error { return nil }

type host map[component.ID]component.Component

func (h host) GetExtensions() map[component.ID]component.Component { return h }

// counts is the Telemetry of a test: what the store reported.
type counts struct {
	mu        sync.Mutex
	restored  []pairing.RestoreStats
	discarded []statefile.Reason
	errors    []string
}

func (c *counts) Restored(_ context.Context, rs pairing.RestoreStats) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.restored = append(c.restored, rs)
}

func (c *counts) Discarded(_ context.Context, r statefile.Reason) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.discarded = append(c.discarded, r)
}

func (*counts) Checkpointed(context.Context, Trigger, time.Duration, int) {}

func (c *counts) StorageError(_ context.Context, op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errors = append(c.errors, op)
}

// run is one run of a component over the storage extension ext: its engine, its store and
// its next consumers.
type run struct {
	engine *pairing.Engine
	store  *Store
	traces *consumertest.TracesSink
	logs   *consumertest.LogsSink
	tel    *counts
}

func openRun(t *testing.T, ext component.Component, clk pairing.Clock, fingerprint [8]byte, keepActivity bool) *run {
	t.Helper()
	e := pairing.New(pairing.Config{PairingTimeout: time.Minute, OrphanGrace: time.Second, MaxPending: 100, CloseDelay: time.Second, Clock: clk})
	r := &run{engine: e, traces: new(consumertest.TracesSink), logs: new(consumertest.LogsSink), tel: &counts{}}
	var err error
	r.store, err = Open(context.Background(), host{storageID: ext}, storageID, ownerID, Options{
		Fingerprint: fingerprint, Engine: e, Traces: r.traces, Logs: r.logs, KeepActivity: keepActivity,
		Telemetry: r.tel, Logger: zap.NewNop(),
	})
	require.NoError(t, err)
	return r
}

// batch processes evs and acts as the processor does with one batch with storage, and writes
// its record.
func (r *run) batch(t *testing.T, acts []pairing.Activity, evs ...pairing.Event) {
	t.Helper()
	r.engine.Observe(acts)
	res := r.engine.Process(evs, func(*pairing.Event) any { return nil }, nil)
	require.NoError(t, r.store.RecordBatch(context.Background(), res, r.engine.Added(evs, acts), nil))
}

type fixedClock struct{ now time.Time }

func (c *fixedClock) Now() time.Time { return c.now }

// logUse is a tool_decision announcing call id at ms, its origin a log record in trace 1.
func logUse(t *testing.T, next *consumertest.LogsSink, id string, ms int64) pairing.Event {
	t.Helper()
	res := pcommon.NewResource()
	res.Attributes().PutStr("service.name", "claude-code")
	o := &synth.Origin{Resource: synth.NewResource(res), ConversationAttr: "session.id", Conversation: scope.Conversation, Next: next, Signal: synth.Logs,
		TraceID: pcommon.TraceID{1}, SpanID: pcommon.SpanID{2}}
	return pairing.Event{Kind: pairing.KindUse, Key: pairing.Key{Tenant: scope.Tenant, Conversation: scope.Conversation, CallID: id},
		Time: ms * 1e6, ToolName: "Bash", Payload: o, Signal: uint8(synth.Logs)}
}

// turnSpan is the anchor of the turn span of the conversation over [startMs, endMs], seen in
// the pipeline next.
func turnSpan(next *consumertest.TracesSink, startMs, endMs int64) pairing.Activity {
	s := ptrace.NewSpan()
	s.SetTraceID(pcommon.TraceID{1})
	s.SetSpanID(pcommon.SpanID{9})
	s.SetStartTimestamp(pcommon.Timestamp(startMs * 1e6))
	s.SetEndTimestamp(pcommon.Timestamp(endMs * 1e6))
	return batch.AnchorActivity(scope, s, true, next)
}

// TestRecordBatchKeepsNewCalls: a call announced after the last checkpoint, or with no
// checkpoint written at all, the session end queued after it, and the turn span seen after
// it are restored from the batches' records after a crash: the call's origin is bound to the
// new run's logs consumer, its anchor to its traces consumer, and the session end closes the
// call after its delay, with the anchor to put its synthetic span under.
func TestRecordBatchKeepsNewCalls(t *testing.T) {
	for name, checkpoint := range map[string]bool{"after a checkpoint": true, "no checkpoint": false} {
		t.Run(name, func(t *testing.T) {
			ext := newMemExt()
			clk := &fixedClock{now: time.Unix(1_800_000_000, 0)}
			r1 := openRun(t, ext, clk, fp, false)
			if checkpoint {
				r1.batch(t, nil, logUse(t, r1.logs, "toolu_0", 900))
				require.NoError(t, r1.store.Checkpoint(context.Background(), TriggerInterval))
			}
			r1.batch(t, nil, logUse(t, r1.logs, "toolu_1", 1000))
			end := pairing.Event{Kind: pairing.KindSessionEnd, Key: pairing.Key{Tenant: scope.Tenant, Conversation: scope.Conversation}, Time: 5000 * 1e6}
			r1.batch(t, []pairing.Activity{turnSpan(r1.traces, 500, 5000)}, end)
			// The crash: r1 writes nothing more.

			r2 := openRun(t, ext, clk, fp, false)
			require.Len(t, r2.tel.restored, 1)
			want := 1
			if checkpoint {
				want = 2
			}
			assert.Equal(t, want, r2.tel.restored[0].Pending)
			v, ok := r2.engine.Anchor(scope, 1000*1e6, 0)
			require.True(t, ok, "the turn span is restored")
			a := v.(batch.Anchor)
			assert.Equal(t, batch.Anchor{TraceID: pcommon.TraceID{1}, SpanID: pcommon.SpanID{9}, Start: 500 * 1e6, End: 5000 * 1e6, Next: r2.traces}, a)

			clk.now = clk.now.Add(2 * time.Second)
			out := r2.engine.Tick(nil)
			require.Len(t, out, want)
			var r pairing.Resolution
			for _, o := range out {
				assert.Equal(t, pairing.ReasonSessionEnd, o.Reason)
				if o.Key.CallID == "toolu_1" {
					r = o
				}
			}
			require.Equal(t, "toolu_1", r.Key.CallID)
			assert.Equal(t, pairing.ReasonSessionEnd, r.Reason)
			o := r.UsePayload.(*synth.Origin)
			assert.Same(t, r2.logs, o.Next)
			assert.Equal(t, "claude-code", o.Resource.Resource.Attributes().AsRaw()["service.name"])
			assert.Equal(t, pcommon.TraceID{1}, o.TraceID)
		})
	}
}

// TestRecordBatchResolvedWins: a call a later batch resolved stays resolved after the restart,
// whatever order the two records were written in (batches write their records concurrently).
func TestRecordBatchResolvedWins(t *testing.T) {
	ext := newMemExt()
	clk := &fixedClock{now: time.Unix(1_800_000_000, 0)}
	r1 := openRun(t, ext, clk, fp, false)
	use := logUse(t, r1.logs, "toolu_1", 1000)
	evs := []pairing.Event{use}
	r1.engine.Process(evs, nil, nil)
	added := r1.engine.Added(evs, nil)
	r1.batch(t, nil, pairing.Event{Kind: pairing.KindResult, Key: use.Key, Time: 2000 * 1e6})
	require.NoError(t, r1.store.RecordBatch(context.Background(), nil, added, nil)) // written last

	r2 := openRun(t, ext, clk, fp, false)
	require.Len(t, r2.tel.restored, 1)
	assert.Zero(t, r2.tel.restored[0].Pending)
	out := r2.engine.Process([]pairing.Event{{Kind: pairing.KindResult, Key: use.Key, Time: 2000 * 1e6}}, nil, nil)
	require.Len(t, out, 1)
	assert.Equal(t, pairing.OutcomeDuplicate, out[0].Outcome)
}

// TestRecordBatchOtherConfiguration: additions written under another configuration (another
// fingerprint) are not restored; a record of resolutions only is not written under one.
func TestRecordBatchOtherConfiguration(t *testing.T) {
	ext := newMemExt()
	clk := &fixedClock{now: time.Unix(1_800_000_000, 0)}
	r1 := openRun(t, ext, clk, fp, false)
	r1.batch(t, nil, logUse(t, r1.logs, "toolu_1", 1000))
	r2 := openRun(t, ext, clk, [8]byte{9}, false)
	assert.Empty(t, r2.tel.restored, "nothing restored")
	assert.Zero(t, r2.engine.Stats().Pending)
}
