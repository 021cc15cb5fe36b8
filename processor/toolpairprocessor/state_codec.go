package toolpairprocessor

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/inflight"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// The stored state (specification section 9) is one blob:
//
//	magic "TPST" | format version (uvarint) | configuration fingerprint (8 bytes) | body | CRC-32 (IEEE, 4 bytes, little endian, over all before it)
//
// The body is a sequence of sections, each a count (uvarint) followed by its items; integers
// are varints (signed: zigzag), byte strings and call IDs a uvarint length then the bytes,
// other strings entries of a string table (encoder.str: written once, then referred to):
//
//	resources: the resources of the announcing records, each an OTLP protobuf ptrace.Traces
//	           holding one ResourceSpans with that resource (shared by the calls that name it)
//	scopes:    tenant, scope, uses seen (byte), last seen (engine clock, Unix ns), last record
//	           time (Unix ns), then the scope's queued step boundaries and session ends: kind
//	           (byte), record time, step
//	queue:     the FIFO of closing deadlines: scope index, record time, deadline (Unix ns)
//	used:      hashes (8 bytes) of forgotten scopes that saw a use, oldest first
//	calls:     state (byte), scope index, call ID, tool name, step, use time, result time,
//	           deadline (engine clock, Unix ns), sequence, source (byte), flags (byte), the
//	           match hash (uvarint) when the flags say the call has one (CallSnapshot.HasMatch),
//	           then the use's origin (pending calls) and the held record (waiting results and
//	           companions)
//	inflight:  the timeout classifier's operations: kind (byte), tenant, scope, call ID, tool,
//	           start, end, resolved at
//
// An origin (encodeOrigin) is written once and referred to by the other calls of its record:
// resource index, scope attribute, scope value, signal (byte), trace ID (16 bytes), span ID
// (8), parent span ID (8). A held record is a byte 0 (none), 1 (a span: OTLP protobuf
// ptrace.Traces of that one span) or 2 (a log record: plog.Logs), then the bytes.
const (
	stateMagic = "TPST"
	// stateVersion is the format version written. A blob of a newer version is discarded.
	stateVersion = 2
)

// discardReason says why a stored state was not restored (the reason attribute of
// otelcol_processor_toolpair_state_discarded).
type discardReason string

const (
	discardCorrupt discardReason = "corrupt"
	discardVersion discardReason = "version"
	discardConfig  discardReason = "config"
	discardMissing discardReason = "missing"
)

// discardError is a stored state that cannot be used, and why.
type discardError struct {
	reason discardReason
	detail string
}

func (e *discardError) Error() string { return string(e.reason) + ": " + e.detail }

func discard(reason discardReason, format string, args ...any) error {
	return &discardError{reason: reason, detail: fmt.Sprintf(format, args...)}
}

// stateFingerprint is the fingerprint of the configuration that gives stored call keys their
// meaning: scope_attributes, tenant_attributes, dialects and custom_dialects (the first 8
// bytes of a SHA-256).
// Another value means the keys would not match the records the processor now sees.
func stateFingerprint(cfg *Config) [8]byte {
	h := sha256.New()
	write := func(name string, list []string) {
		h.Write([]byte(name))
		for _, s := range list {
			h.Write([]byte{0})
			h.Write([]byte(s))
		}
		h.Write([]byte{1})
	}
	write("scope_attributes", cfg.ScopeAttributes)
	write("tenant_attributes", cfg.TenantAttributes)
	dialects := slices.Clone(cfg.Dialects)
	slices.Sort(dialects)
	write("dialects", dialects)
	custom := make([]string, 0, len(cfg.CustomDialects))
	for _, c := range cfg.CustomDialects {
		custom = append(custom, fmt.Sprintf("%#v", c))
	}
	write("custom_dialects", custom)
	var fp [8]byte
	copy(fp[:], h.Sum(nil))
	return fp
}

// heldBytes is a held record serialised under the engine's lock (see pairing.Engine.Snapshot).
type heldBytes struct {
	signal synth.Signal
	data   []byte
}

// marshalHeld serialises a held record (a *heldSpan or *heldLog) to a heldBytes. It waits for
// the record to be copied in (heldSpan.wait); nil for any other payload.
func marshalHeld(p any) any {
	switch h := p.(type) {
	case *heldSpan:
		h.wait()
		b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(h.td)
		if err != nil {
			return nil
		}
		return heldBytes{signal: synth.Traces, data: b}
	case *heldLog:
		h.wait()
		b, err := (&plog.ProtoMarshaler{}).MarshalLogs(h.ld)
		if err != nil {
			return nil
		}
		return heldBytes{signal: synth.Logs, data: b}
	}
	return nil
}

// savedState is the state of one component: the engine's snapshot (held records as
// heldBytes) and the timeout classifier's operations.
type savedState struct {
	engine *pairing.Snapshot
	flight []inflight.Saved
}

// encoder appends the stored format to buf. Strings that repeat (tenants, scopes, tool names,
// steps, scope attributes) go through a table: each is written once, then referred to by
// its index (see str).
type encoder struct {
	buf     []byte
	strs    map[string]uint64
	origins map[*synth.Origin]uint64
}

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
	w := &encoder{buf: make([]byte, 0, 4096+len(st.engine.Calls)*96+len(st.flight)*48)}
	w.raw([]byte(stateMagic))
	w.uint(stateVersion)
	w.raw(fp[:])

	snap := st.engine
	// Resources, each once.
	resIdx := map[*synth.Resource]int{}
	var resources []*synth.Resource
	for i := range snap.Calls {
		if o, ok := snap.Calls[i].Payload.(*synth.Origin); ok && o.Resource != nil {
			if _, seen := resIdx[o.Resource]; !seen {
				resIdx[o.Resource] = len(resources)
				resources = append(resources, o.Resource)
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
		case pairing.CallPendingHeld:
			encodeOrigin(w, c.Payload, resIdx)
			encodeHeld(w, c.Companion)
		case pairing.CallWaiting:
			encodeHeld(w, c.Payload)
		}
	}
	w.uint(uint64(len(st.flight)))
	for i := range st.flight {
		o := &st.flight[i]
		w.byte(byte(o.Kind))
		w.str(o.Scope.Tenant)
		w.str(o.Scope.Scope)
		w.string(o.CallID)
		w.str(o.Tool)
		w.int(o.Start)
		w.int(o.End)
		w.int(o.ResolvedAt)
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

func encodeHeld(w *encoder, p any) {
	h, ok := p.(heldBytes)
	if !ok {
		w.byte(0)
		return
	}
	w.byte(byte(h.signal))
	w.bytes(h.data)
}

// decoder reads the stored format; the first error sticks and every later read returns
// zero values.
type decoder struct {
	buf     []byte
	err     error
	strs    []string
	origins []*synth.Origin
}

func (r *decoder) fail(what string) {
	if r.err == nil {
		r.err = discard(discardCorrupt, "truncated or malformed %s", what)
	}
}

func (r *decoder) uint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.buf)
	if n <= 0 {
		r.fail("integer")
		return 0
	}
	r.buf = r.buf[n:]
	return v
}

func (r *decoder) int() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.buf)
	if n <= 0 {
		r.fail("integer")
		return 0
	}
	r.buf = r.buf[n:]
	return v
}

func (r *decoder) byte() byte {
	b := r.raw(1)
	if b == nil {
		return 0
	}
	return b[0]
}

func (r *decoder) raw(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.buf) {
		r.fail("field")
		return nil
	}
	b := r.buf[:n:n]
	r.buf = r.buf[n:]
	return b
}

func (r *decoder) bytes() []byte {
	n := r.uint()
	if n > uint64(len(r.buf)) {
		r.fail("length")
		return nil
	}
	return r.raw(int(n))
}

func (r *decoder) string() string { return string(r.bytes()) }

// str reads a string of the table (see encoder.str).
func (r *decoder) str() string {
	v := r.uint()
	if r.err != nil {
		return ""
	}
	if v&1 == 0 {
		if v>>1 >= uint64(len(r.strs)) {
			r.fail("string reference")
			return ""
		}
		return r.strs[v>>1]
	}
	n := v >> 1
	if n > uint64(len(r.buf)) {
		r.fail("length")
		return ""
	}
	s := string(r.raw(int(n)))
	r.strs = append(r.strs, s)
	return s
}

// count reads a section's item count, refusing one that cannot fit in what is left (every
// item takes at least min bytes), so a corrupt count never allocates much.
func (r *decoder) count(min int) int {
	n := r.uint()
	if n > uint64(len(r.buf)/min) {
		r.fail("count")
		return 0
	}
	return int(n)
}

// stateHeader checks the magic, version, checksum and fingerprint of a stored blob and
// returns its body.
func stateHeader(blob []byte, fp [8]byte) ([]byte, error) {
	if len(blob) < len(stateMagic)+1+8+4 || !bytes.HasPrefix(blob, []byte(stateMagic)) {
		return nil, discard(discardCorrupt, "not a toolpair state (%d bytes)", len(blob))
	}
	r := &decoder{buf: blob[len(stateMagic):]}
	v := r.uint()
	if r.err != nil {
		return nil, r.err
	}
	if v != stateVersion {
		return nil, discard(discardVersion, "format version %d, this collector reads %d", v, stateVersion)
	}
	body := blob[:len(blob)-4]
	if crc32.ChecksumIEEE(body) != binary.LittleEndian.Uint32(blob[len(blob)-4:]) {
		return nil, discard(discardCorrupt, "checksum mismatch")
	}
	r.buf = r.buf[:len(r.buf)-4]
	got := r.raw(8)
	if r.err != nil {
		return nil, r.err
	}
	if !bytes.Equal(got, fp[:]) {
		return nil, discard(discardConfig, "written under other scope_attributes, tenant_attributes, dialects or custom_dialects")
	}
	return r.buf, nil
}

// decodeState reads a stored blob. Origins get next as their pipeline by signal (nil when
// the component has no pipeline of that signal now: no synthetic record is then made), held
// records likewise. Errors are *discardError.
func decodeState(blob []byte, fp [8]byte, next nexts) (*savedState, error) {
	body, err := stateHeader(blob, fp)
	if err != nil {
		return nil, err
	}
	r := &decoder{buf: body}
	resources := make([]*synth.Resource, r.count(1))
	for i := range resources {
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(r.bytes())
		if r.err == nil && (err != nil || td.ResourceSpans().Len() != 1) {
			return nil, discard(discardCorrupt, "resource %d does not decode", i)
		}
		if r.err == nil {
			resources[i] = synth.NewResource(td.ResourceSpans().At(0).Resource())
		}
	}
	snap := &pairing.Snapshot{Scopes: make([]pairing.ScopeSnapshot, r.count(4))}
	for i := range snap.Scopes {
		sc := &snap.Scopes[i]
		sc.Key = pairing.ScopeKey{Tenant: r.str(), Scope: r.str()}
		sc.UsesSeen = r.byte() == 1
		sc.LastSeen = r.int()
		sc.LastRecord = r.int()
		sc.Closings = make([]pairing.ClosingSnapshot, r.count(3))
		for j := range sc.Closings {
			sc.Closings[j] = pairing.ClosingSnapshot{Kind: pairing.Kind(r.byte()), Time: r.int(), Step: r.str()}
		}
	}
	snap.Queue = make([]pairing.QueuedClosing, r.count(3))
	for i := range snap.Queue {
		q := &snap.Queue[i]
		q.Scope = int(r.uint())
		q.Time = r.int()
		q.Deadline = r.int()
		if q.Scope >= len(snap.Scopes) {
			r.fail("closing scope index")
		}
	}
	snap.UsedScopes = make([]uint64, r.count(8))
	for i := range snap.UsedScopes {
		if b := r.raw(8); b != nil {
			snap.UsedScopes[i] = binary.LittleEndian.Uint64(b)
		}
	}
	snap.Calls = make([]pairing.CallSnapshot, r.count(11))
	for i := range snap.Calls {
		c := &snap.Calls[i]
		c.State = pairing.CallState(r.byte())
		si := r.uint()
		if si >= uint64(len(snap.Scopes)) {
			r.fail("call scope index")
			break
		}
		c.Key = pairing.Key{Tenant: snap.Scopes[si].Key.Tenant, Scope: snap.Scopes[si].Key.Scope, CallID: r.string()}
		c.ToolName = r.str()
		c.Step = r.str()
		c.UseTime = r.int()
		c.ResultTime = r.int()
		c.Deadline = r.int()
		c.Seq = r.uint()
		c.Source = r.byte()
		c.Flags = r.byte()
		if c.HasMatch() {
			c.Match = r.uint()
		}
		switch c.State {
		case pairing.CallPending:
			c.Payload = decodeOrigin(r, resources, next)
		case pairing.CallPendingHeld:
			c.Payload = decodeOrigin(r, resources, next)
			c.Companion = decodeHeld(r, next)
		case pairing.CallWaiting:
			c.Payload = decodeHeld(r, next)
		case pairing.CallResolved:
		default:
			r.fail("call state")
		}
	}
	flight := make([]inflight.Saved, r.count(8))
	for i := range flight {
		flight[i] = inflight.Saved{
			Kind:   inflight.Kind(r.byte()),
			Scope:  pairing.ScopeKey{Tenant: r.str(), Scope: r.str()},
			CallID: r.string(), Tool: r.str(),
			Start: r.int(), End: r.int(), ResolvedAt: r.int(),
		}
	}
	if r.err == nil && len(r.buf) != 0 {
		r.fail("end of state")
	}
	if r.err != nil {
		return nil, r.err
	}
	return &savedState{engine: snap, flight: flight}, nil
}

// nexts are the component's next consumers, one of each signal, that restored origins and
// held records are sent to.
type nexts struct {
	traces consumer.Traces
	logs   consumer.Logs
}

func decodeOrigin(r *decoder, resources []*synth.Resource, next nexts) any {
	tag := r.uint()
	var o *synth.Origin
	switch {
	case r.err != nil || tag == 0:
		return nil
	case tag&1 == 1:
		if tag>>1 >= uint64(len(r.origins)) {
			r.fail("origin reference")
			return nil
		}
		o = r.origins[tag>>1]
	case tag == 2:
		o = decodeNewOrigin(r, resources, next)
		r.origins = append(r.origins, o)
	default:
		r.fail("origin tag")
	}
	if o == nil {
		return nil // no typed nil in the payload
	}
	return o
}

// decodeNewOrigin reads an origin's fields; nil when it cannot be used.
func decodeNewOrigin(r *decoder, resources []*synth.Resource, next nexts) *synth.Origin {
	ri := r.uint()
	o := &synth.Origin{ScopeAttr: r.str(), ScopeValue: r.str(), Signal: synth.Signal(r.byte())}
	copy(o.TraceID[:], r.raw(16))
	copy(o.SpanID[:], r.raw(8))
	copy(o.ParentSpanID[:], r.raw(8))
	if r.err != nil {
		return nil
	}
	if ri >= uint64(len(resources)) {
		r.fail("resource index")
		return nil
	}
	o.Resource = resources[ri]
	switch {
	case o.Signal == synth.Traces && next.traces != nil:
		o.Next = next.traces
	case o.Signal == synth.Logs && next.logs != nil:
		o.Next = next.logs
	case o.Signal != synth.Traces && o.Signal != synth.Logs:
		r.fail("origin signal")
		return nil
	default:
		return nil // no pipeline of that signal any more: no synthetic record can be sent
	}
	return o
}

func decodeHeld(r *decoder, next nexts) any {
	sig := synth.Signal(r.byte())
	if sig == 0 || r.err != nil {
		return nil
	}
	data := r.bytes()
	if r.err != nil {
		return nil
	}
	switch sig {
	case synth.Traces:
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(data)
		if err != nil || td.SpanCount() != 1 || td.ResourceSpans().Len() != 1 {
			r.fail("held span")
			return nil
		}
		if next.traces == nil {
			return nil
		}
		return &heldSpan{td: td, next: next.traces}
	case synth.Logs:
		ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(data)
		if err != nil || ld.LogRecordCount() != 1 || ld.ResourceLogs().Len() != 1 {
			r.fail("held log record")
			return nil
		}
		if next.logs == nil {
			return nil
		}
		return &heldLog{ld: ld, next: next.logs}
	}
	r.fail("held record signal")
	return nil
}

// A resolution record is resolutionMagic, the keys of the calls one batch resolved, and a
// CRC-32 (IEEE, little endian) of all before it. A batch that released held results without
// a call ID (pairing.Resolution.HeldSeq) writes resolutionMagicHeld instead and, after the
// keys, those results' pairing.HeldRef. Each section is a count, then per item a byte 1
// followed by tenant and scope when its scope differs from the previous item's (else 0), then
// the call ID or the held result's sequence (uvarint).
const (
	resolutionMagic     = "TPR1"
	resolutionMagicHeld = "TPR2"
)

// encodeResolutions returns the resolution record of res: every resolution that changed
// the state of its call (all but duplicates), as (tenant, scope, call ID), and every release
// of a held result without a call ID; nil when there is none.
func encodeResolutions(res []pairing.Resolution) []byte {
	w := &encoder{buf: make([]byte, 0, 16+len(res)*24)}
	n, held := 0, 0
	for i := range res {
		if res[i].Outcome != pairing.OutcomeDuplicate && res[i].Key.CallID != "" {
			n++
		}
		if res[i].HeldSeq != 0 {
			held++
		}
	}
	if n+held == 0 {
		return nil
	}
	if held > 0 {
		w.raw([]byte(resolutionMagicHeld))
	} else {
		w.raw([]byte(resolutionMagic))
	}
	var last pairing.ScopeKey
	first := true
	scope := func(sk pairing.ScopeKey) {
		if first || sk != last {
			w.byte(1)
			w.string(sk.Tenant)
			w.string(sk.Scope)
			last, first = sk, false
		} else {
			w.byte(0)
		}
	}
	w.uint(uint64(n))
	for i := range res {
		r := &res[i]
		if r.Outcome == pairing.OutcomeDuplicate || r.Key.CallID == "" {
			continue
		}
		scope(r.Key.ScopeKey())
		w.string(r.Key.CallID)
	}
	if held > 0 {
		first = true
		w.uint(uint64(held))
		for i := range res {
			if r := &res[i]; r.HeldSeq != 0 {
				scope(r.Key.ScopeKey())
				w.uint(r.HeldSeq)
			}
		}
	}
	w.buf = binary.LittleEndian.AppendUint32(w.buf, crc32.ChecksumIEEE(w.buf))
	return w.buf
}

// decodeResolutions reads a resolution record: the keys of the calls resolved, and the held
// results without a call ID released.
func decodeResolutions(b []byte) ([]pairing.Key, []pairing.HeldRef, error) {
	if len(b) < len(resolutionMagic)+4 {
		return nil, nil, errors.New("not a resolution record")
	}
	magic := string(b[:len(resolutionMagic)])
	if magic != resolutionMagic && magic != resolutionMagicHeld {
		return nil, nil, errors.New("not a resolution record")
	}
	body := b[:len(b)-4]
	if crc32.ChecksumIEEE(body) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, nil, errors.New("resolution record checksum mismatch")
	}
	r := &decoder{buf: body[len(resolutionMagic):]}
	var sk pairing.ScopeKey
	scope := func() pairing.ScopeKey {
		if r.byte() == 1 {
			sk = pairing.ScopeKey{Tenant: r.string(), Scope: r.string()}
		}
		return sk
	}
	keys := make([]pairing.Key, r.count(2))
	for i := range keys {
		k := scope()
		keys[i] = pairing.Key{Tenant: k.Tenant, Scope: k.Scope, CallID: r.string()}
	}
	var held []pairing.HeldRef
	if magic == resolutionMagicHeld {
		held = make([]pairing.HeldRef, r.count(2))
		for i := range held {
			held[i] = pairing.HeldRef{Scope: scope(), Seq: r.uint()}
		}
	}
	if r.err != nil {
		return nil, nil, r.err
	}
	return keys, held, nil
}
