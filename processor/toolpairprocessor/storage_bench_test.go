// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadata"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/statefile"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/statestore"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
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
			e := pairing.New(pairing.Config{PairingTimeout: time.Hour, OrphanGrace: time.Minute, MaxPending: 2 * n})
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

// BenchmarkResolutionRecord: the per-batch cost of the resolution record, through a
// component without storage and with it (every batch that resolves or adds anything writes
// its record to an in-memory storage client; no checkpoint runs), on two workloads of traces
// batches: paired_in_batch, the traces benchmark workload (1,000 spans, 30% tool records,
// whose calls pair within the batch: the record holds the batch's resolutions, and the turn
// spans it saw); pending_across_batches (recordWorkload: 300 spans announcing 150 calls,
// each of them paired by the next batch: the record holds 150 resolutions and 150 new pending
// calls with their origins and queued step boundaries). The difference in ns/op between
// no_storage and storage is the per-batch cost of the record; B/record is its size.
//
// The record alone (sub-benchmarks record/...): encoding the record of 150 paired calls in
// runs of 5 per scope (UUID scopes, 29-byte call IDs), with_additions also 150 pending calls
// of 30 scopes announced 5 per span, in spans of one resource, each scope with a queued
// boundary, and
// writing it to an in-memory storage client. Metrics: ns/op per batch, B/record.
func BenchmarkResolutionRecord(b *testing.B) {
	res := make([]pairing.Resolution, 150)
	for i := range res {
		res[i] = pairing.Resolution{Outcome: pairing.OutcomePaired, Key: pairing.Key{
			Tenant: "claude-code", Conversation: fmt.Sprintf("5d1e536b-185e-4707-b0a1-94dd8394%04d", i/5),
			CallID: fmt.Sprintf("toolu_01ABCDEFGHIJKLMNOPQ%04d", i),
		}}
	}
	for name, added := range map[string]*pairing.Snapshot{"resolutions": nil, "with_additions": benchAdded(150)} {
		b.Run("record/"+name, func(b *testing.B) {
			client := &memClient{m: newMemStorage()}
			size := 0
			for i := 0; b.Loop(); i++ {
				rec, err := statefile.EncodeRecord(res, added, [8]byte{})
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
	}
	for _, workload := range []string{"paired_in_batch", "pending_across_batches"} {
		for _, withStorage := range []bool{false, true} {
			name := workload + "/no_storage"
			if withStorage {
				name = workload + "/storage"
			}
			b.Run(name, func(b *testing.B) {
				var next func() ptrace.Traces
				if workload == "paired_in_batch" {
					w := newSpanWorkload(b)
					next = func() ptrace.Traces { td, _ := w.batch(); return td }
				} else {
					next = (&recordWorkload{}).batch
				}
				var tp processor.Traces
				var ext *memStorage
				if withStorage {
					ext = newMemStorage()
					tp, _ = storageBenchComponent(b, ext)
				} else {
					tp, _ = storageBenchComponent(b, nil)
				}
				for i := 0; b.Loop(); i++ {
					b.StopTimer()
					td := next()
					b.StartTimer()
					if err := tp.ConsumeTraces(context.Background(), td); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				if ext != nil {
					size, n := 0, 0
					for k, v := range ext.snapshot() {
						if strings.HasPrefix(k, statestore.ResolvedKeyPrefix) {
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
}

// recordWorkload makes batches of 300 spans of 30 sessions of one tenant: in each session a
// chat span announcing 5 calls, and the 5 tool spans of the calls its session's chat span
// announced in the previous batch.
type recordWorkload struct{ n int }

func (w *recordWorkload) batch() ptrace.Traces {
	td := ptrace.NewTraces()
	for s := range 30 {
		session := fmt.Sprintf("5d1e536b-185e-4707-b0a1-94dd8394%04d", s)
		calls := make([]string, 5)
		for c := range calls {
			calls[c] = fmt.Sprintf("toolu_01ABCDEFGHIJ%06d%04d", w.n, s*5+c)
		}
		at := int64(w.n) * 1000
		ctTraces(ctWith(ctChat(byte(s+1), byte(w.n%200+1), 0, at, at+10, calls...), "session.id", session)).ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
		if w.n > 0 {
			for c := range 5 {
				id := fmt.Sprintf("toolu_01ABCDEFGHIJ%06d%04d", w.n-1, s*5+c)
				ctTraces(ctWith(ctTool(byte(s+1), byte(c+201), 0, id, at-500, at-100), "session.id", session)).ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
			}
		}
	}
	w.n++
	return td
}

// benchAdded is what a batch announcing n pending calls in spans of one resource adds, 5
// calls per scope, each scope with a queued step boundary.
func benchAdded(n int) *pairing.Snapshot {
	res := pcommon.NewResource()
	res.Attributes().PutStr("service.name", "claude-code")
	res.Attributes().PutStr("service.version", "2.0.14")
	res.Attributes().PutStr("host.name", "build-agent-17")
	r := synth.NewResource(res)
	s := &pairing.Snapshot{}
	var o *synth.Origin
	for i := range n {
		sk := pairing.ConversationKey{Tenant: "claude-code", Conversation: fmt.Sprintf("5d1e536b-185e-4707-b0a1-94dd8394%04d", i/5)}
		if i%5 == 0 {
			s.Conversations = append(s.Conversations, pairing.ConversationSnapshot{Key: sk, UsesSeen: true, LastSeen: 1_800_000_000_000_000_000, LastRecord: 1_800_000_000_000_000_000,
				Closings: []pairing.ClosingSnapshot{{Kind: pairing.KindBoundary, Time: 1_800_000_000_000_000_000, Step: fmt.Sprintf("%016x", i)}}})
			s.Queue = append(s.Queue, pairing.QueuedClosing{Scope: len(s.Conversations) - 1, Time: 1_800_000_000_000_000_000, Deadline: 1_800_000_030_000_000_000})
		}
		if i%5 == 0 { // the calls of one chat span share its origin
			o = &synth.Origin{Resource: r, ConversationAttr: "session.id", Conversation: sk.Conversation, Signal: synth.Traces,
				TraceID: pcommon.TraceID{byte(i / 5), 1}, SpanID: pcommon.SpanID{byte(i / 5), 2}, ParentSpanID: pcommon.SpanID{3}}
		}
		s.Calls = append(s.Calls, pairing.CallSnapshot{State: pairing.CallPending, Key: pairing.Key{Tenant: sk.Tenant, Conversation: sk.Conversation, CallID: fmt.Sprintf("toolu_01ABCDEFGHIJKLMNOPQ%04d", i)},
			ToolName: "Bash", Step: fmt.Sprintf("%016x", i/5*5), UseTime: 1_800_000_000_000_000_000, Deadline: 1_800_000_600_000_000_000, Seq: uint64(i + 1), Payload: o, UseSignal: 1})
	}
	return s
}
