// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package pairing

import (
	"strconv"
	"testing"
	"time"
)

// BenchmarkMatchIdenticalCalls announces 10^4 calls of one tool with the same arguments in one
// scope (a loop), then resolves them with as many tool spans without a call ID (KindMatch),
// each pairing the earliest pending call: the cost of listing, finding and removing a call
// must not grow with the number of identical pending calls.
func BenchmarkMatchIdenticalCalls(b *testing.B) {
	const calls = 10_000
	uses := make([]Event, calls)
	for i := range uses {
		uses[i] = Event{Kind: KindUse, Key: Key{Tenant: "svc", Conversation: "s1", CallID: "call_" + strconv.Itoa(i)}, Time: int64(i), ToolName: "run_shell", Match: 7}
	}
	results := make([]Event, calls)
	for b.Loop() {
		e := New(Config{PairingTimeout: time.Hour, OrphanGrace: time.Minute, MaxPending: 2 * calls, Clock: newFakeClock()})
		e.Process(uses, nil, nil)
		for i := range results {
			results[i] = Event{Kind: KindMatch, Key: Key{Tenant: "svc", Conversation: "s1"}, Time: int64(calls + i), ToolName: "run_shell", Match: 7}
		}
		out := e.Process(results, nil, nil)
		if s := e.Stats(); s.Paired != calls || len(out) != calls {
			b.Fatalf("paired %d of %d", s.Paired, calls)
		}
	}
}
