// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package pairing

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestClosingQueueFIFO: closings leave a closingQueue in the order they entered, across
// chunk boundaries, with pushes and pops interleaved at random, against a plain slice.
func TestClosingQueueFIFO(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var q closingQueue
	var model []int64
	next := int64(0)
	for step := 0; step < 200000; step++ {
		// Phases that mostly grow, then mostly shrink, so the queue spans several chunks.
		grow := (step/20000)%2 == 0
		if len(model) == 0 || (grow && rng.IntN(10) < 7) || (!grow && rng.IntN(10) < 3) {
			q.push(closing{time: next})
			model = append(model, next)
			next++
			continue
		}
		require.Equal(t, model[0], q.front().time)
		require.Equal(t, model[0], q.pop().time)
		model = model[1:]
		require.Equal(t, len(model) == 0, q.empty())
	}
	for len(model) > 0 {
		require.Equal(t, model[0], q.pop().time)
		model = model[1:]
	}
	require.True(t, q.empty())
}

// TestClosingQueueSteadyAllocs: a queue that takes one closing for each it gives, at any
// length, allocates nothing once it has reached that length.
func TestClosingQueueSteadyAllocs(t *testing.T) {
	var q closingQueue
	for i := range 3*closingChunk + 17 {
		q.push(closing{time: int64(i)})
	}
	allocs := testing.AllocsPerRun(10, func() {
		for range 2 * closingChunk {
			q.push(closing{time: 1})
			q.pop()
		}
	})
	require.Zero(t, allocs)
}
