package statefile

import (
	"encoding/binary"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// EncodeResolutions returns the resolution record of one batch's resolutions res (see the
// package documentation): the key of every resolution that changed the state of a call with a
// call ID (all but duplicates), and the place (pairing.HeldRef) of every held result without a
// call ID the batch released, each list in the order of res. It returns nil, nil when res has
// neither.
func EncodeResolutions(res []pairing.Resolution) ([]byte, error) {
	m := &Resolutions{}
	var call, held *ResolvedRun
	for i := range res {
		r := &res[i]
		if r.Outcome != pairing.OutcomeDuplicate && r.Key.CallID != "" {
			call = runOf(&m.Calls, call, r.Key.ConversationKey())
			call.CallIds = append(call.CallIds, r.Key.CallID)
		}
		if r.HeldSeq != 0 {
			held = runOf(&m.Held, held, r.Key.ConversationKey())
			held.Seqs = append(held.Seqs, r.HeldSeq)
		}
	}
	if len(m.Calls)+len(m.Held) == 0 {
		return nil, nil
	}
	buf := make([]byte, 0, 16+len(res)*40)
	buf = append(buf, ResolutionsMagic...)
	buf = binary.AppendUvarint(buf, Version)
	buf, err := proto.MarshalOptions{}.MarshalAppend(buf, m)
	if err != nil {
		return nil, fmt.Errorf("statefile: encoding a resolution record: %w", err)
	}
	return frame(buf), nil
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

// DecodeResolutions reads a resolution record written by EncodeResolutions: the keys of the
// calls resolved and the held results released, in the order written. Every error is a
// *DiscardError: ReasonVersion for a record of another format (including format 3's),
// ReasonCorrupt for anything else that is not a well-formed record.
func DecodeResolutions(b []byte) ([]pairing.Key, []pairing.HeldRef, error) {
	body, err := unframe(b, ResolutionsMagic, "resolution record")
	if err != nil {
		return nil, nil, err
	}
	m := &Resolutions{}
	if err := proto.Unmarshal(body, m); err != nil {
		return nil, nil, Discard(ReasonCorrupt, "resolution record body: %v", err)
	}
	var keys []pairing.Key
	for _, run := range m.Calls {
		if len(run.Seqs) > 0 {
			return nil, nil, Discard(ReasonCorrupt, "resolution record: a run of calls with held results")
		}
		tenant, scope := run.Tenant, run.Scope
		for _, id := range run.CallIds {
			keys = append(keys, pairing.Key{Tenant: tenant, Conversation: scope, CallID: id})
		}
	}
	var held []pairing.HeldRef
	for _, run := range m.Held {
		if len(run.CallIds) > 0 {
			return nil, nil, Discard(ReasonCorrupt, "resolution record: a run of held results with call IDs")
		}
		sk := pairing.ConversationKey{Tenant: run.Tenant, Conversation: run.Scope}
		for _, seq := range run.Seqs {
			held = append(held, pairing.HeldRef{Scope: sk, Seq: seq})
		}
	}
	return keys, held, nil
}
