// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package batch

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

type (
	spanBatch = Batch[ptrace.Traces, ptrace.Span, consumer.Traces, Spans]
	logBatch  = Batch[plog.Logs, plog.LogRecord, consumer.Logs, Logs]
)

// TestHeldRecordAbandonedWhenBatchFails: a batch that holds a record and stops before copying
// it in (a step failed) still opens the record's latch when it is reset: whoever releases the
// record is not left waiting, and releases nothing. Both signals.
func TestHeldRecordAbandonedWhenBatchFails(t *testing.T) {
	td := ptrace.NewTraces()
	td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sb := &spanBatch{Data: td, Next: new(consumertest.TracesSink)}
	sb.refs = append(sb.refs, Ref[ptrace.Traces, ptrace.Span]{rec: td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0), results: 1})
	ld := plog.NewLogs()
	ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lb := &logBatch{Data: ld, Next: new(consumertest.LogsSink)}
	lb.refs = append(lb.refs, Ref[plog.Logs, plog.LogRecord]{rec: ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0), results: 1})
	payloads := []any{sb.Hold(&pairing.Event{Ref: 0}), lb.Hold(&pairing.Event{Ref: 0})}

	released := make(chan Output)
	go func() {
		var out Output
		var res []pairing.Resolution
		for _, p := range payloads {
			res = append(res, pairing.Resolution{
				Outcome: pairing.OutcomePaired, Key: pairing.Key{CallID: "call_x"},
				UseTime: 1_000_000_000, ResultTime: 2_000_000_000, UseRef: -1, ResultRef: -1, ResultPayload: p,
			})
		}
		(&Applier{}).Apply(res, &out, nil, time.Now())
		released <- out
	}()
	select {
	case <-released:
		t.Fatal("released before the batch filled or abandoned its held records")
	case <-time.After(50 * time.Millisecond):
	}
	sb.Reset() // without FillHeld
	lb.Reset()
	select {
	case out := <-released:
		assert.False(t, out.Others(), "an abandoned record is not released")
	case <-time.After(5 * time.Second):
		t.Fatal("a releaser waits for a record its batch abandoned")
	}
	assert.False(t, payloads[0].(*HeldSpan).Wait(), "an abandoned span is not read")
	assert.False(t, payloads[1].(*HeldLog).Wait(), "an abandoned log record is not read")
}

// TestBatchRulesAgreeAcrossSignals: the rules that turn a record's items into events and
// write outcomes are the same for spans and log records: a use or rejection carries the
// record's origin, a result its start, an echo the echo source, a match result its hash, and
// a matched result receives the ID of the call it resolved.
func TestBatchRulesAgreeAcrossSignals(t *testing.T) {
	td := ptrace.NewTraces()
	span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	checkBatchRules(t, &spanBatch{Data: td}, span, span.Attributes())

	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	checkBatchRules(t, &logBatch{Data: ld}, lr, lr.Attributes())
}

func checkBatchRules[D, R, N any, S Signal[D, R, N]](t *testing.T, b *Batch[D, R, N, S], rec R, attrs pcommon.Map) {
	t.Helper()
	const source = 7
	origin := &synth.Origin{Conversation: "s"}
	b.Found.Items = []dialect.Item{
		{Kind: pairing.KindUse, CallID: "u", Time: 1},
		{Kind: pairing.KindReject, CallID: "r", Time: 2},
		{Kind: pairing.KindEcho, CallID: "e", Time: 3},
		{Kind: pairing.KindMatch, Time: 4, Match: 42},
		{Kind: pairing.KindResult, CallID: "c", Time: 5},
	}
	ref := b.AddRef(Pos{0, 0, 0}, rec, b.Found.Results())
	require.True(t, b.Announces())
	evs := b.AppendEvents(nil, ref, pairing.Key{Tenant: "t", Conversation: "s"}, source, 99, origin)
	require.Len(t, evs, 5)
	for _, ev := range evs {
		assert.Equal(t, pairing.Key{Tenant: "t", Conversation: "s", CallID: ev.Key.CallID}, ev.Key)
		assert.Equal(t, ref, ev.Ref)
	}
	assert.Same(t, origin, evs[0].Payload)
	assert.Same(t, origin, evs[1].Payload)
	assert.Nil(t, evs[2].Payload)
	assert.Equal(t, b.sig.Signal() == synth.Logs, evs[2].Source == dialect.SourceEchoLog, "an echo's source is its signal's history")
	assert.Equal(t, uint64(42), evs[3].Match)
	assert.Equal(t, int64(99), evs[3].Start)
	assert.Equal(t, int64(99), evs[4].Start)
	assert.Equal(t, int64(0), evs[0].Start)
	assert.Equal(t, uint8(source), evs[4].Source)

	paired := &pairing.Resolution{Outcome: pairing.OutcomePaired, Key: pairing.Key{CallID: "call_9"}, Matched: true, UseTime: 1_000_000, ResultTime: 3_000_000}
	b.MarkResult(ref, paired)
	b.WriteMarks()
	id, ok := attrs.Get(synth.AttrToolCallID)
	require.True(t, ok, "a match result receives the ID of its call")
	assert.Equal(t, "call_9", id.Str())
	outcome, _ := attrs.Get(synth.AttrOutcome)
	assert.Equal(t, "paired", outcome.Str())
	assert.False(t, b.RemoveMarked(), "a marked record stays")
	b.DropResult(ref, &pairing.Resolution{Outcome: pairing.OutcomeDuplicate, SameSource: true})
	assert.False(t, b.RemoveMarked(), "a record both kept and dropped stays")
}

// TestHeldSpanReleasedBeforeFilled: a held span released by another goroutine (another
// pipeline's call, the ticker) before its own call has copied it in waits for the copy, then
// leaves marked with its outcome.
func TestHeldSpanReleasedBeforeFilled(t *testing.T) {
	td := ptrace.NewTraces()
	span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.Attributes().PutStr("gen_ai.tool.call.id", "call_x")
	sink := new(consumertest.TracesSink)
	sb := &spanBatch{Data: td, Next: sink}
	sb.refs = append(sb.refs, Ref[ptrace.Traces, ptrace.Span]{rec: span, results: 1})
	h := sb.Hold(&pairing.Event{Ref: 0})
	require.NotNil(t, h)
	released := make(chan Output)
	go func() {
		var out Output
		(&Applier{}).Apply([]pairing.Resolution{{
			Outcome: pairing.OutcomePaired, Key: pairing.Key{CallID: "call_x"},
			UseTime: 1_000_000_000, ResultTime: 2_000_000_000, UseRef: -1, ResultRef: -1, ResultPayload: h,
		}}, &out, nil, time.Now())
		released <- out
	}()
	select {
	case <-released:
		t.Fatal("released before the span was copied in")
	case <-time.After(50 * time.Millisecond):
	}
	sb.FillHeld()
	out := <-released
	require.Len(t, out.toTraces, 1)
	assert.Same(t, sink, out.toTraces[0].next)
	require.Equal(t, 1, out.toTraces[0].td.SpanCount())
	attrs := out.toTraces[0].td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().AsRaw()
	assert.Equal(t, "call_x", attrs["gen_ai.tool.call.id"])
	assert.Equal(t, "paired", attrs["toolpair.outcome"])
	assert.Equal(t, int64(1000), attrs["toolpair.call.duration_ms"])
}
