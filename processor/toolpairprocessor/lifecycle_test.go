// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadata"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadatatest"
)

// TestLifecycleOneInstancePerComponent: every pipeline of one component ID shares one
// instance, started once with one ticker; another component ID, even built from the same
// configuration, has its own.
func TestLifecycleOneInstancePerComponent(t *testing.T) {
	clock := newTestClock()
	a := newRig(t, withClock(clock), withPipelines("traces", "logs", "traces"), unstarted())
	sa := instanceByID(component.NewID(metadata.Type))
	require.NotNil(t, sa)
	for _, c := range a.comps[:1] {
		require.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
	}
	stop := stateOf(sa).ticker
	require.NotNil(t, stop, "the first start starts the ticker")
	for _, c := range a.comps[1:] {
		require.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
	}
	assert.Equal(t, stop, stateOf(sa).ticker, "later starts start no other ticker")
	assert.Equal(t, 3, stateOf(sa).refs, "three pipelines hold the instance")

	idB := component.MustNewIDWithName(metadata.Type.String(), "b")
	b := newRig(t, withClock(clock), withConfigOf(a.cfg), withSettings(func(set *processor.Settings) { set.ID = idB }))
	sb := instanceByID(idB)
	require.NotNil(t, sb)
	assert.NotSame(t, sa, sb, "toolpair and toolpair/b have separate instances")
	assert.NotSame(t, stateOf(sa).engine, stateOf(sb).engine)

	// A call announced in toolpair's first traces pipeline is pending in toolpair only.
	require.NoError(t, a.traces.ConsumeTraces(context.Background(), ctTraces(ctChat(1, 1, 0, 0, 1000, "lc_call"))))
	assert.Equal(t, 1, a.stats().Pending)
	assert.Equal(t, 0, b.stats().Pending)
}

// TestLifecycleFirstShutdownFlushes: without storage, the first pipeline's shutdown stops the
// ticker and sends the pending call out as interrupted/shutdown, once, to the pipeline it came
// through, while every pipeline's downstream still runs; a later pipeline's shutdown flushes
// only what arrived since, the last one removes the instance; shutting a pipeline down twice
// does not count it out twice.
func TestLifecycleFirstShutdownFlushes(t *testing.T) {
	p := newRig(t, withPipelines("traces", "logs", "traces"))
	id := component.NewID(metadata.Type)
	s := instanceByID(id)
	ctx := context.Background()
	require.NoError(t, p.tracesPipelines[0].ConsumeTraces(ctx, ctTraces(ctChat(1, 1, 0, 0, 1000, "lc_call"))))
	reasons := func(sink *consumertest.TracesSink) []string {
		var out []string
		for _, td := range sink.AllTraces() {
			for _, sp := range allSpans(td) {
				if v, ok := sp.Attributes().Get("toolpair.interrupt.reason"); ok {
					out = append(out, v.AsString())
				}
			}
		}
		return out
	}

	require.NoError(t, p.comps[1].Shutdown(ctx), "the logs pipeline shuts down first")
	require.NoError(t, p.comps[1].Shutdown(ctx), "a second shutdown of one pipeline")
	assert.Equal(t, []string{"shutdown"}, reasons(p.tsinks[0]), "flushed to the pipeline the call came through")
	assert.Empty(t, reasons(p.tsinks[1]))
	assert.Nil(t, stateOf(s).ticker, "the first shutdown stops the ticker")
	assert.Same(t, s, instanceByID(id), "two pipelines still hold the instance")

	// A call announced through the second traces pipeline after the first shutdown (an
	// upstream component flushing) is flushed by that pipeline's shutdown.
	require.NoError(t, p.tracesPipelines[1].ConsumeTraces(ctx, ctTraces(ctChat(2, 1, 0, 0, 1000, "lc_late"))))
	require.NoError(t, p.comps[2].Shutdown(ctx))
	assert.Equal(t, []string{"shutdown"}, reasons(p.tsinks[0]), "the first call is flushed once")
	assert.Equal(t, []string{"shutdown"}, reasons(p.tsinks[1]))
	assert.Same(t, s, instanceByID(id))
	require.NoError(t, p.comps[0].Shutdown(ctx))
	assert.Nil(t, instanceByID(id), "the last shutdown removes the instance")
	assert.Equal(t, []string{"shutdown"}, reasons(p.tsinks[0]))
	assert.Equal(t, []string{"shutdown"}, reasons(p.tsinks[1]))
}

// TestLifecycleLastShutdownCheckpoints: with storage, only the last pipeline's shutdown
// writes the state, once, and interrupts nothing.
func TestLifecycleLastShutdownCheckpoints(t *testing.T) {
	ext := newMemStorage()
	p := newRig(t, withConfig(func(c *Config) {
		id := memStorageID
		c.Storage = &id
	}), withHost(storageHost{memStorageID: ext}))
	require.NoError(t, p.traces.ConsumeTraces(context.Background(), ctTraces(ctChat(1, 1, 0, 0, 1000, "lc_call"))))

	passed := p.spanCount()
	checkpoints := func() uint64 {
		m, err := p.tel.GetMetric("otelcol_processor_toolpair_state_checkpoint_size")
		if err != nil {
			return 0
		}
		var n uint64
		for _, dp := range m.Data.(metricdata.Histogram[int64]).DataPoints {
			if v, _ := dp.Attributes.Value("toolpair.trigger"); v.AsString() == "shutdown" {
				n += dp.Count
			}
		}
		return n
	}
	before := ext.snapshot()
	require.NoError(t, p.comps[0].Shutdown(context.Background()))
	assert.Equal(t, before, ext.snapshot(), "the first shutdown writes nothing")
	assert.Zero(t, checkpoints())
	require.NoError(t, p.comps[1].Shutdown(context.Background()))
	assert.NotEqual(t, before, ext.snapshot(), "the last shutdown writes the state")
	assert.Equal(t, uint64(1), checkpoints(), "one shutdown checkpoint")
	assert.Equal(t, passed, p.spanCount(), "nothing is interrupted with storage")
}

// TestLifecycleCreationFailureReleasesTelemetry: a component whose creation fails after its
// telemetry was created (an invalid compaction pattern) shuts that telemetry down, so its
// gauges are no longer reported, and leaves no instance behind.
func TestLifecycleCreationFailureReleasesTelemetry(t *testing.T) {
	f := newFactoryWithClock(newTestClock())
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.TimeoutClassification.Enabled = true
	cfg.TimeoutClassification.CompactionSpanNames = []string{"("}
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	created := countTelemetryCreations(t)

	set := metadatatest.NewSettings(tel)
	_, err := f.CreateTraces(context.Background(), set, cfg, consumertest.NewNop())
	require.Error(t, err)
	assert.Equal(t, 1, *created, "the failure came after the telemetry was created")
	_, err = tel.GetMetric("otelcol_processor_toolpair_pending_calls")
	assert.Error(t, err, "the gauge's callback is unregistered")
	assert.Nil(t, instanceByID(set.ID))
}

// TestLifecycleFailedStartRestartable: a start that fails (the storage extension is missing)
// leaves the instance unstarted; a later start succeeds and starts the ticker.
func TestLifecycleFailedStartRestartable(t *testing.T) {
	p := newRig(t, withConfig(func(c *Config) {
		id := memStorageID
		c.Storage = &id
	}), unstarted())
	require.ErrorContains(t, p.comps[0].Start(context.Background(), componenttest.NewNopHost()), "not configured")
	s := instanceByID(component.NewID(metadata.Type))
	st := stateOf(s)
	assert.False(t, st.started)
	assert.Nil(t, st.ticker)
	p.start(storageHost{memStorageID: newMemStorage()})
	st = stateOf(s)
	assert.True(t, st.started)
	assert.NotNil(t, st.ticker)
	assert.True(t, st.storage)
}

// TestLifecycleNewConfigTakesOver: pipelines built from another configuration of the same
// component ID (a reload whose old pipelines were never shut down) get a new instance; the old
// instance's last shutdown leaves the new one in place.
func TestLifecycleNewConfigTakesOver(t *testing.T) {
	clock := newTestClock()
	id := component.NewID(metadata.Type)
	old := newRig(t, withClock(clock), tracesOnly(), unstarted())
	sOld := instanceByID(id)
	cur := newRig(t, withClock(clock), logsOnly(), unstarted())
	sNew := instanceByID(id)
	require.NotSame(t, sOld, sNew)
	assert.Same(t, cur.cfg, stateOf(sNew).cfg)
	require.NoError(t, old.comps[0].Shutdown(context.Background()))
	assert.Same(t, sNew, instanceByID(id))
	require.NoError(t, cur.comps[0].Shutdown(context.Background()))
	assert.Nil(t, instanceByID(id))
}

// TestLifecycleCatchUpWaitsForAllPipelines: with storage, a call whose deadline passed while
// the collector was down is expired only once every pipeline of the component has started,
// not when the first (here the logs pipeline) starts while the traces pipeline the call's
// synthetic span goes to has not.
func TestLifecycleCatchUpWaitsForAllPipelines(t *testing.T) {
	clock := newTestClock()
	ext := newMemStorage()
	host := storageHost{memStorageID: ext}
	withStorage := withConfig(func(c *Config) {
		id := memStorageID
		c.Storage = &id
	})
	run1 := newRig(t, withClock(clock), withStorage, withHost(host))
	require.NoError(t, run1.traces.ConsumeTraces(context.Background(), ctTraces(ctChat(1, 1, 0, 0, 1000, "lc_down"))))
	for _, c := range run1.comps {
		require.NoError(t, c.Shutdown(context.Background()))
	}
	sent := run1.spanCount()

	clock.Advance(11 * time.Minute)
	run2 := newRig(t, withClock(clock), withStorage, unstarted())
	require.NoError(t, run2.comps[1].Start(context.Background(), host), "the logs pipeline starts first")
	assert.Never(t, func() bool { return run2.spanCount() > 0 }, 300*time.Millisecond, 10*time.Millisecond,
		"nothing is expired while the traces pipeline has not started")
	require.NoError(t, run2.comps[0].Start(context.Background(), host))
	assert.Eventually(t, func() bool { return run2.spanCount() == 1 }, 5*time.Second, 10*time.Millisecond,
		"the catch-up tick runs once both have started")
	assert.Equal(t, 1, sent, "run 1 sent only the announcing span")
	for _, c := range run2.comps {
		require.NoError(t, c.Shutdown(context.Background()))
	}
}

// TestRecordsAfterTheFirstPipelineShutdownAreReleased: a result arriving through the logs
// pipeline after the traces pipeline shut down is not held: it passes as standalone and
// nothing is left waiting.
func TestRecordsAfterTheFirstPipelineShutdownAreReleased(t *testing.T) {
	b := newRig(t)
	require.NoError(t, b.traces.Shutdown(context.Background()))
	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.Body().SetStr("claude_code.tool_result")
	lr.Attributes().PutStr("tool_use_id", "toolu_x")
	lr.Attributes().PutStr("session.id", "s")
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), ld))
	require.NoError(t, b.logs.Shutdown(context.Background()))
	logs := allLogs(b.lsink)
	require.Len(t, logs, 1)
	assert.Equal(t, "standalone", logAttr(logs[0], "toolpair.outcome"))
	assert.Zero(t, b.stats().Waiting)
}

// TestTwoTracesPipelinesOfOneComponent: a synthetic span goes to the pipeline of the span
// that announced its call, not to whichever pipeline started last.
func TestTwoTracesPipelinesOfOneComponent(t *testing.T) {
	r := newRig(t, withPipelines("traces", "traces"))
	a, bp := r.tracesPipelines[0], r.tracesPipelines[1]
	sinkA, sinkB := r.tsinks[0], r.tsinks[1]
	require.NoError(t, a.ConsumeTraces(context.Background(), spanBatchOf(chatSpan(1, 1000, "c1"))))
	require.NoError(t, a.Shutdown(context.Background()))
	require.NoError(t, bp.Shutdown(context.Background()))
	assert.Equal(t, 2, sinkA.SpanCount(), "the chat span and its call's synthetic span")
	assert.Zero(t, sinkB.SpanCount())
}
