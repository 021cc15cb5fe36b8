// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package outbox

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// countingTel counts what an Outbox reports.
type countingTel struct {
	mu              sync.Mutex
	resent, refused int
	givenUp         map[Reason]int
}

func (c *countingTel) Resent(_ context.Context, _ bool, n int) {
	c.mu.Lock()
	c.resent += n
	c.mu.Unlock()
}

func (c *countingTel) Refused(_ context.Context, _ bool, n int, _ error) {
	c.mu.Lock()
	c.refused += n
	c.mu.Unlock()
}

func (c *countingTel) GivenUp(_ context.Context, _ bool, n int, why Reason, _ error) {
	c.mu.Lock()
	if c.givenUp == nil {
		c.givenUp = map[Reason]int{}
	}
	c.givenUp[why] += n
	c.mu.Unlock()
}

// flaky refuses while down is set, and keeps what it takes.
type flaky struct {
	consumertest.TracesSink
	mu   sync.Mutex
	down bool
	err  error
}

func (f *flaky) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	f.mu.Lock()
	down, err := f.down, f.err
	f.mu.Unlock()
	if down {
		return err
	}
	return f.TracesSink.ConsumeTraces(ctx, td)
}

func (f *flaky) set(down bool) {
	f.mu.Lock()
	f.down = down
	f.mu.Unlock()
}

func spans(names ...string) ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	for _, n := range names {
		ss.Spans().AppendEmpty().SetName(n)
	}
	return td
}

// memPersister keeps what an Outbox stores.
type memPersister struct {
	mu    sync.Mutex
	items map[uint64]int
}

func (p *memPersister) Put(_ context.Context, it *Item) error {
	p.mu.Lock()
	p.items[it.Seq] = it.Records()
	p.mu.Unlock()
	return nil
}

func (p *memPersister) Delete(_ context.Context, seq uint64) error {
	p.mu.Lock()
	delete(p.items, seq)
	p.mu.Unlock()
	return nil
}

// TestOutboxSendsAgainOldestFirst: refused deliveries wait while the next consumer refuses,
// paced by the backoff, and leave in the order they came once it takes them, deleted from
// storage as they go.
func TestOutboxSendsAgainOldestFirst(t *testing.T) {
	ctx := context.Background()
	tel := &countingTel{}
	next := &flaky{down: true, err: errors.New("down")}
	p := &memPersister{items: map[uint64]int{}}
	b := New(Options{MaxBytes: 1 << 20, MinBackoff: time.Second, MaxBackoff: 4 * time.Second, Telemetry: tel})
	require.NoError(t, b.SetPersister(ctx, p))
	b.Add(ctx, NewTraces(next, spans("a")), next.err)
	b.Add(ctx, NewTraces(next, spans("b", "c")), next.err)
	assert.Equal(t, 3, b.Len())
	assert.Len(t, p.items, 2, "stored while they wait")

	now := time.Now()
	b.Flush(ctx, now) // before MinBackoff: not tried
	assert.Equal(t, 0, tel.refused)
	b.Flush(ctx, now.Add(2*time.Second))
	assert.Equal(t, 1, tel.refused, "the first refused ends the flush")
	b.Flush(ctx, now.Add(2*time.Second+500*time.Millisecond))
	assert.Equal(t, 1, tel.refused, "the next try waits the backoff")

	next.set(false)
	b.Flush(ctx, now.Add(10*time.Second))
	next.set(true)
	b.Add(ctx, NewTraces(next, spans("d")), next.err)
	b.Flush(ctx, now.Add(20*time.Second))
	next.set(false)
	b.Flush(ctx, now.Add(20*time.Second+1500*time.Millisecond))
	assert.Equal(t, 0, b.Len(), "a success resets the backoff: the next refusal waits MinBackoff again")
	assert.Equal(t, 0, b.Len())
	assert.Equal(t, 4, tel.resent)
	assert.Empty(t, p.items)
	var got []string
	for _, td := range next.AllTraces() {
		ss := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		for i := 0; i < ss.Len(); i++ {
			got = append(got, ss.At(i).Name())
		}
	}
	assert.Equal(t, []string{"a", "b", "c", "d"}, got)
}

// TestOutboxBoundAndPermanent: past MaxBytes the oldest is given up; a permanent error is never
// kept.
func TestOutboxBoundAndPermanent(t *testing.T) {
	ctx := context.Background()
	tel := &countingTel{}
	next := &flaky{down: true, err: errors.New("down")}
	one := NewTraces(next, spans("a"))
	b := New(Options{MaxBytes: 2*one.Size + 1, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond, Telemetry: tel})
	for range 3 {
		b.Add(ctx, NewTraces(next, spans("a")), next.err)
	}
	assert.Equal(t, 2, b.Len())
	assert.Equal(t, 1, tel.givenUp[ReasonBound])

	b.Add(ctx, NewTraces(next, spans("p")), consumererror.NewPermanent(errors.New("bad")))
	assert.Equal(t, 2, b.Len())
	assert.Equal(t, 1, tel.givenUp[ReasonPermanent])

	logs := &consumertest.LogsSink{}
	ld := plog.NewLogs()
	ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	b.Add(ctx, NewLogs(logs, ld), next.err)
	held := b.Len()
	b.GiveUp(ctx)
	assert.Equal(t, 0, b.Len())
	assert.Equal(t, held, tel.givenUp[ReasonShutdown], "a shutdown without storage gives up what is held")
}
