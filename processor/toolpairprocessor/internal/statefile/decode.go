// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package statefile

import (
	"bytes"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"google.golang.org/protobuf/proto"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/delivery"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// Decode reads a checkpoint blob written by Encode under the configuration fingerprint fp and
// returns its snapshot, payloads bound through sinks (see Sinks). Every error is a
// *DiscardError: ReasonVersion for a blob of another format version, ReasonConfig for another
// fingerprint, ReasonCorrupt for anything that is not a well-formed checkpoint (including an
// index out of range, an unknown enumeration value, a resource or ID of the wrong shape, or
// an error of sinks.Held). A blob either decodes whole or not at all.
func Decode(blob []byte, fp [8]byte, sinks Sinks) (*pairing.Snapshot, error) {
	snap, _, err := DecodeCheckpoint(blob, fp, sinks)
	return snap, err
}

// DecodeCheckpoint is Decode that also returns the deliveries the checkpoint remembers
// (EncodeCheckpoint), oldest first.
func DecodeCheckpoint(blob []byte, fp [8]byte, sinks Sinks) (*pairing.Snapshot, []delivery.Entry, error) {
	body, err := unframe(blob, StateMagic, "state")
	if err != nil {
		return nil, nil, err
	}
	if len(body) < len(fp) {
		return nil, nil, Discard(ReasonCorrupt, "state without a fingerprint")
	}
	if !bytes.Equal(body[:len(fp)], fp[:]) {
		return nil, nil, Discard(ReasonConfig, "written under other scope_attributes, tenant_attributes, dialects or custom_dialects")
	}
	st := &State{}
	if err := proto.Unmarshal(body[len(fp):], st); err != nil {
		return nil, nil, Discard(ReasonCorrupt, "state body: %v", err)
	}
	snap, err := decodeState(st, sinks)
	if err != nil {
		return nil, nil, err
	}
	dels, err := decodeDeliveries(st.Deliveries)
	if err != nil {
		return nil, nil, err
	}
	return snap, dels, nil
}

// decodeState returns the snapshot of st, payloads bound through sinks (see Decode).
func decodeState(st *State, sinks Sinks) (*pairing.Snapshot, error) {
	r := &decoder{st: st, sinks: sinks, strs: st.Strings}
	snap := r.snapshot()
	if r.err != nil {
		return nil, r.err
	}
	return snap, nil
}

// decoder turns a State into a snapshot; the first error sticks, and what is read after it
// is dropped.
type decoder struct {
	st      *State
	sinks   Sinks
	strs    []string
	origins []*synth.Origin // nil where the origin is dropped
	err     error
}

func (r *decoder) fail(format string, args ...any) {
	if r.err == nil {
		r.err = Discard(ReasonCorrupt, format, args...)
	}
}

// str returns the string of index i in State.strings (0: "").
func (r *decoder) str(i uint32) string {
	if i == 0 {
		return ""
	}
	if int64(i) > int64(len(r.strs)) {
		r.fail("string index %d of %d", i, len(r.strs))
		return ""
	}
	return r.strs[i-1]
}

func (r *decoder) snapshot() *pairing.Snapshot {
	st := r.st
	r.readOrigins()
	snap := &pairing.Snapshot{Conversations: make([]pairing.ConversationSnapshot, len(st.Scopes)), UsedConversations: st.UsedScopes}
	for i, m := range st.Scopes {
		sc := &snap.Conversations[i]
		*sc = pairing.ConversationSnapshot{Key: pairing.ConversationKey{Tenant: r.str(m.Tenant), Conversation: r.str(m.Scope)}, UsesSeen: m.UsesSeen, LastSeen: m.LastSeen, LastRecord: m.LastRecord}
		if len(m.Closings) > 0 {
			sc.Closings = make([]pairing.ClosingSnapshot, len(m.Closings))
		}
		for j, c := range m.Closings {
			kind, ok := closingKindOf[c.Kind]
			if !ok {
				r.fail("closing kind %d", c.Kind)
			}
			sc.Closings[j] = pairing.ClosingSnapshot{Kind: kind, Time: c.Time, Step: r.str(c.Step)}
		}
	}
	if len(st.Queue) > 0 {
		snap.Queue = make([]pairing.QueuedClosing, len(st.Queue))
	}
	for i, q := range st.Queue {
		if int64(q.Scope) >= int64(len(snap.Conversations)) {
			r.fail("closing scope index %d", q.Scope)
		}
		snap.Queue[i] = pairing.QueuedClosing{Scope: int(q.Scope), Time: q.Time, Deadline: q.Deadline}
	}
	if len(st.Calls) > 0 {
		snap.Calls = make([]pairing.CallSnapshot, len(st.Calls))
	}
	for i, m := range st.Calls {
		r.call(&snap.Calls[i], m, snap.Conversations)
		if r.err != nil {
			return nil
		}
	}
	if len(st.Activity) > 0 {
		snap.Activity = make([]pairing.ActivitySnapshot, len(st.Activity))
	}
	for i, a := range st.Activity {
		kind, ok := activityKindOf[a.Kind]
		if !ok {
			r.fail("activity kind %d", a.Kind)
		}
		snap.Activity[i] = pairing.ActivitySnapshot{Key: pairing.ConversationKey{Tenant: r.str(a.Tenant), Conversation: r.str(a.Scope)}, Kind: kind, Start: a.Start, End: a.End, Seen: a.Seen}
	}
	r.anchors(snap)
	return snap
}

// anchors appends the stored anchor spans to snap.Activity, each with the value
// Sinks.Anchor makes of it; none when Sinks.Anchor is nil.
func (r *decoder) anchors(snap *pairing.Snapshot) {
	for i, a := range r.st.Anchors {
		kind, ok := anchorKindOf[a.Kind]
		if !ok || len(a.TraceId) != 16 || len(a.SpanId) != 8 {
			r.fail("anchor %d: kind %d, IDs of %d and %d bytes", i, a.Kind, len(a.TraceId), len(a.SpanId))
			return
		}
		if r.sinks.Anchor == nil {
			continue
		}
		s := pairing.ActivitySnapshot{Key: pairing.ConversationKey{Tenant: r.str(a.Tenant), Conversation: r.str(a.Scope)}, Kind: kind, Start: a.Start, End: a.End, Seen: a.Seen}
		copy(s.ID[:16], a.TraceId)
		copy(s.ID[16:], a.SpanId)
		s.Anchor = r.sinks.Anchor(pcommon.TraceID(a.TraceId), pcommon.SpanID(a.SpanId), a.Start, a.End)
		if s.Anchor != nil {
			snap.Activity = append(snap.Activity, s)
		}
	}
}

// call fills c from the stored call m.
func (r *decoder) call(c *pairing.CallSnapshot, m *Call, scopes []pairing.ConversationSnapshot) {
	state, ok := callStateOf[m.State]
	if !ok {
		r.fail("call state %d", m.State)
		return
	}
	if int64(m.Scope) >= int64(len(scopes)) {
		r.fail("call scope index %d", m.Scope)
		return
	}
	if m.Source > 0xff || m.Flags > 0xff || m.UseSignal > 0xff {
		r.fail("call source, flags or use signal out of range")
		return
	}
	sk := scopes[m.Scope].Key
	*c = pairing.CallSnapshot{
		State: state, Key: pairing.Key{Tenant: sk.Tenant, Conversation: sk.Conversation, CallID: m.CallId},
		ToolName: r.str(m.Tool), Step: r.str(m.Step),
		UseTime: m.UseTime, ResultTime: m.ResultTime, Deadline: m.Deadline, Seq: m.Seq,
		Source: uint8(m.Source), Flags: uint8(m.Flags), UseSignal: uint8(m.UseSignal),
		SignalUseTimes: [2]int64{m.TracesUseTime, m.LogsUseTime},
	}
	if c.HasMatch() {
		c.Match = m.Match
	}
	if len(m.Reporters) > 0 {
		c.Reporters = m.Reporters
	}
	switch state {
	case pairing.CallPending, pairing.CallPendingHeld:
		c.Payload = withAlso(r.origin(m.Origin), r.origin(m.Also))
		if state == pairing.CallPendingHeld {
			c.Companion = r.held(m.Held)
		}
	case pairing.CallWaiting:
		c.Payload = r.held(m.Held)
	}
	if len(m.Reports) > 0 {
		c.Reports = make([]pairing.ReportSnapshot, len(m.Reports))
	}
	for j, h := range m.Reports {
		if h.Source > 0xff {
			r.fail("report source %d", h.Source)
		}
		c.Reports[j] = pairing.ReportSnapshot{Source: uint8(h.Source), Aborted: h.Aborted, Time: h.Time, Start: h.Start, Payload: r.held(h.Held)}
	}
}

// readOrigins decodes State.resources and State.origins. An origin of a signal Sinks has no
// consumer for is kept as nil.
func (r *decoder) readOrigins() {
	resources := make([]*synth.Resource, len(r.st.Resources))
	for i, b := range r.st.Resources {
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
		if err != nil || td.ResourceSpans().Len() != 1 {
			r.fail("resource %d does not decode", i)
			return
		}
		resources[i] = synth.NewResource(td.ResourceSpans().At(0).Resource())
	}
	r.origins = make([]*synth.Origin, len(r.st.Origins))
	for i, m := range r.st.Origins {
		if int64(m.Resource) >= int64(len(resources)) {
			r.fail("origin resource index %d", m.Resource)
			return
		}
		o := &synth.Origin{Resource: resources[m.Resource], ConversationAttr: r.str(m.ScopeAttr), Conversation: r.str(m.ScopeValue), Signal: synth.Signal(m.Signal), ToolPrefixedIDs: m.ToolPrefixedIds}
		if !setID(o.TraceID[:], m.TraceId) || !setID(o.SpanID[:], m.SpanId) || !setID(o.ParentSpanID[:], m.ParentSpanId) {
			r.fail("origin %d: an ID of the wrong length", i)
			return
		}
		switch {
		case m.Signal == Signal_SIGNAL_TRACES && r.sinks.Traces != nil:
			o.Next = r.sinks.Traces
		case m.Signal == Signal_SIGNAL_LOGS && r.sinks.Logs != nil:
			o.Next = r.sinks.Logs
		case m.Signal != Signal_SIGNAL_TRACES && m.Signal != Signal_SIGNAL_LOGS:
			r.fail("origin %d: signal %d", i, m.Signal)
			return
		default:
			continue // no consumer of that signal any more: no synthetic record can be sent
		}
		r.origins[i] = o
	}
}

// setID copies a stored ID into id: empty is all zeros, any other length than id's is refused.
func setID(id, b []byte) bool {
	if len(b) == 0 {
		return true
	}
	return copy(id, b) == len(id) && len(b) == len(id)
}

// origin returns the origin of reference ref (its place plus one, 0 for none) as a payload:
// nil (not a typed nil) when there is none.
func (r *decoder) origin(ref uint32) any {
	if ref == 0 {
		return nil
	}
	if int64(ref) > int64(len(r.origins)) {
		r.fail("origin reference %d of %d", ref, len(r.origins))
		return nil
	}
	if o := r.origins[ref-1]; o != nil {
		return o
	}
	return nil
}

// withAlso returns the origin p with the other signal's origin also (Origin.Also), as a copy
// (an origin is shared by the calls of its record); p when also is none or of p's signal.
func withAlso(p, also any) any {
	o, ok := p.(*synth.Origin)
	a, ok2 := also.(*synth.Origin)
	if !ok || !ok2 || a.Signal == o.Signal {
		return p
	}
	c := *o
	c.Also = a
	return &c
}

// held returns the payload of a stored held record, through Sinks.Held.
func (r *decoder) held(m *HeldRecord) any {
	if m == nil || r.err != nil {
		return nil
	}
	sig := synth.Signal(m.Signal)
	if m.Signal != Signal_SIGNAL_TRACES && m.Signal != Signal_SIGNAL_LOGS {
		r.fail("held record signal %d", m.Signal)
		return nil
	}
	h := Held{Signal: sig, OTLP: m.Otlp, ID: m.Delivery}
	if m.Run != nil {
		h.Run = synth.Run{Ns: *m.Run, Known: true}
	}
	if r.sinks.Held == nil {
		return h
	}
	p, err := r.sinks.Held(h)
	if err != nil {
		r.fail("held record: %v", err)
		return nil
	}
	return p
}

// The engine's values of the stored enumerations (see encode.go).
var (
	callStateOf    = invert(callStates)
	closingKindOf  = invert(closingKinds)
	activityKindOf = invert(activityKinds)
	anchorKindOf   = invert(anchorKinds)
)

func invert[K, V comparable](m map[K]V) map[V]K {
	inv := make(map[V]K, len(m))
	for k, v := range m {
		inv[v] = k
	}
	return inv
}
