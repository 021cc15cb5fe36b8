// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package statestore keeps a toolpair component's state in a storage extension
// (specification section 9): checkpoints of the engine written every checkpoint_interval and
// at shutdown, and between them a resolution record per batch, written before the batch's
// records leave the processor, holding what the batch resolved and what it added (the calls
// it left pending, the closings it queued, the anchor spans it saw), so that a crash at any
// instant loses no outcome and no call whose record left.
// The format of what is stored is package statefile's.
package statestore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/delivery"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/outbox"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/statefile"
)

// Telemetry is told what the store does, for the component's metrics.
type Telemetry interface {
	// Restored counts what a restore brought back.
	Restored(ctx context.Context, rs pairing.RestoreStats)
	// Discarded counts a stored state not used, and why.
	Discarded(ctx context.Context, reason statefile.Reason)
	// Checkpointed records a checkpoint written: what made it, how long it took, its size in
	// bytes.
	Checkpointed(ctx context.Context, trigger Trigger, d time.Duration, size int)
	// StorageError counts a failed storage operation: read, checkpoint, resolution_record or
	// pointer.
	StorageError(ctx context.Context, op string)
}

// Options are what a Store needs of its component.
type Options struct {
	// Fingerprint is the configuration's fingerprint: a stored state of another is discarded.
	Fingerprint [8]byte
	// Engine is the engine whose state is stored and restored.
	Engine *pairing.Engine
	// Traces and Logs are the next consumers restored origins and held records of each signal
	// go to (nil: the component has no pipeline of that signal).
	Traces consumer.Traces
	Logs   consumer.Logs
	// KeepActivity restores the conversations' model calls and compactions (needed by the
	// timeout classifier only); anchor spans are restored either way.
	KeepActivity bool
	// Delivered is the memory of deliveries stored with the engine's state (nil: none).
	Delivered *delivery.Memory
	// Outbox is the component's refused records: restored at Open, and stored from then on
	// under UnsentKeyPrefix while they wait (nil: none).
	Outbox    *outbox.Outbox
	Telemetry Telemetry
	Logger    *zap.Logger
	// Now is the collector's clock, in Unix ns, for the deadlines of restored deliveries.
	Now func() int64
}

// Keys of the storage client (one client per component, named by the component's ID):
//
//   - PointerKey: the generation of the current checkpoint and the sequence number of the
//     first resolution record it does not cover;
//   - toolpair.state.{generation}: a checkpoint (statefile.Encode);
//   - toolpair.resolved.{sequence}: the resolution record of one batch (statefile.EncodeBatch);
//   - toolpair.unsent.{sequence}: a delivery the processor made on its own that a next
//     consumer refused, waiting to be sent again (outbox.Item), and UnsentRangeKey the range
//     of sequence numbers that may be stored (see unsent.go).
//
// A checkpoint is written under a new generation's key first, then one storage batch points
// the pointer at it and deletes the previous checkpoint and the resolution records it covers,
// so that a crash at any instant leaves a readable checkpoint and every resolution record
// written after it.
const (
	PointerKey        = "toolpair.pointer"
	pointerMagic      = "TPP1"
	StateKeyPrefix    = "toolpair.state."
	ResolvedKeyPrefix = "toolpair.resolved."
)

func StateKey(gen uint64) string    { return StateKeyPrefix + strconv.FormatUint(gen, 10) }
func ResolvedKey(seq uint64) string { return ResolvedKeyPrefix + strconv.FormatUint(seq, 10) }

func encodePointer(gen, logStart uint64) []byte { return encodePair(pointerMagic, gen, logStart) }

func DecodePointer(b []byte) (gen, logStart uint64, err error) {
	gen, logStart, ok := decodePair(pointerMagic, b)
	if !ok {
		return 0, 0, statefile.Discard(statefile.ReasonCorrupt, "pointer %q is not readable", PointerKey)
	}
	return gen, logStart, nil
}

// encodePair frames two numbers under magic: the magic, two uvarints, a CRC-32 of them all
// (the pointer, the range of the stored unsent deliveries).
func encodePair(magic string, a, b uint64) []byte {
	buf := []byte(magic)
	buf = binary.AppendUvarint(buf, a)
	buf = binary.AppendUvarint(buf, b)
	return binary.LittleEndian.AppendUint32(buf, crc32.ChecksumIEEE(buf))
}

// decodePair reads what encodePair wrote under magic; ok is false for anything else.
func decodePair(magic string, buf []byte) (a, b uint64, ok bool) {
	if len(buf) < len(magic)+6 || string(buf[:len(magic)]) != magic ||
		crc32.ChecksumIEEE(buf[:len(buf)-4]) != binary.LittleEndian.Uint32(buf[len(buf)-4:]) {
		return 0, 0, false
	}
	body := buf[len(magic) : len(buf)-4]
	a, n := binary.Uvarint(body)
	b, m := binary.Uvarint(body[max(n, 0):])
	return a, b, n > 0 && m > 0
}

// Store keeps a component's state in a storage extension (specification section 9): the
// engine's checkpoints, and a resolution record per batch between checkpoints. Its methods
// may be called from several goroutines.
type Store struct {
	client storage.Client
	fp     [8]byte
	o      Options

	// logMu orders resolution records against checkpoints: a checkpoint takes its snapshot
	// and the next record's sequence number under it, so every record numbered from that on
	// was decided no earlier than the snapshot (replaying it is harmless) and every record
	// numbered before it is in the snapshot.
	logMu    sync.Mutex
	nextSeq  uint64 // sequence number of the next resolution record
	logStart uint64 // first resolution record not covered by the stored checkpoint (ckMu)
	gen      uint64 // generation of the stored checkpoint, 0 for none (ckMu)
	ckMu     sync.Mutex

	// unsentMu guards the range of stored unsent items (unsent.go).
	unsentMu                sync.Mutex
	unsentFirst, unsentNext uint64
}

// now is the collector's clock in Unix ns (Options.Now, else the wall clock).
func (st *Store) now() int64 {
	if st.o.Now != nil {
		return st.o.Now()
	}
	return time.Now().UnixNano()
}

// Open gets the storage client of component owner from the storage extension ext of host
// and restores the stored state into o.Engine. A missing or wrong extension is an error
// naming the storage key; a state that cannot be used is logged, counted and discarded, and
// the component starts clean. It fails when the stored state was discarded and a fresh
// pointer could not be written.
func Open(ctx context.Context, host component.Host, ext, owner component.ID, o Options) (*Store, error) {
	e, ok := host.GetExtensions()[ext]
	if !ok {
		return nil, fmt.Errorf("storage: extension %q is not configured", ext)
	}
	se, ok := e.(storage.Extension)
	if !ok {
		return nil, fmt.Errorf("storage: extension %q is not a storage extension", ext)
	}
	client, err := se.GetClient(ctx, component.KindProcessor, owner, "")
	if err != nil {
		return nil, fmt.Errorf("storage: getting a client from extension %q: %w", ext, err)
	}
	st := &Store{client: client, fp: o.Fingerprint, o: o}
	if err := st.restore(ctx); err != nil {
		o.Telemetry.StorageError(ctx, "pointer")
		return nil, errors.Join(fmt.Errorf("storage: extension %q: a fresh pointer could not be written (no state stored yet, or the stored state discarded): %w", ext, err),
			client.Close(ctx))
	}
	if o.Outbox != nil {
		st.restoreUnsent(ctx)
	}
	return st, nil
}

// restore reads the stored checkpoint and the resolution records written after it, and
// rebuilds the state from them: the checkpoint, then what the records added (in their order),
// then what they resolved. Whatever cannot be used is discarded. With nothing stored yet, and
// when a read fails or the pointer is unreadable (records the component did not read may
// remain), it starts clean under a fresh pointer (startFresh), so that every record this run
// writes follows a pointer; it fails only when that pointer cannot be written.
func (st *Store) restore(ctx context.Context) error {
	ptr, err := st.client.Get(ctx, PointerKey)
	if err != nil {
		return st.readFailed(ctx, PointerKey, err, 0)
	}
	if ptr == nil {
		return st.startFresh(ctx, 0) // nothing stored yet
	}
	gen, logStart, err := DecodePointer(ptr)
	if err != nil {
		st.discarded(ctx, err)
		return st.startFresh(ctx, 0)
	}
	st.gen, st.logStart, st.nextSeq = gen, logStart, logStart
	sk := sinks(st.o.Traces, st.o.Logs)
	var keys []pairing.Key
	var released []pairing.HeldRef
	var added []*pairing.Snapshot
	var dels, savedDels []delivery.Entry
	for seq := logStart; ; seq++ {
		b, err := st.client.Get(ctx, ResolvedKey(seq))
		if err != nil {
			return st.readFailed(ctx, ResolvedKey(seq), err, gen)
		}
		if b == nil {
			break
		}
		st.nextSeq = seq + 1
		rec, err := statefile.DecodeRecord(b, st.fp, sk)
		if err != nil {
			st.o.Logger.Warn("toolpair: a stored resolution record is not readable; its calls may be restored as pending, or not at all",
				zap.String("key", ResolvedKey(seq)), zap.Error(err))
			continue
		}
		keys = append(keys, rec.Resolved...)
		released = append(released, rec.Released...)
		dels = append(dels, rec.Deliveries...)
		if rec.Added != nil {
			added = append(added, rec.Added)
		}
	}
	var saved *pairing.Snapshot
	var blob []byte
	if gen > 0 {
		if blob, err = st.client.Get(ctx, StateKey(gen)); err != nil {
			return st.readFailed(ctx, StateKey(gen), err, gen)
		}
		if blob == nil {
			st.discarded(ctx, statefile.Discard(statefile.ReasonMissing, "checkpoint %q named by %q is absent", StateKey(gen), PointerKey))
			return nil
		}
		if saved, savedDels, err = statefile.DecodeCheckpoint(blob, st.fp, sk); err != nil {
			st.discarded(ctx, err)
			return nil
		}
	} else if len(added) == 0 {
		// A fresh pointer, and no record after it added anything: the records resolved
		// calls that no checkpoint holds, but what their result records got still holds.
		if st.o.Delivered != nil {
			st.o.Delivered.Restore(st.now(), dels)
		}
		return nil
	}
	saved = pairing.Merge(saved, added...)
	if !st.o.KeepActivity {
		// Model calls and compactions serve only the timeout classifier.
		saved.Activity = slices.DeleteFunc(saved.Activity, func(a pairing.ActivitySnapshot) bool {
			return a.Kind == pairing.ActivityModel || a.Kind == pairing.ActivityCompaction
		})
	}
	rs, err := st.o.Engine.Restore(saved, keys, released...)
	if err != nil {
		st.discarded(ctx, statefile.Discard(statefile.ReasonCorrupt, "%v", err))
		return nil
	}
	if st.o.Delivered != nil {
		// The checkpoint's, then each record's in order: a later one is the newer decision.
		st.o.Delivered.Restore(st.now(), append(savedDels, dels...))
	}
	st.o.Telemetry.Restored(ctx, rs)
	st.o.Logger.Info("toolpair: state restored from storage",
		zap.Int("pending_calls", rs.Pending), zap.Int("held_results", rs.Waiting),
		zap.Int("resolved_calls", rs.Resolved), zap.Int("replayed_resolutions", rs.Replayed),
		zap.Int("records", int(st.nextSeq-logStart)), zap.Int("records_with_additions", len(added)),
		zap.Int("activity", len(saved.Activity)), zap.Int("bytes", len(blob)))
	return nil
}

// readFailed handles a storage read that failed during restore (key is what was read): it
// counts it (storage_errors, operation read), logs it, and discards the stored state through
// startFresh, gen being the generation of the checkpoint the pointer named (0 for none).
func (st *Store) readFailed(ctx context.Context, key string, err error, gen uint64) error {
	st.o.Telemetry.StorageError(ctx, "read")
	st.o.Logger.Warn("toolpair: reading the stored state failed; it is discarded and the component starts clean (pending calls, held results and resolved-call memory of the previous run are lost)",
		zap.String("key", key), zap.Error(err))
	return st.startFresh(ctx, gen)
}

// startFresh starts the store clean after the stored state was discarded while records the
// component did not read may remain: it writes a pointer naming no checkpoint whose first
// resolution record number lies past every number an earlier run can have used (the wall
// clock in nanoseconds, and past the numbers seen), so that no earlier record is replayed at a
// later start nor written over, then deletes the checkpoint of generation gen (if any) on a
// best-effort basis. It returns the error of the pointer's write (the caller counts it); the
// engine is untouched.
func (st *Store) startFresh(ctx context.Context, gen uint64) error {
	base := max(uint64(max(time.Now().UnixNano(), 0)), st.nextSeq+1)
	if err := st.client.Set(ctx, PointerKey, encodePointer(0, base)); err != nil {
		return err
	}
	st.gen, st.logStart, st.nextSeq = 0, base, base
	if gen > 0 {
		_ = st.client.Delete(ctx, StateKey(gen))
	}
	return nil
}

// discarded logs and counts a stored state that was not used.
func (st *Store) discarded(ctx context.Context, err error) {
	reason := statefile.ReasonOf(err)
	st.o.Telemetry.Discarded(ctx, reason)
	st.o.Logger.Warn("toolpair: stored state discarded; starting clean (pending calls, held results and resolved-call memory of the previous run are lost)",
		zap.String("reason", string(reason)), zap.Error(err))
}

// Trigger is what made a checkpoint (the toolpair.trigger attribute of its metrics).
type Trigger string

const (
	// TriggerInterval: checkpoint_interval passed.
	TriggerInterval Trigger = "interval"
	// TriggerShutdown: the component's last pipeline shut down.
	TriggerShutdown Trigger = "shutdown"
	// TriggerRecordFailed: a batch's resolution record could not be written; a checkpoint
	// covers its outcomes instead, before they leave the processor.
	TriggerRecordFailed Trigger = "record_failed"
)

// Checkpoint writes the whole state to storage. The snapshot is taken under the engine's
// lock (held records serialised there); the encoding and the writes happen after it is
// released.
func (st *Store) Checkpoint(ctx context.Context, trigger Trigger) error {
	st.ckMu.Lock()
	defer st.ckMu.Unlock()
	began := time.Now()
	st.logMu.Lock()
	saved := st.o.Engine.Snapshot(MarshalHeld)
	var dels []delivery.Entry
	if st.o.Delivered != nil {
		dels = st.o.Delivered.Snapshot()
	}
	logStart := st.nextSeq
	st.logMu.Unlock()

	blob, err := statefile.EncodeCheckpoint(saved, dels, st.fp)
	if err == nil {
		gen := st.gen + 1
		err = st.client.Set(ctx, StateKey(gen), blob)
		if err == nil {
			ops := []*storage.Operation{storage.SetOperation(PointerKey, encodePointer(gen, logStart))}
			if st.gen > 0 {
				ops = append(ops, storage.DeleteOperation(StateKey(st.gen)))
			}
			for seq := st.logStart; seq < logStart; seq++ {
				ops = append(ops, storage.DeleteOperation(ResolvedKey(seq)))
			}
			if err = st.client.Batch(ctx, ops...); err == nil {
				st.gen, st.logStart = gen, logStart
			} else {
				_ = st.client.Delete(ctx, StateKey(gen))
			}
		}
	}
	if err != nil {
		st.o.Telemetry.StorageError(ctx, "checkpoint")
		return fmt.Errorf("toolpair: writing the state to storage: %w", err)
	}
	st.o.Telemetry.Checkpointed(ctx, trigger, time.Since(began), len(blob))
	return nil
}

// RecordBatch writes the resolution record of one batch before its records leave the
// processor: res are its outcomes, added what it added (pairing.Engine.Added, nil for none),
// dels what its result records got (delivery.Memory: a record sent again after a crash gets
// the same).
// After a crash, these calls are resolved, not restored as pending from an older checkpoint,
// and the calls it left pending are pending, with their origins, closings and anchors, though
// no checkpoint holds them yet. Nothing is written when there is nothing to record. Should
// the record's write fail (counted, storage_errors operation resolution_record), it writes a
// checkpoint at once instead (the engine already holds these changes, so the checkpoint
// covers them); the error it returns is that checkpoint's, when it failed too (counted,
// operation checkpoint): the changes then leave uncovered by storage.
func (st *Store) RecordBatch(ctx context.Context, res []pairing.Resolution, added *pairing.Snapshot, dels []delivery.Entry) error {
	if len(res) == 0 && added == nil && len(dels) == 0 {
		return nil
	}
	b, err := statefile.EncodeBatch(res, added, dels, st.fp)
	if b == nil && err == nil {
		return nil
	}
	if err == nil {
		err = st.appendResolutions(ctx, b)
	}
	if err == nil {
		return nil
	}
	st.o.Telemetry.StorageError(ctx, "resolution_record")
	st.o.Logger.Warn("toolpair: writing a resolution record failed; writing a checkpoint instead", zap.Error(err))
	if cerr := st.Checkpoint(ctx, TriggerRecordFailed); cerr != nil {
		return fmt.Errorf("toolpair: neither the resolution record (%w) nor a checkpoint covering it (%w) could be written; a crash before the next checkpoint can bring these calls back as pending, or lose the calls the batch announced", err, cerr)
	}
	return nil
}

// appendResolutions writes b as the next resolution record.
func (st *Store) appendResolutions(ctx context.Context, b []byte) error {
	st.logMu.Lock()
	defer st.logMu.Unlock()
	if err := st.client.Set(ctx, ResolvedKey(st.nextSeq), b); err != nil {
		return err
	}
	st.nextSeq++
	return nil
}

// Close closes the storage client.
func (st *Store) Close(ctx context.Context) error {
	return st.client.Close(ctx)
}

// Forget makes the stored state unreachable after a shutdown flushed what it holds (its
// pending calls sent as interrupted/shutdown), so the next start does not bring those calls
// back: it writes a fresh pointer (startFresh) or, should that fail, deletes the pointer. When
// both fail it logs and counts the failure (storage_errors, operation pointer) and returns the
// error: the next start may then restore calls already sent as interrupted.
func (st *Store) Forget(ctx context.Context) error {
	ferr := st.startFresh(ctx, st.gen)
	if ferr == nil {
		return nil
	}
	derr := st.client.Delete(ctx, PointerKey)
	if derr == nil {
		return nil
	}
	st.o.Telemetry.StorageError(ctx, "pointer")
	st.o.Logger.Error("toolpair: the stored state could not be retired after the shutdown flush; the next start may restore calls already sent as interrupted/shutdown",
		zap.Error(ferr), zap.NamedError("delete_error", derr))
	return errors.Join(ferr, derr)
}
