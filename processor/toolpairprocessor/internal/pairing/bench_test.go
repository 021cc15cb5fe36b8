// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package pairing

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// heapPerCall returns the heap bytes per call that an engine bounded at calls pending calls
// holds after it processed, in batches of about 1,000, the events events(i) of each call i,
// once check accepts the engine.
func heapPerCall(b *testing.B, calls int, events func(i int) []Event, check func(*Engine) error) float64 {
	e := New(Config{PairingTimeout: time.Hour, OrphanGrace: time.Minute, MaxPending: calls, Clock: newFakeClock()})
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	batch := make([]Event, 0, 1000)
	for i := range calls {
		batch = append(batch, events(i)...)
		if len(batch) >= cap(batch) {
			e.Process(batch, nil, nil)
			batch = batch[:0]
		}
	}
	e.Process(batch, nil, nil)
	runtime.GC()
	runtime.ReadMemStats(&after)
	if err := check(e); err != nil {
		b.Fatal(err)
	}
	runtime.KeepAlive(e)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(calls)
}

// callKey is the key of call i in the memory benchmarks: one tenant, conversations of perConv
// calls (all in one when perConv is 0), Anthropic-style call IDs allocated per call (as the
// dialects do).
func callKey(i, perConv int) Key {
	conv := "72b63dad-969f-401e-a1e1-6208a465a3c6"
	if perConv > 0 {
		conv = "session-" + strconv.Itoa(i/perConv)
	}
	return Key{Tenant: "claude-code", Conversation: conv, CallID: "toolu_01" + strconv.FormatInt(int64(1e15)+int64(i), 36)}
}

// BenchmarkPendingCallMemory reports the heap bytes each pending call costs at 10^6 pending
// calls (metric "B/pending"), with realistic key shapes: one tenant, a session-sized scope,
// Anthropic-style call IDs, and a payload shared by the calls of a batch as the processor's
// origins are.
func BenchmarkPendingCallMemory(b *testing.B) {
	const calls = 1_000_000
	payload := &struct{ x [64]byte }{}
	for b.Loop() {
		per := heapPerCall(b, calls, func(i int) []Event {
			return []Event{{Kind: KindUse, Key: callKey(i, 0), Time: int64(i), ToolName: "Bash", Payload: payload}}
		}, func(e *Engine) error {
			if n := e.Stats().Pending; n != calls {
				return fmt.Errorf("pending %d", n)
			}
			return nil
		})
		b.ReportMetric(per, "B/pending")
	}
}

// BenchmarkResolvedCallMemory reports the heap each remembered resolved call costs (metric
// B/resolved): 10^5 calls (Config.MaxResolved's default at the default max_pending_calls),
// each announced and resolved, 10 a conversation as in the peer benchmark's workloads, so that
// the conversations they keep alive are counted too. The calls' IDs are the engine's copies;
// the pending entry each call had is let go at resolution (resolved.go).
func BenchmarkResolvedCallMemory(b *testing.B) {
	const calls = 100_000
	for b.Loop() {
		per := heapPerCall(b, calls, func(i int) []Event {
			k := callKey(i, 10)
			return []Event{
				{Kind: KindUse, Key: k, Time: int64(i), ToolName: "Bash"},
				{Kind: KindResult, Key: k, Time: int64(i) + 1, ToolName: "Bash"},
			}
		}, func(e *Engine) error {
			if s := e.Stats(); s.Paired != calls || e.resolved.n != calls {
				return fmt.Errorf("paired %d, resolved %d", s.Paired, e.resolved.n)
			}
			return nil
		})
		b.ReportMetric(per, "B/resolved")
	}
}

// BenchmarkPairUseResult measures one use and its result through the engine.
func BenchmarkPairUseResult(b *testing.B) {
	e := New(Config{PairingTimeout: time.Hour, OrphanGrace: time.Minute, MaxPending: 100_000, Clock: newFakeClock()})
	ids := make([]string, 4096)
	for i := range ids {
		ids[i] = "call_" + strconv.Itoa(i)
	}
	evs := make([]Event, 2)
	var out []Resolution
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		k := Key{Tenant: "svc", Conversation: strconv.Itoa(i / 4096), CallID: ids[i%4096]}
		evs[0] = Event{Kind: KindUse, Key: k, Time: 1}
		evs[1] = Event{Kind: KindResult, Key: k, Time: 2}
		out = e.Process(evs, nil, out[:0])
		i++
	}
}
