// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadata"
)

// TestHeldResultsAcrossConcurrentPipelines: one pipeline of a component sends results before
// their uses (each is held: the engine keeps an empty record, copied in after the engine
// returns) while another pipeline of the same component announces the uses at the same time,
// so a held result is often released by the other pipeline's call, before or while its own
// call copies it in. Every result leaves once, marked paired, through its own pipeline, with
// its attributes intact (run with -race).
func TestHeldResultsAcrossConcurrentPipelines(t *testing.T) {
	const calls = 400
	clock := newTestClock()
	f := newFactoryWithClock(clock)
	cfg := f.CreateDefaultConfig().(*Config)
	ctx := context.Background()
	set := processortest.NewNopSettings(metadata.Type)
	resultsSink, usesSink := new(consumertest.TracesSink), new(consumertest.TracesSink)
	results, err := f.CreateTraces(ctx, set, cfg, resultsSink)
	require.NoError(t, err)
	uses, err := f.CreateTraces(ctx, set, cfg, usesSink)
	require.NoError(t, err)
	require.NoError(t, results.Start(ctx, componenttest.NewNopHost()))
	require.NoError(t, uses.Start(ctx, componenttest.NewNopHost()))

	id := func(i int) string { return fmt.Sprintf("call_%03d", i) }
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < calls; i++ {
			assert.NoError(t, results.ConsumeTraces(ctx, spanBatchOf(toolSpan(7, id(i), 2000))))
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < calls; i++ {
			assert.NoError(t, uses.ConsumeTraces(ctx, spanBatchOf(chatSpan(7, 1000, id(i)))))
		}
	}()
	wg.Wait()
	clock.Advance(time.Minute)
	require.NoError(t, results.Shutdown(ctx))
	require.NoError(t, uses.Shutdown(ctx))

	got := map[string]string{}
	for _, td := range resultsSink.AllTraces() {
		for _, s := range allSpans(td) {
			callID := strAttr(s, "gen_ai.tool.call.id")
			_, twice := got[callID]
			require.False(t, twice, callID)
			got[callID] = strAttr(s, "toolpair.outcome")
			assert.Equal(t, "run_shell", strAttr(s, "gen_ai.tool.name"))
		}
	}
	require.Len(t, got, calls)
	for callID, outcome := range got {
		assert.Equal(t, "paired", outcome, callID)
	}
	for _, td := range usesSink.AllTraces() {
		assert.Equal(t, 0, countNamed(td, "execute_tool run_shell"), "no result goes to the other pipeline")
	}
}

func countNamed(td ptrace.Traces, name string) int {
	n := 0
	for _, s := range allSpans(td) {
		if s.Name() == name {
			n++
		}
	}
	return n
}
