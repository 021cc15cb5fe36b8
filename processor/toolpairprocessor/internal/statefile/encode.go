// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package statefile

import (
	"encoding/binary"
	"fmt"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"google.golang.org/protobuf/proto"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/delivery"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// Encode returns the checkpoint blob of snap under the configuration fingerprint fp (see the
// package documentation). It only reads snap: use payloads of pending calls are stored when
// they are *synth.Origin (their Next is not: Decode binds it again), held payloads when they
// are Held; of an anchor span its kind, IDs, times and Seen (its Anchor value is not stored:
// Decode makes it again through Sinks.Anchor). It fails when snap holds a call state, closing
// kind or activity kind the format has no value for, or a resource that cannot be marshalled.
func Encode(snap *pairing.Snapshot, fp [8]byte) ([]byte, error) {
	return EncodeCheckpoint(snap, nil, fp)
}

// EncodeCheckpoint is Encode with the deliveries of result records the component remembers
// (delivery.Memory.Snapshot), oldest first.
func EncodeCheckpoint(snap *pairing.Snapshot, dels []delivery.Entry, fp [8]byte) ([]byte, error) {
	st, err := encodeState(snap)
	if err != nil {
		return nil, err
	}
	st.Deliveries = encodeDeliveries(dels)
	buf := make([]byte, 0, 4096+len(snap.Calls)*112+len(snap.Activity)*32)
	buf = append(buf, StateMagic...)
	buf = binary.AppendUvarint(buf, Version)
	buf = append(buf, fp[:]...)
	buf, err = proto.MarshalOptions{}.MarshalAppend(buf, st)
	if err != nil {
		return nil, fmt.Errorf("statefile: encoding the state: %w", err)
	}
	return frame(buf), nil
}

// encodeState returns the State message of snap (see Encode).
func encodeState(snap *pairing.Snapshot) (*State, error) {
	// Size hints: a step and an origin per call, a scope per 10 calls, are common.
	w := &encoder{
		strs:       make(map[string]uint32, len(snap.Calls)+len(snap.Conversations)+16),
		strList:    make([]string, 0, len(snap.Calls)+len(snap.Conversations)+16),
		res:        map[*synth.Resource]uint32{},
		origins:    make(map[*synth.Origin]uint32, len(snap.Calls)),
		originList: make([]*Origin, 0, len(snap.Calls)),
	}
	st := &State{UsedScopes: snap.UsedConversations}
	scopeIdx, err := w.scopes(st, snap)
	if err != nil {
		return nil, err
	}
	st.Calls = make([]*Call, len(snap.Calls))
	calls := make([]Call, len(snap.Calls)) // one allocation for every call's message
	for i := range snap.Calls {
		if err := w.call(&calls[i], &snap.Calls[i], scopeIdx); err != nil {
			return nil, err
		}
		st.Calls[i] = &calls[i]
	}
	for i := range snap.Activity {
		if err := w.activity(st, &snap.Activity[i]); err != nil {
			return nil, err
		}
	}
	st.Strings, st.Resources, st.Origins = w.strList, w.resList, w.originList
	return st, nil
}

// scopes encodes the scopes of snap, with their closings, and the closing queue into st, and
// returns each scope key's index in st.Scopes: a call whose scope the snapshot does not list
// gets a scope of its key alone.
func (w *encoder) scopes(st *State, snap *pairing.Snapshot) (map[pairing.ConversationKey]uint32, error) {
	scopes := snap.Conversations
	scopeIdx := make(map[pairing.ConversationKey]uint32, len(scopes))
	for i := range scopes {
		scopeIdx[scopes[i].Key] = uint32(i)
	}
	// A call whose scope the snapshot does not list gets a scope of its key alone.
	for i := range snap.Calls {
		if k := snap.Calls[i].Key.ConversationKey(); !hasScope(scopeIdx, k) {
			if len(scopes) == len(snap.Conversations) {
				scopes = append([]pairing.ConversationSnapshot(nil), scopes...)
			}
			scopeIdx[k] = uint32(len(scopes))
			scopes = append(scopes, pairing.ConversationSnapshot{Key: k})
		}
	}
	st.Scopes = make([]*Scope, len(scopes))
	for i := range scopes {
		sc := &scopes[i]
		m := &Scope{Tenant: w.str(sc.Key.Tenant), Scope: w.str(sc.Key.Conversation), UsesSeen: sc.UsesSeen, LastSeen: sc.LastSeen, LastRecord: sc.LastRecord}
		for _, c := range sc.Closings {
			kind, ok := closingKinds[c.Kind]
			if !ok {
				return nil, fmt.Errorf("statefile: closing kind %d has no stored form", c.Kind)
			}
			m.Closings = append(m.Closings, &Closing{Kind: kind, Time: c.Time, Step: w.str(c.Step)})
		}
		st.Scopes[i] = m
	}
	st.Queue = make([]*QueuedClosing, len(snap.Queue))
	for i, q := range snap.Queue {
		st.Queue[i] = &QueuedClosing{Scope: uint32(q.Scope), Time: q.Time, Deadline: q.Deadline}
	}
	return scopeIdx, nil
}

// call encodes the call c into m, its scope's index from scopeIdx.
func (w *encoder) call(m *Call, c *pairing.CallSnapshot, scopeIdx map[pairing.ConversationKey]uint32) error {
	state, ok := callStates[c.State]
	if !ok {
		return fmt.Errorf("statefile: call state %d has no stored form", c.State)
	}
	m.State, m.Scope, m.CallId = state, scopeIdx[c.Key.ConversationKey()], c.Key.CallID
	m.Tool, m.Step = w.str(c.ToolName), w.str(c.Step)
	m.UseTime, m.ResultTime, m.Deadline, m.Seq = c.UseTime, c.ResultTime, c.Deadline, c.Seq
	m.Source, m.Flags, m.UseSignal = uint32(c.Source), uint32(c.Flags), uint32(c.UseSignal)
	m.TracesUseTime, m.LogsUseTime = c.SignalUseTimes[0], c.SignalUseTimes[1]
	m.Reporters = c.Reporters
	if c.HasMatch() {
		m.Match = c.Match
	}
	switch c.State {
	case pairing.CallPending, pairing.CallPendingHeld:
		o, _ := c.Payload.(*synth.Origin)
		var err error
		if m.Origin, err = w.origin(o); err != nil {
			return err
		}
		if o != nil && o.Resource != nil {
			if m.Also, err = w.origin(o.Also); err != nil {
				return err
			}
		}
		if c.State == pairing.CallPendingHeld {
			m.Held = heldMessage(c.Companion)
		}
	case pairing.CallWaiting:
		m.Held = heldMessage(c.Payload)
	}
	for _, h := range c.Reports {
		m.Reports = append(m.Reports, &Report{Source: uint32(h.Source), Aborted: h.Aborted, Time: h.Time, Start: h.Start, Held: heldMessage(h.Payload)})
	}
	return nil
}

// activity encodes one activity of the snapshot into st: an anchor span, or a model call or
// compaction.
func (w *encoder) activity(st *State, a *pairing.ActivitySnapshot) error {
	if kind, ok := anchorKinds[a.Kind]; ok {
		st.Anchors = append(st.Anchors, &Anchor{
			Kind: kind, Tenant: w.str(a.Key.Tenant), Scope: w.str(a.Key.Conversation),
			TraceId: a.ID[:16], SpanId: a.ID[16:], Start: a.Start, End: a.End, Seen: a.Seen,
		})
		return nil
	}
	kind, ok := activityKinds[a.Kind]
	if !ok {
		return fmt.Errorf("statefile: activity kind %d has no stored form", a.Kind)
	}
	st.Activity = append(st.Activity, &Activity{Kind: kind, Tenant: w.str(a.Key.Tenant), Scope: w.str(a.Key.Conversation), Start: a.Start, End: a.End, Seen: a.Seen})
	return nil
}

// encoder collects the tables of a State: strings, resources and origins, each stored once
// and referred to by index.
type encoder struct {
	strs       map[string]uint32
	strList    []string
	res        map[*synth.Resource]uint32
	resList    [][]byte
	origins    map[*synth.Origin]uint32
	originList []*Origin
}

// str returns the index of s in State.strings: 0 for "", else its place plus one.
func (w *encoder) str(s string) uint32 {
	if s == "" {
		return 0
	}
	if i, ok := w.strs[s]; ok {
		return i
	}
	w.strList = append(w.strList, s)
	i := uint32(len(w.strList))
	w.strs[s] = i
	return i
}

// origin returns the reference of o in State.origins (its place plus one), adding it and its
// resource when new; 0 for none (nil, or without a resource).
func (w *encoder) origin(o *synth.Origin) (uint32, error) {
	if o == nil || o.Resource == nil {
		return 0, nil
	}
	if i, ok := w.origins[o]; ok {
		return i, nil
	}
	ri, ok := w.res[o.Resource]
	if !ok {
		td := ptrace.NewTraces()
		o.Resource.Resource.CopyTo(td.ResourceSpans().AppendEmpty().Resource())
		b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
		if err != nil {
			return 0, fmt.Errorf("statefile: encoding a resource: %w", err)
		}
		ri = uint32(len(w.resList))
		w.resList = append(w.resList, b)
		w.res[o.Resource] = ri
	}
	w.originList = append(w.originList, &Origin{
		Resource: ri, ScopeAttr: w.str(o.ConversationAttr), ScopeValue: w.str(o.Conversation), Signal: Signal(o.Signal),
		TraceId: idBytes(o.TraceID[:]), SpanId: idBytes(o.SpanID[:]), ParentSpanId: idBytes(o.ParentSpanID[:]),
		ToolPrefixedIds: o.ToolPrefixedIDs,
	})
	i := uint32(len(w.originList))
	w.origins[o] = i
	return i, nil
}

// idBytes returns id, or nil when it is all zeros (an absent ID).
func idBytes(id []byte) []byte {
	for _, b := range id {
		if b != 0 {
			return id
		}
	}
	return nil
}

// heldMessage returns the stored form of a held payload, nil when it is not a Held.
func heldMessage(p any) *HeldRecord {
	h, ok := p.(Held)
	if !ok {
		return nil
	}
	m := &HeldRecord{Signal: Signal(h.Signal), Otlp: h.OTLP, Delivery: h.ID}
	if h.Run.Known {
		m.Run = &h.Run.Ns
	}
	return m
}

func hasScope(m map[pairing.ConversationKey]uint32, k pairing.ConversationKey) bool {
	_, ok := m[k]
	return ok
}

// The stored values of the engine's enumerations, and back (see decode.go).
var (
	callStates = map[pairing.CallState]CallState{
		pairing.CallPending:     CallState_CALL_STATE_PENDING,
		pairing.CallWaiting:     CallState_CALL_STATE_WAITING,
		pairing.CallResolved:    CallState_CALL_STATE_RESOLVED,
		pairing.CallPendingHeld: CallState_CALL_STATE_PENDING_HELD,
	}
	closingKinds = map[pairing.Kind]ClosingKind{
		pairing.KindBoundary:   ClosingKind_CLOSING_KIND_BOUNDARY,
		pairing.KindSessionEnd: ClosingKind_CLOSING_KIND_SESSION_END,
	}
	activityKinds = map[pairing.ActivityKind]ActivityKind{
		pairing.ActivityModel:      ActivityKind_ACTIVITY_KIND_MODEL,
		pairing.ActivityCompaction: ActivityKind_ACTIVITY_KIND_COMPACTION,
	}
	anchorKinds = map[pairing.ActivityKind]AnchorKind{
		pairing.ActivityTurn:      AnchorKind_ANCHOR_KIND_TURN,
		pairing.ActivityModelSpan: AnchorKind_ANCHOR_KIND_MODEL_REQUEST,
	}
)
