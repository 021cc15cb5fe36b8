// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadatatest"
)

// TestCrashWindowReleasedResultSurvivesTheSend: window "what the processor sends on its own is
// decided before it is sent, and kept nowhere until the next consumer took it", found by the
// two-tier crash test once the windows of crashwindow_test.go were closed (seed
// 1796302752833606426: ten tool_result lines of a Claude Code transcript, read by front-2 ahead
// of their tool_use lines, read by front-1, lost). A result that came before its use is held:
// its batch returns with the record taken out (ErrSkipProcessingData), its sender is answered and
// forgets it; the batch's record now keeps the held record (crashwindow_test.go,
// TestCrashWindowHeldResultSurvives). Its use comes in a later batch: the pair is decided, the
// batch's resolution record says the call is resolved (finishBatch, batchflow.go), then the held
// result, released, leaves in a delivery of the processor's own (send: out.Send), before the
// batch itself. A kill between the record's write and the next consumer's answer to that
// delivery loses the result for good: the restarted collector knows the call as resolved and
// the record no more (markResolved drops it), the outbox keeps only what a next consumer refused
// (send: outbox.Add on a refusal), and the use's sender, which sends the use's batch again since
// it got no answer, brings the use only. The same holds for the synthetic records of a batch
// (a next_step closing, an eviction) and of the ticker (emit, with the record written first).
//
// The test takes the storage as it is at the instant the next consumer receives the released
// result (what a kill at that instant leaves), and starts a collector on it; the use's batch is
// delivered to it again, as its sender would. The result must come out of the restarted
// collector, paired: it cannot have left the killed one.
//
// Fix: the records the processor sends on its own are written ahead, in the resolution record
// that decides them (or as toolpair.unsent.{n} entries in the same storage batch), and deleted
// once a next consumer took them; at start, what is still there is sent again (at least once: a
// copy the next hop had taken before the kill is a record sent twice, with the same outcome).
// Held records are already serialised for the record (statestore.MarshalHeld); synthetic
// records can be made again from the resolved call's snapshot.
func TestCrashWindowReleasedResultSurvivesTheSend(t *testing.T) {
	const call = "toolu_1"
	clock := newTestClock()
	ext := newMemStorage()
	var (
		mu      sync.Mutex
		atKill  map[string][]byte // the storage when the released result reached the next consumer
		sentOut []string          // the marks of what the killed collector's next consumer took before
	)
	next, err := consumer.NewLogs(func(_ context.Context, ld plog.Logs) error {
		mu.Lock()
		defer mu.Unlock()
		if atKill != nil {
			return nil // after the kill: nothing leaves
		}
		var marks []string
		forEachLog(ld, func(_ pcommon.Resource, lr plog.LogRecord) {
			if logAttr(lr, "tool_use_id") == call && logAttr(lr, "toolpair.outcome") != "" {
				atKill = ext.snapshot()
			}
			if o := logAttr(lr, "toolpair.outcome"); o != "" {
				marks = append(marks, logAttr(lr, "tool_use_id")+":"+o)
			}
		})
		if atKill == nil {
			sentOut = append(sentOut, marks...)
		}
		return nil
	})
	require.NoError(t, err)

	// The killed collector: a logs pipeline before next, with storage and no checkpoint.
	f := newFactoryWithClock(clock)
	cfg := f.CreateDefaultConfig().(*Config)
	id := memStorageID
	cfg.Storage, cfg.CheckpointInterval, cfg.Duplicates = &id, time.Hour, DispositionMark
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	lp, err := f.CreateLogs(context.Background(), metadatatest.NewSettings(tel), cfg, next)
	require.NoError(t, err)
	require.NoError(t, lp.Start(context.Background(), storageHost{memStorageID: ext}))
	t.Cleanup(func() { _ = lp.Shutdown(context.Background()) })

	result := ctLogs(ctClaudeResult(call, 1500))
	use := ctLogs(ctClaudeDecision(call, "accept", 1000))
	require.NoError(t, lp.ConsumeLogs(context.Background(), result)) // held: its sender is answered
	redo := plog.NewLogs()
	use.CopyTo(redo)
	require.NoError(t, lp.ConsumeLogs(context.Background(), use)) // the pair: the held result is released
	mu.Lock()
	require.NotNil(t, atKill, "the released result reached the next consumer")
	killed := &memStorage{data: maps.Clone(atKill)}
	require.Empty(t, sentOut, "nothing of the call had left before")
	mu.Unlock()

	// The restarted collector, on the storage the kill left; the use's sender, unanswered,
	// delivers its batch again.
	run2 := startRun(t, clock, killed, func(c *Config) { c.CheckpointInterval = time.Hour })
	run2.consumeLogs(redo)
	run2.advance(time.Second)
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, []string{"log:paired"}, run2.marks(nil)[call], "the result, decided paired before the kill, leaves the restarted collector")
	}, 2*time.Second, 20*time.Millisecond)
}
