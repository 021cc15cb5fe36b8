// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package statefile is the stored format of the toolpair processor's state (specification
// section 9): checkpoints of the engine's snapshot (Encode, Decode) and the resolution records
// written between them, one per batch: what it resolved and what it added (EncodeRecord,
// DecodeRecord).
//
// A checkpoint is one blob:
//
//	"TPST" | format version (uvarint) | configuration fingerprint (8 bytes) | body | CRC-32
//
// and a resolution record:
//
//	"TPRS" | format version (uvarint) | body | CRC-32
//
// The body is a protocol buffers message of state.proto (State, Resolutions; a record's
// additions are a State of their own, with the configuration fingerprint); the CRC-32 (IEEE,
// 4 bytes, little endian) covers every byte before it. A blob is read only when its magic,
// version, checksum and, for a checkpoint, fingerprint all match: anything else is refused
// with a *DiscardError saying why.
//
// Held result records and the consumers that restored records go to belong to the caller:
// Encode takes held records as Held values (a signal and OTLP bytes), and Decode binds them,
// origins and anchor spans through Sinks.
package statefile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

const (
	// StateMagic opens a checkpoint.
	StateMagic = "TPST"
	// ResolutionsMagic opens a resolution record.
	ResolutionsMagic = "TPRS"
	// Version is the format version written, and the only one read: a blob of any other is
	// refused with ReasonVersion.
	Version = 4
)

// olderResolutionMagics open resolution records of format 3, which have no version after
// their magic: such a record is refused with ReasonVersion, not ReasonCorrupt.
var olderResolutionMagics = []string{"TPR1", "TPR2"}

// Reason says why a stored state was not restored: the reason attribute of
// otelcol_processor_toolpair_state_discarded.
type Reason string

const (
	// ReasonCorrupt: not a blob of this format, truncated, malformed, or its checksum does not
	// match.
	ReasonCorrupt Reason = "corrupt"
	// ReasonVersion: a blob of another format version.
	ReasonVersion Reason = "version"
	// ReasonConfig: a checkpoint written under another configuration fingerprint.
	ReasonConfig Reason = "config"
	// ReasonMissing: a checkpoint the store names is absent (set by the caller).
	ReasonMissing Reason = "missing"
)

// DiscardError is a stored blob that cannot be used: why (Reason) and a description of what
// was found (Detail).
type DiscardError struct {
	Reason Reason
	Detail string
}

// Error returns "reason: detail".
func (e *DiscardError) Error() string { return string(e.Reason) + ": " + e.Detail }

// Discard returns a *DiscardError of reason, its detail formatted as by fmt.Sprintf.
func Discard(reason Reason, format string, args ...any) error {
	return &DiscardError{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// ReasonOf returns the Reason of err when it is (or wraps) a *DiscardError, else
// ReasonCorrupt.
func ReasonOf(err error) Reason {
	var de *DiscardError
	if errors.As(err, &de) {
		return de.Reason
	}
	return ReasonCorrupt
}

// Held is a held result record as stored: its signal (synth.Traces or synth.Logs) and OTLP
// protobuf bytes, a ptrace.Traces holding that one span or a plog.Logs holding that one log
// record. Encode stores a held payload (pairing.CallSnapshot.Payload of a waiting call,
// Companion, ReportSnapshot.Payload) when it is a Held, and none for any other value.
type Held struct {
	Signal synth.Signal
	OTLP   []byte
	// ID is the record's identity in the memory of deliveries (delivery.ID), 0 for none.
	ID uint64
	// Run is the tool's own execution time the record states (batch.HeldSpan.Run).
	Run synth.Run
}

// Sinks are what Decode binds a restored state's payloads to.
type Sinks struct {
	// Traces and Logs are the next consumers of each signal: a restored origin's Next. An
	// origin of a signal whose consumer is nil is dropped (no synthetic record can be sent).
	Traces consumer.Traces
	Logs   consumer.Logs
	// Held turns a stored held record into the payload the engine keeps: nil drops it (its
	// call is still restored), an error refuses the whole blob as corrupt. With Held nil, held
	// payloads are restored as Held values.
	Held func(h Held) (any, error)
	// Anchor makes the value the engine keeps for a stored anchor span
	// (pairing.ActivitySnapshot.Anchor) of its trace and span IDs and its start and end (Unix
	// ns): the span a synthetic span is put under, in the component's traces pipeline. nil, or
	// a nil value, drops the anchor.
	Anchor func(traceID pcommon.TraceID, spanID pcommon.SpanID, start, end int64) any
}

// frame appends the CRC-32 of b to it.
func frame(b []byte) []byte {
	return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

// unframe checks the magic, version and checksum of blob and returns what lies between the
// version and the checksum.
func unframe(blob []byte, magic, what string) ([]byte, error) {
	if len(blob) < len(magic)+1+4 || !bytes.HasPrefix(blob, []byte(magic)) {
		for _, old := range olderResolutionMagics {
			if magic == ResolutionsMagic && bytes.HasPrefix(blob, []byte(old)) {
				return nil, Discard(ReasonVersion, "%s of format 3, this collector reads %d", what, Version)
			}
		}
		return nil, Discard(ReasonCorrupt, "not a toolpair %s (%d bytes)", what, len(blob))
	}
	v, n := binary.Uvarint(blob[len(magic):])
	if n <= 0 {
		return nil, Discard(ReasonCorrupt, "%s format version unreadable", what)
	}
	if v != Version {
		return nil, Discard(ReasonVersion, "%s of format %d, this collector reads %d", what, v, Version)
	}
	end := len(blob) - 4
	if len(magic)+n > end || crc32.ChecksumIEEE(blob[:end]) != binary.LittleEndian.Uint32(blob[end:]) {
		return nil, Discard(ReasonCorrupt, "%s checksum mismatch", what)
	}
	return blob[len(magic)+n : end], nil
}
