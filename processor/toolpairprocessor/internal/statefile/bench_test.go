// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package statefile

import (
	"fmt"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// benchSnapshot is a snapshot of n pending calls announced by chat spans of 1,000 sessions,
// one call each, under one resource, with a step boundary queued in each session.
func benchSnapshot(n int, sinks Sinks) *pairing.Snapshot {
	res := pcommon.NewResource()
	res.Attributes().PutStr("service.name", "agent")
	res.Attributes().PutStr("host.name", "build-7")
	r := synth.NewResource(res)
	const now = 1_790_000_000_000_000_000
	snap := &pairing.Snapshot{}
	sessions := min(n, 1000)
	for i := range sessions {
		key := pairing.ConversationKey{Tenant: "agent", Conversation: fmt.Sprintf("session-%04d", i)}
		snap.Conversations = append(snap.Conversations, pairing.ConversationSnapshot{Key: key, UsesSeen: true, LastSeen: now + int64(i), LastRecord: now + int64(i),
			Closings: []pairing.ClosingSnapshot{{Kind: pairing.KindBoundary, Time: now + int64(i), Step: fmt.Sprintf("%016x", i)}}})
		snap.Queue = append(snap.Queue, pairing.QueuedClosing{Scope: i, Time: now + int64(i), Deadline: now + int64(i) + 1e9})
	}
	for i := range n {
		sc := snap.Conversations[i%sessions].Key
		o := &synth.Origin{Resource: r, Signal: synth.Traces, Next: sinks.Traces, ConversationAttr: "session.id", Conversation: sc.Conversation,
			TraceID: pcommon.TraceID{byte(i), byte(i >> 8), 1}, SpanID: pcommon.SpanID{byte(i), byte(i >> 8), 2}}
		snap.Calls = append(snap.Calls, pairing.CallSnapshot{
			State: pairing.CallPending, Key: pairing.Key{Tenant: sc.Tenant, Conversation: sc.Conversation, CallID: fmt.Sprintf("call_%08d", i)},
			ToolName: "run_shell", Step: fmt.Sprintf("%016x", i), UseTime: now + int64(i), Deadline: now + int64(i) + 3600e9,
			Seq: uint64(i + 1), Source: 1, UseSignal: 1, Payload: o,
		})
	}
	return snap
}

// BenchmarkEncode and BenchmarkDecode: a checkpoint of 10^4 and 10^5 pending calls
// (benchSnapshot). Metrics: ns/call, B/call (the checkpoint's size per pending call).
func BenchmarkEncode(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("pending=%d", n), func(b *testing.B) {
			snap := benchSnapshot(n, testSinks())
			size := 0
			for b.Loop() {
				blob, err := Encode(snap, testFP)
				if err != nil {
					b.Fatal(err)
				}
				size = len(blob)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/call")
			b.ReportMetric(float64(size)/float64(n), "B/call")
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("pending=%d", n), func(b *testing.B) {
			sinks := testSinks()
			blob, err := Encode(benchSnapshot(n, sinks), testFP)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := Decode(blob, testFP, sinks); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/call")
		})
	}
}
