// state_decode.go holds the reading of the stored state: the decoder, which fails on the first
// malformed item, the header check (magic, version, fingerprint, checksum) and decodeState
// with the origins and held records of the calls.

package toolpairprocessor

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/batch"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

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
			c.Payload = withAlso(decodeOrigin(r, resources, next), decodeOrigin(r, resources, next))
		case pairing.CallPendingHeld:
			c.Payload = withAlso(decodeOrigin(r, resources, next), decodeOrigin(r, resources, next))
			c.Companion = decodeHeld(r, next)
		case pairing.CallWaiting:
			c.Payload = decodeHeld(r, next)
		case pairing.CallResolved:
		default:
			r.fail("call state")
		}
		c.UseSignal = r.byte()
		c.SignalUseTimes = [2]int64{r.int(), r.int()}
		if n := r.count(1); n > 0 {
			c.Reporters = make([]uint8, n)
		}
		for j := range c.Reporters {
			c.Reporters[j] = r.byte()
		}
		if n := r.count(4); n > 0 {
			c.Reports = make([]pairing.ReportSnapshot, n)
		}
		for j := range c.Reports {
			h := &c.Reports[j]
			h.Source, h.Aborted, h.Time, h.Start = r.byte(), r.byte() == 1, r.int(), r.int()
			h.Payload = decodeHeld(r, next)
		}
		if r.err != nil {
			break
		}
	}
	n := r.count(8)
	for range n {
		kind := r.byte()
		key := pairing.ScopeKey{Tenant: r.str(), Scope: r.str()}
		r.string() // call ID
		r.str()    // tool
		a := pairing.ActivitySnapshot{Key: key, Start: r.int(), End: r.int(), Seen: r.int()}
		if r.err != nil {
			break
		}
		switch kind {
		case activityCall:
			// A tool call: the engine's own calls answer for the calls in flight.
			continue
		case activityModel:
			a.Kind = pairing.ActivityModel
		case activityCompaction:
			a.Kind = pairing.ActivityCompaction
		default:
			r.fail("activity kind")
			continue
		}
		snap.Activity = append(snap.Activity, a)
	}
	if r.err == nil && len(r.buf) != 0 {
		r.fail("end of state")
	}
	if r.err != nil {
		return nil, r.err
	}
	return &savedState{engine: snap}, nil
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
		if err != nil || !oneSpan(td) {
			r.fail("held span")
			return nil
		}
		if next.traces == nil {
			return nil
		}
		return &batch.HeldSpan{Traces: td, Next: next.traces}
	case synth.Logs:
		ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(data)
		if err != nil || !oneLogRecord(ld) {
			r.fail("held log record")
			return nil
		}
		if next.logs == nil {
			return nil
		}
		return &batch.HeldLog{Logs: ld, Next: next.logs}
	}
	r.fail("held record signal")
	return nil
}

// oneSpan reports whether td has the only shape a held span may have: one ResourceSpans
// holding one ScopeSpans holding one span (heldSpan.span reads that position).
func oneSpan(td ptrace.Traces) bool {
	if td.ResourceSpans().Len() != 1 {
		return false
	}
	ss := td.ResourceSpans().At(0).ScopeSpans()
	return ss.Len() == 1 && ss.At(0).Spans().Len() == 1
}

// oneLogRecord reports whether ld has the only shape a held log record may have: one
// ResourceLogs holding one ScopeLogs holding one record (heldLog.record reads that position).
func oneLogRecord(ld plog.Logs) bool {
	if ld.ResourceLogs().Len() != 1 {
		return false
	}
	sl := ld.ResourceLogs().At(0).ScopeLogs()
	return sl.Len() == 1 && sl.At(0).LogRecords().Len() == 1
}
