package toolpairprocessor

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadata"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/statefile"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/statestore"
)

// storageBenchComponent is a component whose state is kept in ext (nil: no storage), with
// the default configuration otherwise.
func storageBenchComponent(b *testing.B, ext component.Component) (processor.Traces, *shared) {
	b.Helper()
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	if ext != nil {
		id := memStorageID
		cfg.Storage = &id
		// The benchmark triggers the checkpoints it measures.
		cfg.CheckpointInterval = time.Hour
	}
	tp, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	if err := tp.Start(context.Background(), storageHost{memStorageID: ext}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	s := sharedOf(cfg)
	return tp, s
}

// pendingCalls announces n calls that stay pending: chat spans of 1,000 sessions, one call
// each, in batches of 1,000.
func pendingCalls(b *testing.B, tp processor.Traces, n int) {
	b.Helper()
	for i := 0; i < n; i += 1000 {
		td := ptrace.NewTraces()
		for j := i; j < min(i+1000, n); j++ {
			sp := ctWith(ctChat(byte(j%250+1), byte(j%250+1), 0, int64(j), int64(j)+10, fmt.Sprintf("call_%08d", j)),
				"session.id", fmt.Sprintf("session-%04d", j%1000))
			ctTraces(sp).ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
		}
		if err := tp.ConsumeTraces(context.Background(), td); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckpoint: one checkpoint of the whole state (snapshot under the engine's lock,
// encoding, write to an in-memory storage client) with 10^4 and 10^5 pending calls of 1,000
// sessions. Metrics: ns/op (the whole checkpoint), lock-ms (the snapshot, the only part
// that holds the pairing lock), B/checkpoint (the size written), restore-ms (decoding it and
// rebuilding an engine from it, as a start does), encode-ns/call and decode-ns/call (the
// stored format alone, statefile.Encode and statefile.Decode, per pending call). The storage
// write itself is a map insert here: a storage extension adds its own cost (file_storage: one
// bbolt transaction).
func BenchmarkCheckpoint(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("pending=%d", n), func(b *testing.B) {
			ext := newMemStorage()
			tp, s := storageBenchComponent(b, ext)
			pendingCalls(b, tp, n)
			if got := engineStats(s).Pending; got != n {
				b.Fatalf("%d pending calls, want %d", got, n)
			}
			var lock time.Duration
			for range 3 {
				began := time.Now()
				s.engine.Snapshot(statestore.MarshalHeld)
				lock += time.Since(began)
			}
			b.ResetTimer()
			for b.Loop() {
				if err := s.store.Checkpoint(context.Background(), statestore.TriggerInterval); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			var blob []byte
			for k, v := range ext.snapshot() {
				if strings.HasPrefix(k, statestore.StateKeyPrefix) {
					blob = v // the one checkpoint left
				}
			}
			began := time.Now()
			st, err := statefile.Decode(blob, stateFingerprint(s.cfg), statefile.Sinks{Traces: consumertest.NewNop()})
			if err != nil {
				b.Fatal(err)
			}
			e, err := pairing.New(pairing.Config{PairingTimeout: time.Hour, OrphanGrace: time.Minute, MaxPending: 2 * n})
			if err != nil {
				b.Fatal(err)
			}
			if rs, err := e.Restore(st, nil); err != nil || rs.Pending != n {
				b.Fatalf("restored %d pending calls (%v), want %d", rs.Pending, err, n)
			}
			b.ReportMetric(float64(time.Since(began))/1e6, "restore-ms")
			snap := s.engine.Snapshot(statestore.MarshalHeld)
			began = time.Now()
			if _, err := statefile.Encode(snap, stateFingerprint(s.cfg)); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(time.Since(began))/float64(n), "encode-ns/call")
			began = time.Now()
			if _, err := statefile.Decode(blob, stateFingerprint(s.cfg), statefile.Sinks{Traces: consumertest.NewNop()}); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(time.Since(began))/float64(n), "decode-ns/call")
			b.ReportMetric(float64(lock)/3e6, "lock-ms")
			b.ReportMetric(float64(len(blob)), "B/checkpoint")
		})
	}
}

// BenchmarkResolutionRecord: the traces benchmark workload (batches of 1,000 spans, 30% tool
// records, whose calls pair within the batch) through a component without storage and with
// it, where every batch that resolves calls also writes its resolution record. The
// difference in ns/op is the per-batch cost of the record; B/record is its size.
//
// The record alone (sub-benchmark record): encoding the resolution record of 150 paired
// calls in runs of 5 per scope (UUID scopes, 29-byte call IDs) and writing it to an
// in-memory storage client. Metrics: ns/op per batch, B/record.
func BenchmarkResolutionRecord(b *testing.B) {
	b.Run("record", func(b *testing.B) {
		res := make([]pairing.Resolution, 150)
		for i := range res {
			res[i] = pairing.Resolution{Outcome: pairing.OutcomePaired, Key: pairing.Key{
				Tenant: "claude-code", Conversation: fmt.Sprintf("5d1e536b-185e-4707-b0a1-94dd8394%04d", i/5),
				CallID: fmt.Sprintf("toolu_01ABCDEFGHIJKLMNOPQ%04d", i),
			}}
		}
		client := &memClient{m: newMemStorage()}
		size := 0
		for i := 0; b.Loop(); i++ {
			rec, err := statefile.EncodeResolutions(res)
			if err != nil {
				b.Fatal(err)
			}
			size = len(rec)
			if err := client.Set(context.Background(), statestore.ResolvedKey(uint64(i)), rec); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(size), "B/record")
	})
	for _, withStorage := range []bool{false, true} {
		name := "no_storage"
		if withStorage {
			name = "storage"
		}
		b.Run(name, func(b *testing.B) {
			w := newSpanWorkload(b)
			var tp processor.Traces
			var ext *memStorage
			if withStorage {
				ext = newMemStorage()
				tp, _ = storageBenchComponent(b, ext)
			} else {
				tp, _ = storageBenchComponent(b, nil)
			}
			batches := make([]ptrace.Traces, 16)
			for i := range batches {
				batches[i], _ = w.batch()
			}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				td := ptrace.NewTraces()
				batches[i%len(batches)].CopyTo(td)
				if i%len(batches) == len(batches)-1 {
					batches[i%len(batches)], _ = w.batch() // new call IDs: no duplicates
				}
				b.StartTimer()
				if err := tp.ConsumeTraces(context.Background(), td); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if ext != nil {
				size, n := 0, 0
				for k, v := range ext.snapshot() {
					if len(k) > len(statestore.ResolvedKeyPrefix) && k[:len(statestore.ResolvedKeyPrefix)] == statestore.ResolvedKeyPrefix {
						size += len(v)
						n++
					}
				}
				if n > 0 {
					b.ReportMetric(float64(size)/float64(n), "B/record")
				}
			}
		})
	}
}
