// state_codec.go holds the stored state's format (described on stateMagic), what is stored
// (savedState, held records serialised as heldBytes), the configuration fingerprint that
// guards it and why a stored state is discarded. Writing it is in state_encode.go, reading it
// in state_decode.go, and the per-batch resolution records in state_resolutions.go.

package toolpairprocessor

import (
	"crypto/sha256"
	"fmt"
	"slices"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/batch"
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
//	calls:     state (byte), scope index, call ID (empty for a tool span without one, held or
//	           settled, which its match hash identifies), tool name, step, use time, result time,
//	           deadline (engine clock, Unix ns), sequence, source (byte), flags (byte), the
//	           match hash (uvarint) when the flags say the call has one (CallSnapshot.HasMatch),
//	           then the use's origin (pending calls) and the held record (waiting results and
//	           companions)
//	activity:  the scopes' model calls and compactions (pairing.ActivitySnapshot): kind (byte,
//	           activityModel or activityCompaction), tenant, scope, call ID and tool (both
//	           empty), start, end, seen (engine clock, Unix ns). An item of kind
//	           activityCall (a tool call, with its call ID and tool) is read and skipped.
//
// An origin (encodeOrigin) is written once and referred to by the other calls of its record:
// resource index, scope attribute, scope value, signal (byte), trace ID (16 bytes), span ID
// (8), parent span ID (8). A held record is a byte 0 (none), 1 (a span: OTLP protobuf
// ptrace.Traces of that one span) or 2 (a log record: plog.Logs), then the bytes.
const (
	stateMagic = "TPST"
	// stateVersion is the format version written. A blob of a newer version is discarded.
	stateVersion = 3
)

// Kinds of the activity section's items.
const (
	// activityCall is a tool call: never written (the engine's calls answer for the calls
	// in flight), skipped when read.
	activityCall byte = iota + 1
	// activityModel is a model call.
	activityModel
	// activityCompaction is a context compaction.
	activityCompaction
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
	case *batch.HeldSpan:
		if !h.Wait() {
			return nil
		}
		b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(h.Traces)
		if err != nil {
			return nil
		}
		return heldBytes{signal: synth.Traces, data: b}
	case *batch.HeldLog:
		if !h.Wait() {
			return nil
		}
		b, err := (&plog.ProtoMarshaler{}).MarshalLogs(h.Logs)
		if err != nil {
			return nil
		}
		return heldBytes{signal: synth.Logs, data: b}
	}
	return nil
}

// savedState is the state of one component: the engine's snapshot (held records as
// heldBytes), which holds its scopes' activity too.
type savedState struct {
	engine *pairing.Snapshot
}
