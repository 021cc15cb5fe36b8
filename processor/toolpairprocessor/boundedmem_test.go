// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

//go:build !race

// The race detector multiplies memory use, so this test runs without it, on its own Makefile
// line.

package toolpairprocessor

import (
	"context"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadatatest"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

const (
	boundedCalls   = 5_000_000
	boundedHeapMax = 150 << 20
)

// TestBoundedMemory feeds 5x10^6 calls that are never resolved (real Claude Code
// tool_decision records, 1,000 per batch, over 1,000 sessions) to a component with the
// default max_pending_calls, and checks that the heap stays under 150 MB throughout, that
// every call beyond the bound is evicted, and that every eviction is counted and gets its
// synthetic record. Time does not pass, so nothing expires.
func TestBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("feeds 5x10^6 records")
	}
	_, capture := readClaude(t, "parallel")
	var template plog.ResourceLogs
	for i := 0; i < capture.ResourceLogs().Len(); i++ {
		rl := capture.ResourceLogs().At(i)
		lrs := rl.ScopeLogs().At(0).LogRecords()
		lrs.RemoveIf(func(lr plog.LogRecord) bool { return logAttr(lr, "event.name") != "tool_decision" })
		if lrs.Len() > 0 {
			kept := 0
			lrs.RemoveIf(func(plog.LogRecord) bool { kept++; return kept > 1 })
			template = rl
			break
		}
	}
	require.Equal(t, 1, template.ScopeLogs().At(0).LogRecords().Len(), "a tool_decision record in the capture")

	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	evicted := 0
	next, err := consumer.NewLogs(func(_ context.Context, ld plog.Logs) error {
		forEachLog(ld, func(_ pcommon.Resource, lr plog.LogRecord) {
			if lr.EventName() == synth.EventNameInterrupted && logAttr(lr, synth.AttrInterruptReason) == "evicted" {
				evicted++
			}
		})
		return nil
	})
	require.NoError(t, err)
	f := newFactoryWithClock(newTestClock())
	cfg := f.CreateDefaultConfig().(*Config)
	bound := cfg.MaxPendingCalls
	lp, err := f.CreateLogs(context.Background(), metadatatest.NewSettings(tel), cfg, next)
	require.NoError(t, err)
	require.NoError(t, lp.Start(context.Background(), componenttest.NewNopHost()))

	var ms runtime.MemStats
	peak := uint64(0)
	const batch = 1000
	for n := 0; n < boundedCalls; n += batch {
		ld := plog.NewLogs()
		rl := ld.ResourceLogs().AppendEmpty()
		template.Resource().CopyTo(rl.Resource())
		lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
		lrs.EnsureCapacity(batch)
		src := template.ScopeLogs().At(0).LogRecords().At(0)
		for i := n; i < n+batch; i++ {
			lr := lrs.AppendEmpty()
			src.CopyTo(lr)
			lr.Attributes().PutStr("tool_use_id", "toolu_01"+strconv.FormatInt(int64(1e15)+int64(i), 36))
			lr.Attributes().PutStr("session.id", "session-"+strconv.Itoa(i%1000))
		}
		require.NoError(t, lp.ConsumeLogs(context.Background(), ld))
		if n%(500*batch) == 0 || n+batch >= boundedCalls {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			require.Lessf(t, ms.HeapAlloc, uint64(boundedHeapMax), "heap after %d calls", n+batch)
		}
	}
	t.Logf("heap at most %.1f MB after GC with %d calls pending", float64(peak)/(1<<20), bound)

	want := int64(boundedCalls - bound)
	assert.Equal(t, int(want), evicted, "a synthetic record per eviction")
	one := func(n int64) []metricdata.DataPoint[int64] { return []metricdata.DataPoint[int64]{{Value: n}} }
	metadatatest.AssertEqualProcessorToolpairUses(t, tel, one(boundedCalls), metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorToolpairPendingCalls(t, tel, one(int64(bound)), metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorToolpairOutcomes(t, tel, []metricdata.DataPoint[int64]{
		{Attributes: attribute.NewSet(attribute.String("toolpair.outcome", "interrupted"), attribute.String("toolpair.interrupt.reason", "evicted")), Value: want},
	}, metricdatatest.IgnoreTimestamp())
	require.NoError(t, lp.Shutdown(context.Background()))
}
