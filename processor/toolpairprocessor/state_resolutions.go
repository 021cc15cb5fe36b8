// state_resolutions.go holds the resolution records: the keys of the calls one batch
// resolved, written between checkpoints (see statestore.go).

package toolpairprocessor

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"strings"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// resolutionMagic starts a resolution record: the keys of the calls one batch resolved.
const resolutionMagic = "TPR1"

// encodeResolutions returns the resolution record of res: every resolution that changed
// the state of its call (all but duplicates), as (tenant, scope, call ID), a scope written
// once for a run of keys of the same scope.
func encodeResolutions(res []pairing.Resolution) []byte {
	w := &encoder{buf: make([]byte, 0, 16+len(res)*24)}
	w.raw([]byte(resolutionMagic))
	n := 0
	for i := range res {
		if res[i].Outcome != pairing.OutcomeDuplicate && res[i].Key.CallID != "" {
			n++
		}
	}
	w.uint(uint64(n))
	var last pairing.ScopeKey
	first := true
	for i := range res {
		r := &res[i]
		if r.Outcome == pairing.OutcomeDuplicate || r.Key.CallID == "" {
			continue
		}
		if sk := r.Key.ScopeKey(); first || sk != last {
			w.byte(1)
			w.string(sk.Tenant)
			w.string(sk.Scope)
			last, first = sk, false
		} else {
			w.byte(0)
		}
		w.string(r.Key.CallID)
	}
	if n == 0 {
		return nil
	}
	w.buf = binary.LittleEndian.AppendUint32(w.buf, crc32.ChecksumIEEE(w.buf))
	return w.buf
}

// decodeResolutions reads a resolution record.
func decodeResolutions(b []byte) ([]pairing.Key, error) {
	if len(b) < len(resolutionMagic)+4 || !strings.HasPrefix(string(b), resolutionMagic) {
		return nil, errors.New("not a resolution record")
	}
	body := b[:len(b)-4]
	if crc32.ChecksumIEEE(body) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, errors.New("resolution record checksum mismatch")
	}
	r := &decoder{buf: body[len(resolutionMagic):]}
	keys := make([]pairing.Key, r.count(2))
	var sk pairing.ScopeKey
	for i := range keys {
		if r.byte() == 1 {
			sk = pairing.ScopeKey{Tenant: r.string(), Scope: r.string()}
		}
		keys[i] = pairing.Key{Tenant: sk.Tenant, Scope: sk.Scope, CallID: r.string()}
	}
	if r.err != nil {
		return nil, r.err
	}
	return keys, nil
}
