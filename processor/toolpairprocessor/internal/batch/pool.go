// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package batch

import (
	"runtime"
	"sync"
)

// Pool keeps the scratch state of a signal's batches (spanBatch, logBatch) between calls:
// at most GOMAXPROCS of them, which the garbage collector leaves alone. sync.Pool lets go of
// its objects every other collection, and each batch after that grew its slices (events,
// refs, resolutions) from nothing again: about 90 bytes allocated per record on the peer
// benchmark's log events, a third of what the processor allocated.
//
// A batch's scratch keeps the capacity of the largest batch it held (a few hundred bytes per
// record): at most GOMAXPROCS such scratches stay allocated.
type Pool[T any] struct {
	// New makes a scratch when none is free.
	New func() *T

	mu   sync.Mutex
	free []*T
	keep int // GOMAXPROCS when the first scratch was put back
}

// Get returns a free scratch, or a new one.
func (p *Pool[T]) Get() *T {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		x := p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return x
	}
	p.mu.Unlock()
	return p.New()
}

// Put returns x, reset by the caller, for a later Get; past GOMAXPROCS free scratches (as it
// was at the first Put) it is dropped.
func (p *Pool[T]) Put(x *T) {
	p.mu.Lock()
	if p.keep == 0 {
		p.keep = runtime.GOMAXPROCS(0) // read once: it takes the scheduler's lock
	}
	if len(p.free) < p.keep {
		p.free = append(p.free, x)
	}
	p.mu.Unlock()
}
