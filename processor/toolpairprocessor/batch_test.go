package toolpairprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// TestBatchEmptiedByHoldingIsNotForwarded: a batch whose only records are held (results
// before their uses) is not passed on empty; a batch with a held record and another record
// passes the other one on; the held record leaves, marked, once its use comes. Both signals.
func TestBatchEmptiedByHoldingIsNotForwarded(t *testing.T) {
	t.Run("traces", func(t *testing.T) {
		b := newRig(t)
		ctx := context.Background()
		require.NoError(t, b.traces.ConsumeTraces(ctx, batch(toolSpan(7, "call_a", 2000))))
		assert.Empty(t, b.tsink.AllTraces(), "a batch emptied by holding is not forwarded")

		require.NoError(t, b.traces.ConsumeTraces(ctx, batch(toolSpan(7, "call_b", 2000), chatSpan(8, 500))))
		require.Len(t, b.tsink.AllTraces(), 1)
		spans := allSpans(b.tsink.AllTraces()[0])
		require.Len(t, spans, 1, "the held span leaves the batch, the other stays")
		assert.Empty(t, strAttr(spans[0], "gen_ai.tool.call.id"))

		require.NoError(t, b.traces.ConsumeTraces(ctx, batch(chatSpan(7, 1000, "call_a", "call_b"))))
		outcomes := map[string]string{}
		for _, td := range b.tsink.AllTraces() {
			for _, s := range allSpans(td) {
				if id := strAttr(s, "gen_ai.tool.call.id"); id != "" {
					outcomes[id] = strAttr(s, "toolpair.outcome")
				}
			}
		}
		assert.Equal(t, map[string]string{"call_a": "paired", "call_b": "paired"}, outcomes)
	})
	t.Run("logs", func(t *testing.T) {
		b := newRig(t)
		ctx := context.Background()
		require.NoError(t, b.logs.ConsumeLogs(ctx, ctLogs(ctClaudeResult("toolu_1", 300))))
		assert.Empty(t, b.lsink.AllLogs(), "a batch emptied by holding is not forwarded")

		require.NoError(t, b.logs.ConsumeLogs(ctx, ctLogs(ctClaudeDecision("toolu_1", "accept", 100))))
		var results []plog.LogRecord
		for _, lr := range allLogs(b.lsink) {
			if logAttr(lr, "event.name") == "tool_result" {
				results = append(results, lr)
			}
		}
		require.Len(t, results, 1)
		assert.Equal(t, "paired", logAttr(results[0], "toolpair.outcome"))
	})
}

// TestHeldRecordAbandonedWhenBatchFails: a batch that holds a record and stops before copying
// it in (a step failed) still opens the record's latch when it is reset: whoever releases the
// record is not left waiting, and releases nothing. Both signals.
func TestHeldRecordAbandonedWhenBatchFails(t *testing.T) {
	b := newRig(t)
	td := batch(toolSpan(7, "call_x", 2000))
	sb := &spanBatch{}
	sb.data, sb.next = td, b.tsink
	sb.refs = append(sb.refs, spanRef{rec: td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0), results: 1})
	ld := ctLogs(ctClaudeResult("toolu_1", 300))
	lb := &logBatch{}
	lb.data, lb.next = ld, b.lsink
	lb.refs = append(lb.refs, logRef{rec: ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0), results: 1})
	payloads := []any{sb.hold(&pairing.Event{Ref: 0}), lb.hold(&pairing.Event{Ref: 0})}

	released := make(chan output)
	go func() {
		var out output
		var res []pairing.Resolution
		for _, p := range payloads {
			res = append(res, pairing.Resolution{
				Outcome: pairing.OutcomePaired, Key: pairing.Key{CallID: "call_x"},
				UseTime: 1_000_000_000, ResultTime: 2_000_000_000, UseRef: -1, ResultRef: -1, ResultPayload: p,
			})
		}
		b.shared.apply(res, &out, nil)
		released <- out
	}()
	select {
	case <-released:
		t.Fatal("released before the batch filled or abandoned its held records")
	case <-time.After(50 * time.Millisecond):
	}
	sb.reset() // without fillHeld
	lb.reset()
	select {
	case out := <-released:
		assert.Empty(t, out.toTraces)
		assert.Empty(t, out.toLogs)
	case <-time.After(5 * time.Second):
		t.Fatal("a releaser waits for a record its batch abandoned")
	}
	for _, p := range payloads {
		assert.Nil(t, marshalHeld(p), "an abandoned record is not saved")
	}
}

// TestBatchRulesAgreeAcrossSignals: the rules that turn a record's items into events and
// write outcomes are the same for spans and log records: a use or rejection carries the
// record's origin, a result its start, an echo the echo source, a match result its hash, and
// a matched result receives the ID of the call it resolved.
func TestBatchRulesAgreeAcrossSignals(t *testing.T) {
	td := ptrace.NewTraces()
	span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sb := &spanBatch{}
	sb.data = td
	checkBatchRules(t, &sb.recordBatch, span, span.Attributes())

	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lb := &logBatch{}
	lb.data = ld
	checkBatchRules(t, &lb.recordBatch, lr, lr.Attributes())
}

func checkBatchRules[D, R, N any, S recordSignal[D, R, N]](t *testing.T, b *recordBatch[D, R, N, S], rec R, attrs pcommon.Map) {
	t.Helper()
	origin := &synth.Origin{ScopeValue: "s"}
	b.found.Items = []dialect.Item{
		{Kind: pairing.KindUse, CallID: "u", Time: 1},
		{Kind: pairing.KindReject, CallID: "r", Time: 2},
		{Kind: pairing.KindEcho, CallID: "e", Time: 3},
		{Kind: pairing.KindMatch, Time: 4, Match: 42},
		{Kind: pairing.KindResult, CallID: "c", Time: 5},
	}
	ref := b.addRef(recordPos{0, 0, 0}, rec, b.found.Results())
	require.True(t, b.announces())
	evs := b.appendEvents(nil, ref, pairing.Key{Tenant: "t", Scope: "s"}, sourceGenAI, 99, origin)
	require.Len(t, evs, 5)
	for _, ev := range evs {
		assert.Equal(t, pairing.Key{Tenant: "t", Scope: "s", CallID: ev.Key.CallID}, ev.Key)
		assert.Equal(t, ref, ev.Ref)
	}
	assert.Same(t, origin, evs[0].Payload)
	assert.Same(t, origin, evs[1].Payload)
	assert.Nil(t, evs[2].Payload)
	assert.Equal(t, b.sig.signal() == synth.Logs, evs[2].Source == dialect.SourceEchoLog, "an echo's source is its signal's history")
	assert.Equal(t, uint64(42), evs[3].Match)
	assert.Equal(t, int64(99), evs[3].Start)
	assert.Equal(t, int64(99), evs[4].Start)
	assert.Equal(t, int64(0), evs[0].Start)
	assert.Equal(t, sourceGenAI, evs[4].Source)

	paired := &pairing.Resolution{Outcome: pairing.OutcomePaired, Key: pairing.Key{CallID: "call_9"}, Matched: true, UseTime: 1_000_000, ResultTime: 3_000_000}
	b.markResult(ref, paired)
	b.writeMarks()
	id, ok := attrs.Get(synth.AttrToolCallID)
	require.True(t, ok, "a match result receives the ID of its call")
	assert.Equal(t, "call_9", id.Str())
	outcome, _ := attrs.Get(synth.AttrOutcome)
	assert.Equal(t, "paired", outcome.Str())
	assert.False(t, b.removeMarked(), "a marked record stays")
	b.dropResult(ref, &pairing.Resolution{Outcome: pairing.OutcomeDuplicate, SameSource: true})
	assert.False(t, b.removeMarked(), "a record both kept and dropped stays")
}
