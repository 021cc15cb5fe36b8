// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package statefile

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

var testFP = [8]byte{1, 2, 3, 4, 5, 6, 7, 8}

// testSinks are consumers of both signals, held records kept as Held, anchors as testAnchor.
func testSinks() Sinks {
	return Sinks{Traces: new(consumertest.TracesSink), Logs: new(consumertest.LogsSink), Anchor: newTestAnchor}
}

// testAnchor is the value testSinks make of a stored anchor span.
type testAnchor struct {
	TraceID    pcommon.TraceID
	SpanID     pcommon.SpanID
	Start, End int64
}

func newTestAnchor(tid pcommon.TraceID, sid pcommon.SpanID, start, end int64) any {
	return testAnchor{TraceID: tid, SpanID: sid, Start: start, End: end}
}

// anchorSnapshot is the snapshot of an anchor span of conversation k of kind
// (pairing.ActivityTurn or pairing.ActivityModelSpan), its IDs made of id, with the value
// testSinks make of it.
func anchorSnapshot(k pairing.ConversationKey, kind pairing.ActivityKind, id byte, start, end, seen int64) pairing.ActivitySnapshot {
	tid, sid := pcommon.TraceID{id, 1}, pcommon.SpanID{id, 2}
	a := pairing.ActivitySnapshot{Key: k, Kind: kind, Start: start, End: end, Seen: seen, Anchor: newTestAnchor(tid, sid, start, end)}
	copy(a.ID[:16], tid[:])
	copy(a.ID[16:], sid[:])
	return a
}

// heldSpan and heldLog are held records as the processor stores them.
func heldSpan(t testing.TB, id string) Held {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "agent")
	sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetName("execute_tool run_shell")
	sp.Attributes().PutStr("gen_ai.tool.call.id", id)
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	return Held{Signal: synth.Traces, OTLP: b}
}

func heldLog(t testing.TB, id string) Held {
	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.Body().SetStr("claude_code.tool_result")
	lr.Attributes().PutStr("tool_use_id", id)
	b, err := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	require.NoError(t, err)
	return Held{Signal: synth.Logs, OTLP: b}
}

// fullSnapshot returns a snapshot holding every kind of state the format carries: calls of
// every state, origins of both signals sharing one resource and one record (the calls of one
// record share its origin), a call announced in both signals (Also), held spans and log
// records, reports, a match hash, scopes with queued boundaries and session ends, the FIFO of
// closings, forgotten scopes, activity and anchor spans. Origins point at sinks.
func fullSnapshot(t testing.TB, sinks Sinks) *pairing.Snapshot {
	res := pcommon.NewResource()
	res.Attributes().PutStr("service.name", "agent")
	res.Attributes().PutInt("pid", 42)
	r := synth.NewResource(res)
	other := pcommon.NewResource()
	other.Attributes().PutStr("service.name", "other")
	r2 := synth.NewResource(other)
	origin := func(r *synth.Resource, sig synth.Signal, span byte) *synth.Origin {
		o := &synth.Origin{Resource: r, ConversationAttr: "session.id", Conversation: "s1", Signal: sig,
			TraceID: pcommon.TraceID{1, 2, 3}, SpanID: pcommon.SpanID{4, span}, ParentSpanID: pcommon.SpanID{6}}
		if sig == synth.Traces {
			o.Next = sinks.Traces
		} else {
			o.Next = sinks.Logs
		}
		return o
	}
	spanOrigin := origin(r, synth.Traces, 5)
	logOrigin := origin(r, synth.Logs, 6)
	both := *spanOrigin
	both.Also = origin(r2, synth.Logs, 7)
	noParent := origin(r2, synth.Traces, 8)
	noParent.ParentSpanID = pcommon.SpanID{}
	noParent.ToolPrefixedIDs = true

	s1 := pairing.ConversationKey{Tenant: "agent", Conversation: "s1"}
	key := func(id string) pairing.Key {
		return pairing.Key{Tenant: s1.Tenant, Conversation: s1.Conversation, CallID: id}
	}
	return &pairing.Snapshot{
		Conversations: []pairing.ConversationSnapshot{
			{Key: s1, UsesSeen: true, LastSeen: 77, LastRecord: 640, Closings: []pairing.ClosingSnapshot{
				{Kind: pairing.KindBoundary, Time: 500, Step: "m2"}, {Kind: pairing.KindSessionEnd, Time: 900},
			}},
			{Key: pairing.ConversationKey{Tenant: "agent", Conversation: "s\xff2"}, LastSeen: 1_700_000_000_000_000_000},
		},
		Queue:             []pairing.QueuedClosing{{Scope: 0, Time: 500, Deadline: 1500}, {Scope: 0, Time: 900, Deadline: 1900}},
		UsedConversations: []uint64{1, 1 << 63},
		Calls: []pairing.CallSnapshot{
			{State: pairing.CallPending, Key: key("p1"), ToolName: "run_shell", Step: "m1", UseTime: 100, Deadline: 9000, Seq: 3, Payload: spanOrigin, UseSignal: 1},
			{State: pairing.CallPending, Key: key("p1b"), ToolName: "run_shell", Step: "m1", UseTime: 100, Deadline: 9000, Seq: 4, Payload: spanOrigin, UseSignal: 1},
			{State: pairing.CallPending, Key: key("p2"), UseTime: 110, Deadline: 9100, Seq: 5, Payload: logOrigin, UseSignal: 2},
			{State: pairing.CallPending, Key: key("p3"), UseTime: 120, Deadline: 9200, Seq: 6},
			{State: pairing.CallPending, Key: key("p4"), ToolName: "run_shell", UseTime: 125, Deadline: 9250, Seq: 7, Flags: 8, Match: 1<<60 + 5, Payload: noParent},
			{State: pairing.CallPending, Key: key("p5"), ToolName: "Bash", UseTime: 126, Deadline: 9260, Seq: 8, Payload: &both, SignalUseTimes: [2]int64{126, 127}, Reporters: []uint8{2}},
			{State: pairing.CallPendingHeld, Key: key("ph"), UseTime: 130, ResultTime: 140, Deadline: 2000, Seq: 9, Source: 3, Payload: spanOrigin, Companion: heldSpan(t, "ph")},
			{State: pairing.CallWaiting, Key: key("w1"), ResultTime: 150, Deadline: 2100, Seq: 10, Source: 1, Flags: 1, Payload: heldSpan(t, "w1"),
				Reports: []pairing.ReportSnapshot{{Source: 2, Aborted: true, Time: 151, Start: 149, Payload: heldLog(t, "w1")}}},
			{State: pairing.CallWaiting, Key: key("w2"), ResultTime: 160, Deadline: 2200, Seq: 11, Source: 2, Payload: heldLog(t, "w2")},
			{State: pairing.CallWaiting, Key: key(""), ResultTime: 165, Deadline: 2300, Seq: 12, Flags: 8, Match: 99, Payload: heldSpan(t, "")},
			{State: pairing.CallResolved, Key: key("r1"), ToolName: "Bash", UseTime: 1, ResultTime: 2, Deadline: 99999, Seq: 13, Source: 1, Flags: 4, Reporters: []uint8{2, 3}},
			// A call whose scope the snapshot does not list.
			{State: pairing.CallResolved, Key: pairing.Key{Tenant: "t2", Conversation: "s9", CallID: "r2"}, Deadline: 5, Seq: 14},
		},
		Activity: []pairing.ActivitySnapshot{
			{Kind: pairing.ActivityModel, Key: s1, Start: 10, End: 90, Seen: 60},
			{Kind: pairing.ActivityCompaction, Key: pairing.ConversationKey{Tenant: "agent", Conversation: "s3"}, Start: 95, End: 95, Seen: 61},
			anchorSnapshot(s1, pairing.ActivityTurn, 1, 5, 1000, 60),
			anchorSnapshot(s1, pairing.ActivityModelSpan, 2, 20, 80, 60),
		},
	}
}

// plain returns snap with its origins as comparable values (the resource as OTLP bytes
// instead of its pointer), for equality checks.
func plain(snap *pairing.Snapshot) *pairing.Snapshot {
	type origin struct {
		Resource []byte
		synth.Origin
		Also any
	}
	var conv func(p any) any
	conv = func(p any) any {
		o, ok := p.(*synth.Origin)
		if !ok {
			return p
		}
		td := ptrace.NewTraces()
		o.Resource.Resource.CopyTo(td.ResourceSpans().AppendEmpty().Resource())
		b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
		if err != nil {
			panic(err)
		}
		c := origin{Resource: b, Origin: *o}
		c.Origin.Resource, c.Origin.Also = nil, nil
		if o.Also != nil {
			c.Also = conv(o.Also)
		}
		return c
	}
	out := *snap
	out.Calls = make([]pairing.CallSnapshot, len(snap.Calls))
	for i, c := range snap.Calls {
		c.Payload, c.Companion = conv(c.Payload), conv(c.Companion)
		out.Calls[i] = c
	}
	return &out
}

// TestRoundTrip: a snapshot holding every kind of state decodes to what was encoded; a call
// whose scope was not listed brings its scope along.
func TestRoundTrip(t *testing.T) {
	sinks := testSinks()
	snap := fullSnapshot(t, sinks)
	blob, err := Encode(snap, testFP)
	require.NoError(t, err)
	got, err := Decode(blob, testFP, sinks)
	require.NoError(t, err)

	want := plain(snap)
	want.Conversations = append(want.Conversations, pairing.ConversationSnapshot{Key: pairing.ConversationKey{Tenant: "t2", Conversation: "s9"}})
	assert.Equal(t, want, plain(got))
	assert.Same(t, sinks.Traces, got.Calls[0].Payload.(*synth.Origin).Next)
	assert.Same(t, got.Calls[0].Payload, got.Calls[1].Payload, "the calls of one record share its origin")
	assert.Same(t, sinks.Logs, got.Calls[5].Payload.(*synth.Origin).Also.Next)
	assert.Same(t, got.Calls[0].Payload.(*synth.Origin).Resource, got.Calls[2].Payload.(*synth.Origin).Resource, "one resource")
}

// TestDecodeSinks: held records go through Sinks.Held with their signal and bytes (nil drops
// one, an error refuses the blob), and an origin of a signal without a consumer is dropped.
func TestDecodeSinks(t *testing.T) {
	snap := fullSnapshot(t, testSinks())
	blob, err := Encode(snap, testFP)
	require.NoError(t, err)

	var seen []Held
	sinks := Sinks{Traces: new(consumertest.TracesSink), Held: func(h Held) (any, error) {
		seen = append(seen, h)
		if h.Signal == synth.Logs {
			return nil, nil
		}
		return "span", nil
	}}
	got, err := Decode(blob, testFP, sinks)
	require.NoError(t, err)
	assert.Equal(t, []Held{snap.Calls[6].Companion.(Held), snap.Calls[7].Payload.(Held), snap.Calls[7].Reports[0].Payload.(Held),
		snap.Calls[8].Payload.(Held), snap.Calls[9].Payload.(Held)}, seen)
	assert.Equal(t, "span", got.Calls[7].Payload)
	assert.Nil(t, got.Calls[8].Payload, "dropped by Held")
	assert.Nil(t, got.Calls[2].Payload, "a logs origin without a logs consumer")
	assert.Nil(t, got.Calls[5].Payload.(*synth.Origin).Also, "no Also without a logs consumer")
	assert.Len(t, got.Activity, 2, "no anchors without Sinks.Anchor")

	sinks.Held = func(Held) (any, error) { return nil, errors.New("not one span") }
	_, err = Decode(blob, testFP, sinks)
	assert.Equal(t, ReasonCorrupt, ReasonOf(err), "%v", err)
}

// TestEncodeRefusesUnknownValues: a state, closing kind or activity kind the format has no
// value for fails the encoding instead of being stored as something else.
func TestEncodeRefusesUnknownValues(t *testing.T) {
	for name, spoil := range map[string]func(*pairing.Snapshot){
		"call state":    func(s *pairing.Snapshot) { s.Calls[0].State = 9 },
		"closing kind":  func(s *pairing.Snapshot) { s.Conversations[0].Closings[0].Kind = pairing.KindUse },
		"activity kind": func(s *pairing.Snapshot) { s.Activity[0].Kind = 9 },
	} {
		snap := fullSnapshot(t, testSinks())
		spoil(snap)
		_, err := Encode(snap, testFP)
		assert.Error(t, err, name)
	}
}

// TestDecodeRefusesDamage: every truncation and every single-byte change of a checkpoint is
// refused with a *DiscardError (never a panic, never a state restored from garbage).
func TestDecodeRefusesDamage(t *testing.T) {
	sinks := testSinks()
	blob, err := Encode(fullSnapshot(t, sinks), testFP)
	require.NoError(t, err)
	check := func(b []byte, what string, i int) {
		got, err := Decode(b, testFP, sinks)
		require.Error(t, err, "%s %d", what, i)
		require.Nil(t, got)
		var de *DiscardError
		require.True(t, errors.As(err, &de), "%s %d: %v", what, i, err)
	}
	for n := range len(blob) {
		check(blob[:n], "truncated to", n)
	}
	for i := range blob {
		for _, flip := range []byte{0x01, 0x80, 0xff} {
			b := append([]byte(nil), blob...)
			b[i] ^= flip
			check(b, "byte changed at", i)
		}
	}
}

// TestDecodeReasons: another fingerprint is ReasonConfig, another format version (a newer
// one, or format 3 of the release before) ReasonVersion, garbage ReasonCorrupt.
func TestDecodeReasons(t *testing.T) {
	blob, err := Encode(fullSnapshot(t, testSinks()), testFP)
	require.NoError(t, err)
	_, err = Decode(blob, [8]byte{8, 7, 6, 5, 4, 3, 2, 1}, testSinks())
	assert.Equal(t, ReasonConfig, ReasonOf(err), "%v", err)

	newer := append([]byte(nil), blob...)
	newer[len(StateMagic)] = Version + 1
	_, err = Decode(newer, testFP, testSinks())
	assert.Equal(t, ReasonVersion, ReasonOf(err), "%v", err)

	// A checkpoint of format 3, as the release before wrote it.
	v3, err := os.ReadFile("testdata/state-v3.bin")
	require.NoError(t, err)
	_, err = Decode(v3, testFP, testSinks())
	assert.Equal(t, ReasonVersion, ReasonOf(err), "%v", err)
	assert.ErrorContains(t, err, "format 3")

	for _, b := range [][]byte{nil, []byte("garbage"), []byte(StateMagic)} {
		_, err = Decode(b, testFP, testSinks())
		assert.Equal(t, ReasonCorrupt, ReasonOf(err), "%q: %v", b, err)
	}
	assert.Equal(t, ReasonCorrupt, ReasonOf(errors.New("other")))
	assert.Equal(t, ReasonMissing, ReasonOf(Discard(ReasonMissing, "absent")))
}
