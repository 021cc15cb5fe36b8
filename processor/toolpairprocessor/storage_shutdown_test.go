package toolpairprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadata"
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
	run1 := newLCPipelines(t, f, set, config(), "traces")
	run1.start(t, host)
	require.NoError(t, run1.traces[0].ConsumeTraces(context.Background(), ctTraces(ctChat(1, 1, 0, 0, 1000, "down"))))
	require.NoError(t, run1.comps[0].Shutdown(context.Background()))

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

