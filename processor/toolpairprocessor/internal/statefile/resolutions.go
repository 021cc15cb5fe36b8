// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package statefile

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/delivery"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// Record is what a resolution record holds: what one batch resolved and what it added.
type Record struct {
	// Resolved are the keys of the calls the batch resolved, Released the held results
	// without a call ID it released, each in the order written.
	Resolved []pairing.Key
	Released []pairing.HeldRef
	// Added is what the batch added (pairing.Engine.Added), its payloads bound through the
	// Sinks given to DecodeRecord; nil when it added nothing.
	Added *pairing.Snapshot
	// Deliveries is what the batch's result records got, in batch order.
	Deliveries []delivery.Entry
}

// EncodeRecord returns the resolution record of one batch (see the package documentation):
// the key of every resolution of res that changed the state of a call with a call ID (all but
// duplicates), the place (pairing.HeldRef) of every held result without a call ID it
// released, each list in the order of res, and added (pairing.Engine.Added, nil for none),
// stored as a checkpoint's state is (see Encode) under the configuration fingerprint fp. It
// returns nil, nil when there is nothing to record, and fails as Encode does for added.
func EncodeRecord(res []pairing.Resolution, added *pairing.Snapshot, fp [8]byte) ([]byte, error) {
	return EncodeBatch(res, added, nil, fp)
}

// EncodeBatch is EncodeRecord with the deliveries of the batch's result records (dels, their
// Deadline as remembered), which the record also holds; a batch with nothing else but
// deliveries is recorded too.
func EncodeBatch(res []pairing.Resolution, added *pairing.Snapshot, dels []delivery.Entry, fp [8]byte) ([]byte, error) {
	m := &Resolutions{Deliveries: encodeDeliveries(dels)}
	var call, held *ResolvedRun
	for i := range res {
		r := &res[i]
		if r.Outcome.Props().Settles && r.Key.CallID != "" {
			call = runOf(&m.Calls, call, r.Key.ConversationKey())
			call.CallIds = append(call.CallIds, r.Key.CallID)
		}
		if r.HeldSeq != 0 {
			held = runOf(&m.Held, held, r.Key.ConversationKey())
			held.Seqs = append(held.Seqs, r.HeldSeq)
		}
	}
	if added != nil {
		var err error
		if m.Added, err = encodeState(added); err != nil {
			return nil, err
		}
		m.Fingerprint = fp[:]
	}
	if len(m.Calls)+len(m.Held)+len(m.Deliveries) == 0 && m.Added == nil {
		return nil, nil
	}
	size := 16 + len(res)*40 + len(dels)*48
	if added != nil {
		size += len(added.Calls) * 160
	}
	buf := make([]byte, 0, size)
	buf = append(buf, ResolutionsMagic...)
	buf = binary.AppendUvarint(buf, Version)
	buf, err := proto.MarshalOptions{}.MarshalAppend(buf, m)
	if err != nil {
		return nil, fmt.Errorf("statefile: encoding a resolution record: %w", err)
	}
	return frame(buf), nil
}

// EncodeResolutions is EncodeRecord of res with nothing added.
func EncodeResolutions(res []pairing.Resolution) ([]byte, error) {
	return EncodeRecord(res, nil, [8]byte{})
}

// runOf returns last when it is the run of scope sk, else a new run of sk appended to runs.
func runOf(runs *[]*ResolvedRun, last *ResolvedRun, sk pairing.ConversationKey) *ResolvedRun {
	if last != nil && last.Tenant == sk.Tenant && last.Scope == sk.Conversation {
		return last
	}
	run := &ResolvedRun{Tenant: sk.Tenant, Scope: sk.Conversation}
	*runs = append(*runs, run)
	return run
}

// DecodeRecord reads a resolution record written by EncodeRecord under the configuration
// fingerprint fp, the payloads of what it added bound through sinks (see Sinks). Every error
// is a *DiscardError: ReasonVersion for a record of another format (including format 3's),
// ReasonConfig for additions written under another fingerprint, ReasonCorrupt for anything
// else that is not a well-formed record. A record either decodes whole or not at all.
func DecodeRecord(b []byte, fp [8]byte, sinks Sinks) (Record, error) {
	return decodeRecord(b, &fp, sinks)
}

// DecodeResolutions is DecodeRecord without what the record added: the keys of the calls
// resolved and the held results released, in the order written.
func DecodeResolutions(b []byte) ([]pairing.Key, []pairing.HeldRef, error) {
	rec, err := decodeRecord(b, nil, Sinks{})
	return rec.Resolved, rec.Released, err
}

// decodeRecord is DecodeRecord; with fp nil, what the record added is not read.
func decodeRecord(b []byte, fp *[8]byte, sinks Sinks) (Record, error) {
	body, err := unframe(b, ResolutionsMagic, "resolution record")
	if err != nil {
		return Record{}, err
	}
	m := &Resolutions{}
	if err := proto.Unmarshal(body, m); err != nil {
		return Record{}, Discard(ReasonCorrupt, "resolution record body: %v", err)
	}
	var rec Record
	for _, run := range m.Calls {
		if len(run.Seqs) > 0 {
			return Record{}, Discard(ReasonCorrupt, "resolution record: a run of calls with held results")
		}
		for _, id := range run.CallIds {
			rec.Resolved = append(rec.Resolved, pairing.Key{Tenant: run.Tenant, Conversation: run.Scope, CallID: id})
		}
	}
	for _, run := range m.Held {
		if len(run.CallIds) > 0 {
			return Record{}, Discard(ReasonCorrupt, "resolution record: a run of held results with call IDs")
		}
		sk := pairing.ConversationKey{Tenant: run.Tenant, Conversation: run.Scope}
		for _, seq := range run.Seqs {
			rec.Released = append(rec.Released, pairing.HeldRef{Scope: sk, Seq: seq})
		}
	}
	if m.Added != nil && fp != nil {
		if !bytes.Equal(m.Fingerprint, fp[:]) {
			return Record{}, Discard(ReasonConfig, "resolution record written under other scope_attributes, tenant_attributes, dialects or custom_dialects")
		}
		if rec.Added, err = decodeState(m.Added, sinks); err != nil {
			return Record{}, err
		}
	}
	if rec.Deliveries, err = decodeDeliveries(m.Deliveries); err != nil {
		return Record{}, err
	}
	return rec, nil
}
