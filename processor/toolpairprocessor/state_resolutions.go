// state_resolutions.go holds the resolution records: the keys of the calls one batch
// resolved, and the held results without a call ID it released, written between checkpoints
// (see statestore.go).

package toolpairprocessor

import (
	"encoding/binary"
	"errors"
	"hash/crc32"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

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
