package pairing

import (
	"runtime"
	"strconv"
	"testing"
	"time"
)

// BenchmarkPendingCallMemory reports the heap bytes each pending call costs at 10^6 pending
// calls (metric "B/pending"), with realistic key shapes: one tenant, a session-sized scope,
// Anthropic-style call IDs allocated per call (as the dialects do), and a payload shared by
// the calls of a batch as the processor's origins are.
func BenchmarkPendingCallMemory(b *testing.B) {
	const calls = 1_000_000
	payload := &struct{ x [64]byte }{}
	for b.Loop() {
		e, err := New(Config{PairingTimeout: time.Hour, OrphanGrace: time.Minute, MaxPending: calls, Clock: newFakeClock()})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		batch := make([]Event, 0, 1000)
		for i := 0; i < calls; i++ {
			batch = append(batch, Event{
				Kind:     KindUse,
				Key:      Key{Tenant: "claude-code", Conversation: "72b63dad-969f-401e-a1e1-6208a465a3c6", CallID: "toolu_01" + strconv.FormatInt(int64(1e15)+int64(i), 36)},
				Time:     int64(i),
				ToolName: "Bash",
				Payload:  payload,
			})
			if len(batch) == cap(batch) {
				e.Process(batch, nil, nil)
				batch = batch[:0]
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if e.Stats().Pending != calls {
			b.Fatalf("pending %d", e.Stats().Pending)
		}
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/calls, "B/pending")
		runtime.KeepAlive(e)
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
		e, err := New(Config{PairingTimeout: time.Hour, OrphanGrace: time.Minute, MaxPending: calls, Clock: newFakeClock()})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		batch := make([]Event, 0, 1000)
		for i := 0; i < calls; i++ {
			k := Key{Tenant: "claude-code", Conversation: "session-" + strconv.Itoa(i/10), CallID: "toolu_01" + strconv.FormatInt(int64(1e15)+int64(i), 36)}
			batch = append(batch,
				Event{Kind: KindUse, Key: k, Time: int64(i), ToolName: "Bash"},
				Event{Kind: KindResult, Key: k, Time: int64(i) + 1, ToolName: "Bash"})
			if len(batch) == cap(batch) {
				e.Process(batch, nil, nil)
				batch = batch[:0]
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if s := e.Stats(); s.Paired != calls || e.resolved.n != calls {
			b.Fatalf("paired %d, resolved %d", s.Paired, e.resolved.n)
		}
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/calls, "B/resolved")
		runtime.KeepAlive(e)
	}
}

// BenchmarkPairUseResult measures one use and its result through the engine.
func BenchmarkPairUseResult(b *testing.B) {
	e, err := New(Config{PairingTimeout: time.Hour, OrphanGrace: time.Minute, MaxPending: 100_000, Clock: newFakeClock()})
	if err != nil {
		b.Fatal(err)
	}
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
