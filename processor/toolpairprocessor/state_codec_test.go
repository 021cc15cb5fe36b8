package toolpairprocessor

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"slices"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/batch"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/custom"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// codecState returns a saved state holding every kind of state the format carries, and the
// next consumers its payloads point to.
func codecState() (*savedState, nexts) {
	next := nexts{traces: new(consumertest.TracesSink), logs: new(consumertest.LogsSink)}
	res := pcommon.NewResource()
	res.Attributes().PutStr("service.name", "agent")
	res.Attributes().PutInt("pid", 42)
	r := synth.NewResource(res)
	origin := func(sig synth.Signal) *synth.Origin {
		o := &synth.Origin{Resource: r, ScopeAttr: "session.id", ScopeValue: "s1", Signal: sig,
			TraceID: pcommon.TraceID{1, 2, 3}, SpanID: pcommon.SpanID{4, 5}, ParentSpanID: pcommon.SpanID{6}}
		if sig == synth.Traces {
			o.Next = next.traces
		} else {
			o.Next = next.logs
		}
		return o
	}
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	res.CopyTo(rs.Resource())
	sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetName("execute_tool run_shell")
	sp.Attributes().PutStr("gen_ai.tool.call.id", "w1")
	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.Body().SetStr("claude_code.tool_result")
	lr.Attributes().PutStr("tool_use_id", "w2")
	spanBytes := marshalHeld(&batch.HeldSpan{Traces: td})
	logBytes := marshalHeld(&batch.HeldLog{Logs: ld})

	s1 := pairing.ScopeKey{Tenant: "agent", Scope: "s1"}
	key := func(id string) pairing.Key { return pairing.Key{Tenant: s1.Tenant, Scope: s1.Scope, CallID: id} }
	snap := &pairing.Snapshot{
		Scopes: []pairing.ScopeSnapshot{{Key: s1, UsesSeen: true, LastSeen: 77, LastRecord: 640, Closings: []pairing.ClosingSnapshot{
			{Kind: pairing.KindBoundary, Time: 500, Step: "m2"}, {Kind: pairing.KindSessionEnd, Time: 900},
		}}},
		Queue:      []pairing.QueuedClosing{{Scope: 0, Time: 500, Deadline: 1500}, {Scope: 0, Time: 900, Deadline: 1900}},
		UsedScopes: []uint64{1, 1 << 63},
		Calls: []pairing.CallSnapshot{
			{State: pairing.CallPending, Key: key("p1"), ToolName: "run_shell", Step: "m1", UseTime: 100, Deadline: 9000, Seq: 3, Payload: origin(synth.Traces)},
			{State: pairing.CallPending, Key: key("p2"), UseTime: 110, Deadline: 9100, Seq: 4, Payload: origin(synth.Logs)},
			{State: pairing.CallPending, Key: key("p3"), UseTime: 120, Deadline: 9200, Seq: 5},
			{State: pairing.CallPending, Key: key("p4"), ToolName: "run_shell", UseTime: 125, Deadline: 9250, Seq: 5, Flags: 8, Match: 1<<60 + 5, Payload: origin(synth.Traces)},
			{State: pairing.CallPendingHeld, Key: key("ph"), UseTime: 130, ResultTime: 140, Deadline: 2000, Seq: 6, Source: 3, Payload: origin(synth.Traces), Companion: spanBytes},
			{State: pairing.CallWaiting, Key: key("w1"), ResultTime: 150, Deadline: 2100, Seq: 7, Source: 1, Flags: 1, Payload: spanBytes},
			{State: pairing.CallWaiting, Key: key("w2"), ResultTime: 160, Deadline: 2200, Seq: 8, Source: 2, Payload: logBytes},
			{State: pairing.CallResolved, Key: key("r1"), ToolName: "Bash", UseTime: 1, ResultTime: 2, Deadline: 99999, Seq: 9, Source: 1, Flags: 4},
		},
	}
	snap.Activity = []pairing.ActivitySnapshot{
		{Kind: pairing.ActivityModel, Key: s1, Start: 10, End: 90, Seen: 60},
		{Kind: pairing.ActivityCompaction, Key: pairing.ScopeKey{Tenant: "agent", Scope: "s2"}, Start: 95, End: 95, Seen: 61},
	}
	return &savedState{engine: snap}, next
}

// TestStateRoundTrip writes a state holding every kind of state through the storage API's
// in-memory client and reads it back: everything comes back equal, held records as the
// records themselves, origins pointing at the component's pipelines.
func TestStateRoundTrip(t *testing.T) {
	st, next := codecState()
	fp := stateFingerprint(createDefaultConfig().(*Config))
	blob, err := encodeState(st, fp)
	require.NoError(t, err)

	client := storagetest.NewInMemoryClient(component.KindProcessor, component.MustNewID("toolpair"), "")
	require.NoError(t, client.Set(context.Background(), stateKey(1), blob))
	stored, err := client.Get(context.Background(), stateKey(1))
	require.NoError(t, err)

	got, err := decodeState(stored, fp, next)
	require.NoError(t, err)
	want := st.engine
	assert.Equal(t, want.Activity, got.engine.Activity)
	assert.Equal(t, want.Scopes, got.engine.Scopes)
	assert.Equal(t, want.Queue, got.engine.Queue)
	assert.Equal(t, want.UsedScopes, got.engine.UsedScopes)
	require.Len(t, got.engine.Calls, len(want.Calls))
	for i, w := range want.Calls {
		g := got.engine.Calls[i]
		wp, gp, wc, gc := w.Payload, g.Payload, w.Companion, g.Companion
		w.Payload, g.Payload, w.Companion, g.Companion = nil, nil, nil, nil
		assert.Equal(t, w, g, "call %d", i)
		assertPayload(t, wp, gp)
		assertPayload(t, wc, gc)
	}
	// The held records decode to what was held.
	assert.True(t, got.engine.Calls[3].HasMatch(), "a match hash kept (openinference, openllmetry)")
	hs := got.engine.Calls[5].Payload.(*batch.HeldSpan)
	assert.Equal(t, "w1", hs.Span().Attributes().AsRaw()["gen_ai.tool.call.id"])
	assert.Same(t, next.traces, hs.Next)
	hl := got.engine.Calls[6].Payload.(*batch.HeldLog)
	assert.Equal(t, "claude_code.tool_result", hl.Record().Body().Str())
	assert.Same(t, next.logs, hl.Next)
	hs.Wait() // restored records are filled: wait returns at once
}

// assertPayload compares an encoded payload (an origin, or a held record as heldBytes) with
// its decoded form.
func assertPayload(t *testing.T, want, got any) {
	t.Helper()
	switch w := want.(type) {
	case nil:
		assert.Nil(t, got)
	case *synth.Origin:
		g, ok := got.(*synth.Origin)
		require.True(t, ok, "origin decoded as %T", got)
		assert.Equal(t, w.Resource.Resource.Attributes().AsRaw(), g.Resource.Resource.Attributes().AsRaw())
		assert.Equal(t, w.Next, g.Next)
		wc, gc := *w, *g
		wc.Resource, gc.Resource = nil, nil
		assert.Equal(t, wc, gc)
	case heldBytes:
		var b any
		switch g := got.(type) {
		case *batch.HeldSpan:
			b = marshalHeld(g)
		case *batch.HeldLog:
			b = marshalHeld(g)
		}
		assert.Equal(t, w, b)
	default:
		t.Fatalf("unexpected payload %T", want)
	}
}

// TestStateDecodeSkipsToolCallActivity: a state whose activity section also lists tool calls
// (kind activityCall, with call ID and tool) is read with its model calls and compactions, its
// tool calls skipped: the engine's calls answer for the calls in flight. An unknown kind is
// corrupt.
func TestStateDecodeSkipsToolCallActivity(t *testing.T) {
	st, next := codecState()
	want := st.engine.Activity
	st.engine.Activity = nil
	fp := stateFingerprint(createDefaultConfig().(*Config))
	blob, err := encodeState(st, fp)
	require.NoError(t, err)
	// Replace the empty activity section (its count, a 0) and the checksum.
	w := &encoder{buf: blob[: len(blob)-5 : len(blob)-5]}
	lit := func(s string) { w.uint(uint64(len(s))<<1 | 1); w.raw([]byte(s)) }
	item := func(kind byte, k pairing.ScopeKey, callID, tool string, start, end, seen int64) {
		w.byte(kind)
		lit(k.Tenant)
		lit(k.Scope)
		w.string(callID)
		lit(tool)
		w.int(start)
		w.int(end)
		w.int(seen)
	}
	s1 := pairing.ScopeKey{Tenant: "agent", Scope: "s1"}
	w.uint(4)
	item(activityCall, s1, "p1", "run_shell", 100, 0, 0)
	item(activityModel, want[0].Key, "", "", want[0].Start, want[0].End, want[0].Seen)
	item(activityCall, s1, "r1", "Bash", 1, 2, 50)
	last := len(w.buf) // the last item's kind
	item(activityCompaction, want[1].Key, "", "", want[1].Start, want[1].End, want[1].Seen)
	w.buf = binary.LittleEndian.AppendUint32(w.buf, crc32.ChecksumIEEE(w.buf))

	got, err := decodeState(w.buf, fp, next)
	require.NoError(t, err)
	assert.Equal(t, want, got.engine.Activity)
	assert.Len(t, got.engine.Calls, len(st.engine.Calls))

	// An unknown kind is corrupt state.
	w.buf = w.buf[:len(w.buf)-4]
	w.buf[last] = 9
	w.buf = binary.LittleEndian.AppendUint32(w.buf, crc32.ChecksumIEEE(w.buf))
	_, err = decodeState(w.buf, fp, next)
	var de *discardError
	require.True(t, errors.As(err, &de), "%v", err)
}

// TestStateDecodeNeverPanics: every truncation and every single-byte change of a stored state
// is refused with a discard error (never a panic, never a state restored from garbage).
func TestStateDecodeNeverPanics(t *testing.T) {
	st, next := codecState()
	fp := stateFingerprint(createDefaultConfig().(*Config))
	blob, err := encodeState(st, fp)
	require.NoError(t, err)
	check := func(b []byte) {
		got, err := decodeState(b, fp, next)
		require.Error(t, err)
		require.Nil(t, got)
		var de *discardError
		require.True(t, errors.As(err, &de), "%v", err)
	}
	for n := range len(blob) {
		check(blob[:n])
	}
	for i := range blob {
		b := append([]byte(nil), blob...)
		b[i] ^= 0x5a
		check(b)
	}
}

// TestStateFingerprint: the fingerprint changes with the keys that give call keys their
// meaning, and with nothing else.
func TestStateFingerprint(t *testing.T) {
	base := createDefaultConfig().(*Config)
	fp := stateFingerprint(base)
	for name, mutate := range map[string]func(*Config){
		"scope_attributes":  func(c *Config) { c.ScopeAttributes = []string{"session.id"} },
		"tenant_attributes": func(c *Config) { c.TenantAttributes = []string{"host.name"} },
		"dialects":          func(c *Config) { c.Dialects = []string{DialectGenAI} },
		"custom_dialects":   func(c *Config) { c.CustomDialects = []custom.Config{{Name: "mine", Context: custom.ContextSpan}} },
	} {
		c := createDefaultConfig().(*Config)
		mutate(c)
		assert.NotEqual(t, fp, stateFingerprint(c), name)
	}
	c := createDefaultConfig().(*Config)
	c.PairingTimeout *= 2
	slices.Reverse(c.Dialects)
	assert.Equal(t, fp, stateFingerprint(c), "order of dialects and other keys do not matter")
}

// TestResolutionRecordRoundTrip: a batch's resolution record keeps the keys of the calls it
// resolved (not its duplicates), and nothing for a batch without any.
func TestResolutionRecordRoundTrip(t *testing.T) {
	k := func(scope, id string) pairing.Key { return pairing.Key{Tenant: "t", Scope: scope, CallID: id} }
	res := []pairing.Resolution{
		{Outcome: pairing.OutcomePaired, Key: k("s1", "a")},
		{Outcome: pairing.OutcomeDuplicate, Key: k("s1", "b")},
		{Outcome: pairing.OutcomeInterrupted, Key: k("s1", "c")},
		{Outcome: pairing.OutcomeOrphan, Key: k("s2", "d")},
		{Outcome: pairing.OutcomeRejected, Key: k("s1", "e")},
	}
	b := encodeResolutions(res)
	assert.Equal(t, resolutionMagic, string(b[:4]))
	keys, held, err := decodeResolutions(b)
	require.NoError(t, err)
	assert.Equal(t, []pairing.Key{k("s1", "a"), k("s1", "c"), k("s2", "d"), k("s1", "e")}, keys)
	assert.Nil(t, held)
	assert.Nil(t, encodeResolutions(res[1:2]))
	for n := range len(b) {
		_, _, err := decodeResolutions(b[:n])
		require.Error(t, err)
	}

	// Releases of held results without a call ID: paired by their use (the call's key
	// too), or settled without one.
	res = append(res,
		pairing.Resolution{Outcome: pairing.OutcomePaired, Key: k("s2", "f"), Matched: true, HeldSeq: 12},
		pairing.Resolution{Outcome: pairing.OutcomeOrphan, Key: k("s2", ""), Matched: true, HeldSeq: 13},
		pairing.Resolution{Outcome: pairing.OutcomeStandalone, Key: k("s3", ""), Matched: true, HeldSeq: 300})
	b = encodeResolutions(res)
	assert.Equal(t, resolutionMagicHeld, string(b[:4]))
	keys, held, err = decodeResolutions(b)
	require.NoError(t, err)
	assert.Equal(t, []pairing.Key{k("s1", "a"), k("s1", "c"), k("s2", "d"), k("s1", "e"), k("s2", "f")}, keys)
	assert.Equal(t, []pairing.HeldRef{
		{Scope: pairing.ScopeKey{Tenant: "t", Scope: "s2"}, Seq: 12},
		{Scope: pairing.ScopeKey{Tenant: "t", Scope: "s2"}, Seq: 13},
		{Scope: pairing.ScopeKey{Tenant: "t", Scope: "s3"}, Seq: 300},
	}, held)
	for n := range len(b) {
		_, _, err := decodeResolutions(b[:n])
		require.Error(t, err)
	}
}

// TestStateDecodeRefusesMisshapenHeld: a held record whose single span or log record is not
// in the first ScopeSpans/ScopeLogs (a shape the processor never writes) is refused as
// corrupt state instead of being restored and read out of range later.
func TestStateDecodeRefusesMisshapenHeld(t *testing.T) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.ScopeSpans().AppendEmpty()
	rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName("execute_tool")
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.ScopeLogs().AppendEmpty()
	rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr("tool_result")
	fp := stateFingerprint(createDefaultConfig().(*Config))
	for name, payload := range map[string]any{
		"span in second scope":       marshalHeld(&batch.HeldSpan{Traces: td}),
		"log record in second scope": marshalHeld(&batch.HeldLog{Logs: ld}),
	} {
		st, next := codecState()
		st.engine.Calls[5].Payload = payload
		blob, err := encodeState(st, fp)
		require.NoError(t, err, name)
		got, err := decodeState(blob, fp, next)
		var de *discardError
		require.True(t, errors.As(err, &de), "%s: %v", name, err)
		assert.Nil(t, got, name)
	}
}
