// state_encode.go holds the writing of the stored state: the encoder (varints, byte strings,
// the string table) and encodeState with the origins and held records of the calls.

package toolpairprocessor

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// encoder appends the stored format to buf. Strings that repeat (tenants, scopes, tool names,
// steps, scope attributes) go through a table: each is written once, then referred to by
// its index (see str).
type encoder struct {
	buf     []byte
	strs    map[string]uint64
	origins map[*synth.Origin]uint64
}

// The encoder's primitives: a uvarint, a zigzag varint, one byte, bytes as they are, and
// bytes or a string after their length (a uvarint).
func (w *encoder) uint(v uint64)   { w.buf = binary.AppendUvarint(w.buf, v) }
func (w *encoder) int(v int64)     { w.buf = binary.AppendVarint(w.buf, v) }
func (w *encoder) byte(b byte)     { w.buf = append(w.buf, b) }
func (w *encoder) raw(b []byte)    { w.buf = append(w.buf, b...) }
func (w *encoder) bytes(b []byte)  { w.uint(uint64(len(b))); w.raw(b) }
func (w *encoder) string(s string) { w.uint(uint64(len(s))); w.buf = append(w.buf, s...) }

// str writes a string of the table: a uvarint whose low bit is 1 for a new string (its length
// in the other bits, then its bytes; it takes the table's next index), 0 for one written
// before (its index in the other bits).
func (w *encoder) str(s string) {
	if i, ok := w.strs[s]; ok {
		w.uint(i << 1)
		return
	}
	if w.strs == nil {
		w.strs = map[string]uint64{}
	}
	w.strs[s] = uint64(len(w.strs))
	w.uint(uint64(len(s))<<1 | 1)
	w.buf = append(w.buf, s...)
}

// encodeState returns the stored form of st for the configuration fingerprint fp. It reads
// use payloads (origins, read-only) and held records already serialised (heldBytes).
func encodeState(st *savedState, fp [8]byte) ([]byte, error) {
	w := &encoder{buf: make([]byte, 0, 4096+len(st.engine.Calls)*96+len(st.engine.Activity)*24)}
	w.raw([]byte(stateMagic))
	w.uint(stateVersion)
	w.raw(fp[:])

	snap := st.engine
	// Resources, each once.
	resIdx := map[*synth.Resource]int{}
	var resources []*synth.Resource
	for i := range snap.Calls {
		o, _ := snap.Calls[i].Payload.(*synth.Origin)
		for _, o := range []*synth.Origin{o, o.ForSignal(synth.Logs), o.ForSignal(synth.Traces)} {
			if o != nil && o.Resource != nil {
				if _, seen := resIdx[o.Resource]; !seen {
					resIdx[o.Resource] = len(resources)
					resources = append(resources, o.Resource)
				}
			}
		}
	}
	w.uint(uint64(len(resources)))
	for _, r := range resources {
		td := ptrace.NewTraces()
		r.Resource.CopyTo(td.ResourceSpans().AppendEmpty().Resource())
		b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
		if err != nil {
			return nil, fmt.Errorf("encoding a resource: %w", err)
		}
		w.bytes(b)
	}

	scopes := slices.Clone(snap.Scopes)
	scopeIdx := make(map[pairing.ScopeKey]int, len(scopes))
	for i := range scopes {
		scopeIdx[scopes[i].Key] = i
	}
	for i := range snap.Calls {
		if k := snap.Calls[i].Key.ScopeKey(); !hasKey(scopeIdx, k) {
			scopeIdx[k] = len(scopes)
			scopes = append(scopes, pairing.ScopeSnapshot{Key: k})
		}
	}
	w.uint(uint64(len(scopes)))
	for i := range scopes {
		sc := &scopes[i]
		w.str(sc.Key.Tenant)
		w.str(sc.Key.Scope)
		w.byte(boolByte(sc.UsesSeen))
		w.int(sc.LastSeen)
		w.int(sc.LastRecord)
		w.uint(uint64(len(sc.Closings)))
		for _, c := range sc.Closings {
			w.byte(byte(c.Kind))
			w.int(c.Time)
			w.str(c.Step)
		}
	}
	w.uint(uint64(len(snap.Queue)))
	for _, q := range snap.Queue {
		w.uint(uint64(q.Scope))
		w.int(q.Time)
		w.int(q.Deadline)
	}
	w.uint(uint64(len(snap.UsedScopes)))
	for _, h := range snap.UsedScopes {
		w.buf = binary.LittleEndian.AppendUint64(w.buf, h)
	}
	w.uint(uint64(len(snap.Calls)))
	for i := range snap.Calls {
		c := &snap.Calls[i]
		w.byte(byte(c.State))
		w.uint(uint64(scopeIdx[c.Key.ScopeKey()]))
		w.string(c.Key.CallID)
		w.str(c.ToolName)
		w.str(c.Step)
		w.int(c.UseTime)
		w.int(c.ResultTime)
		w.int(c.Deadline)
		w.uint(c.Seq)
		w.byte(c.Source)
		w.byte(c.Flags)
		if c.HasMatch() {
			w.uint(c.Match) // only for calls whose flags say so: blobs without any read as before
		}
		switch c.State {
		case pairing.CallPending:
			encodeOrigin(w, c.Payload, resIdx)
			encodeAlso(w, c.Payload, resIdx)
		case pairing.CallPendingHeld:
			encodeOrigin(w, c.Payload, resIdx)
			encodeAlso(w, c.Payload, resIdx)
			encodeHeld(w, c.Companion)
		case pairing.CallWaiting:
			encodeHeld(w, c.Payload)
		}
		// The call's sources and signals (specification section 2): its use signal, each
		// signal's earliest use, further sources that reported it, records held with it.
		w.byte(c.UseSignal)
		w.int(c.SignalUseTimes[0])
		w.int(c.SignalUseTimes[1])
		w.uint(uint64(len(c.Reporters)))
		for _, src := range c.Reporters {
			w.byte(src)
		}
		w.uint(uint64(len(c.Reports)))
		for _, h := range c.Reports {
			w.byte(h.Source)
			w.byte(boolByte(h.Aborted))
			w.int(h.Time)
			w.int(h.Start)
			encodeHeld(w, h.Payload)
		}
	}
	w.uint(uint64(len(snap.Activity)))
	for i := range snap.Activity {
		a := &snap.Activity[i]
		kind := byte(activityModel)
		if a.Kind == pairing.ActivityCompaction {
			kind = activityCompaction
		}
		w.byte(kind)
		w.str(a.Key.Tenant)
		w.str(a.Key.Scope)
		w.string("") // call ID: tool calls are the engine's own entries
		w.str("")    // tool
		w.int(a.Start)
		w.int(a.End)
		w.int(a.Seen)
	}
	w.buf = binary.LittleEndian.AppendUint32(w.buf, crc32.ChecksumIEEE(w.buf))
	return w.buf, nil
}

func hasKey(m map[pairing.ScopeKey]int, k pairing.ScopeKey) bool {
	_, ok := m[k]
	return ok
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// encodeOrigin writes the origin of a pending call: a uvarint 0 for none, 2*i+1 for the
// origin of index i written before (the calls of one record share it), or 2 for a new one,
// which takes the next index, followed by it.
func encodeOrigin(w *encoder, p any, resIdx map[*synth.Resource]int) {
	o, ok := p.(*synth.Origin)
	if !ok || o.Resource == nil {
		w.uint(0)
		return
	}
	if i, ok := w.origins[o]; ok {
		w.uint(2*i + 1)
		return
	}
	if w.origins == nil {
		w.origins = map[*synth.Origin]uint64{}
	}
	w.origins[o] = uint64(len(w.origins))
	w.uint(2)
	w.uint(uint64(resIdx[o.Resource]))
	w.str(o.ScopeAttr)
	w.str(o.ScopeValue)
	w.byte(byte(o.Signal))
	w.raw(o.TraceID[:])
	w.raw(o.SpanID[:])
	w.raw(o.ParentSpanID[:])
}

// encodeAlso writes the origin of the other signal of a call announced in both (Origin.Also),
// or none.
func encodeAlso(w *encoder, p any, resIdx map[*synth.Resource]int) {
	var also any
	if o, ok := p.(*synth.Origin); ok && o.Also != nil {
		also = o.Also
	}
	encodeOrigin(w, also, resIdx)
}

func encodeHeld(w *encoder, p any) {
	h, ok := p.(heldBytes)
	if !ok {
		w.byte(0)
		return
	}
	w.byte(byte(h.signal))
	w.bytes(h.data)
}
