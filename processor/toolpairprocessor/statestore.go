package toolpairprocessor

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/statefile"
)

// Keys of the storage client (one client per component, named by the component's ID):
//
//   - pointerKey: the generation of the current checkpoint and the sequence number of the
//     first resolution record it does not cover;
//   - toolpair.state.{generation}: a checkpoint (statefile.Encode);
//   - toolpair.resolved.{sequence}: the resolution record of one batch (statefile.EncodeResolutions).
//
// A checkpoint is written under a new generation's key first, then one storage batch points
// the pointer at it and deletes the previous checkpoint and the resolution records it covers,
// so that a crash at any instant leaves a readable checkpoint and every resolution record
// written after it.
const (
	pointerKey      = "toolpair.pointer"
	pointerMagic    = "TPP1"
	stateKeyBase    = "toolpair.state."
	resolvedKeyBase = "toolpair.resolved."
)

func stateKey(gen uint64) string    { return stateKeyBase + strconv.FormatUint(gen, 10) }
func resolvedKey(seq uint64) string { return resolvedKeyBase + strconv.FormatUint(seq, 10) }

func encodePointer(gen, logStart uint64) []byte {
	b := []byte(pointerMagic)
	b = binary.AppendUvarint(b, gen)
	b = binary.AppendUvarint(b, logStart)
	return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

func decodePointer(b []byte) (gen, logStart uint64, err error) {
	if len(b) < len(pointerMagic)+6 || string(b[:len(pointerMagic)]) != pointerMagic ||
		crc32.ChecksumIEEE(b[:len(b)-4]) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return 0, 0, statefile.Discard(statefile.ReasonCorrupt, "pointer %q is not readable", pointerKey)
	}
	body := b[len(pointerMagic) : len(b)-4]
	gen, n := binary.Uvarint(body)
	logStart, m := binary.Uvarint(body[max(n, 0):])
	if n <= 0 || m <= 0 {
		return 0, 0, statefile.Discard(statefile.ReasonCorrupt, "pointer %q is not readable", pointerKey)
	}
	return gen, logStart, nil
}

// stateStore keeps a component's state in a storage extension (specification section 9).
type stateStore struct {
	client storage.Client
	fp     [8]byte

	// logMu orders resolution records against checkpoints: a checkpoint takes its snapshot
	// and the next record's sequence number under it, so every record numbered from that on
	// was decided no earlier than the snapshot (replaying it is harmless) and every record
	// numbered before it is in the snapshot.
	logMu    sync.Mutex
	nextSeq  uint64 // sequence number of the next resolution record
	logStart uint64 // first resolution record not covered by the stored checkpoint (ckMu)
	gen      uint64 // generation of the stored checkpoint, 0 for none (ckMu)
	ckMu     sync.Mutex
}

// openStore gets the storage client named by the storage key from host and restores the
// stored state into the engine and the timeout classifier. A missing or wrong extension is an
// error naming the key; a state that cannot be used is logged, counted and discarded.
func (s *shared) openStore(ctx context.Context, host component.Host) error {
	id := *s.cfg.Storage
	ext, ok := host.GetExtensions()[id]
	if !ok {
		return fmt.Errorf("storage: extension %q is not configured", id)
	}
	se, ok := ext.(storage.Extension)
	if !ok {
		return fmt.Errorf("storage: extension %q is not a storage extension", id)
	}
	client, err := se.GetClient(ctx, component.KindProcessor, s.id, "")
	if err != nil {
		return fmt.Errorf("storage: getting a client from extension %q: %w", id, err)
	}
	s.store = &stateStore{client: client, fp: stateFingerprint(s.cfg)}
	if err := s.restore(ctx); err != nil {
		s.tel.storageError(ctx, "pointer")
		s.store = nil
		return errors.Join(fmt.Errorf("storage: extension %q: the stored state was discarded and a fresh pointer could not be written: %w", id, err),
			client.Close(ctx))
	}
	return nil
}

// restore reads the stored checkpoint and the resolution records written after it, and
// rebuilds the state from them. Whatever cannot be used is discarded. When a read fails or
// the pointer is unreadable, records the component did not read may remain: it then starts
// clean under a fresh pointer (startFresh), and fails only when that pointer cannot be
// written.
func (s *shared) restore(ctx context.Context) error {
	st := s.store
	ptr, err := st.client.Get(ctx, pointerKey)
	if err != nil {
		return s.readFailed(ctx, pointerKey, err, 0)
	}
	if ptr == nil {
		return nil // nothing stored yet
	}
	gen, logStart, err := decodePointer(ptr)
	if err != nil {
		s.discarded(ctx, err)
		return s.startFresh(ctx, 0)
	}
	st.gen, st.logStart, st.nextSeq = gen, logStart, logStart
	var keys []pairing.Key
	var released []pairing.HeldRef
	for seq := logStart; ; seq++ {
		b, err := st.client.Get(ctx, resolvedKey(seq))
		if err != nil {
			return s.readFailed(ctx, resolvedKey(seq), err, gen)
		}
		if b == nil {
			break
		}
		st.nextSeq = seq + 1
		k, h, err := statefile.DecodeResolutions(b)
		if err != nil {
			s.logger.Warn("toolpair: a stored resolution record is not readable; its calls may be restored as pending",
				zap.String("key", resolvedKey(seq)), zap.Error(err))
			continue
		}
		keys = append(keys, k...)
		released = append(released, h...)
	}
	if gen == 0 {
		// A fresh pointer: no checkpoint was written since the stored state was last
		// discarded; the records after it resolved calls that no checkpoint holds.
		return nil
	}
	blob, err := st.client.Get(ctx, stateKey(gen))
	if err != nil {
		return s.readFailed(ctx, stateKey(gen), err, gen)
	}
	if blob == nil {
		s.discarded(ctx, statefile.Discard(statefile.ReasonMissing, "checkpoint %q named by %q is absent", stateKey(gen), pointerKey))
		return nil
	}
	saved, err := statefile.Decode(blob, st.fp, stateSinks(s.nextTraces, s.nextLogs))
	if err != nil {
		s.discarded(ctx, err)
		return nil
	}
	if s.tmo == nil {
		// Model calls and compactions serve only the timeout classifier.
		saved.Activity = nil
	}
	rs, err := s.engine.Restore(saved, keys, released...)
	if err != nil {
		s.discarded(ctx, statefile.Discard(statefile.ReasonCorrupt, "%v", err))
		return nil
	}
	s.tel.restored(ctx, rs)
	s.logger.Info("toolpair: state restored from storage",
		zap.Int("pending_calls", rs.Pending), zap.Int("held_results", rs.Waiting),
		zap.Int("resolved_calls", rs.Resolved), zap.Int("replayed_resolutions", rs.Replayed),
		zap.Int("activity", len(saved.Activity)), zap.Int("bytes", len(blob)))
	return nil
}

// readFailed handles a storage read that failed during restore (key is what was read): it
// counts it (storage_errors, operation read), logs it, and discards the stored state through
// startFresh, gen being the generation of the checkpoint the pointer named (0 for none).
func (s *shared) readFailed(ctx context.Context, key string, err error, gen uint64) error {
	s.tel.storageError(ctx, "read")
	s.logger.Warn("toolpair: reading the stored state failed; it is discarded and the component starts clean (pending calls, held results and resolved-call memory of the previous run are lost)",
		zap.String("key", key), zap.Error(err))
	return s.startFresh(ctx, gen)
}

// startFresh starts the store clean after the stored state was discarded while records the
// component did not read may remain: it writes a pointer naming no checkpoint whose first
// resolution record number lies past every number an earlier run can have used (the wall
// clock in nanoseconds, and past the numbers seen), so that no earlier record is replayed at a
// later start nor written over, then deletes the checkpoint of generation gen (if any) on a
// best-effort basis. It returns the error of the pointer's write (the caller counts it); the
// engine is untouched.
func (s *shared) startFresh(ctx context.Context, gen uint64) error {
	st := s.store
	base := max(uint64(max(time.Now().UnixNano(), 0)), st.nextSeq+1)
	if err := st.client.Set(ctx, pointerKey, encodePointer(0, base)); err != nil {
		return err
	}
	st.gen, st.logStart, st.nextSeq = 0, base, base
	if gen > 0 {
		_ = st.client.Delete(ctx, stateKey(gen))
	}
	return nil
}

// discarded logs and counts a stored state that was not used.
func (s *shared) discarded(ctx context.Context, err error) {
	reason := statefile.ReasonOf(err)
	s.tel.stateDiscarded(ctx, reason)
	s.logger.Warn("toolpair: stored state discarded; starting clean (pending calls, held results and resolved-call memory of the previous run are lost)",
		zap.String("reason", string(reason)), zap.Error(err))
}

// checkpointTrigger is what made a checkpoint (the toolpair.trigger of its metrics).
type checkpointTrigger string

const (
	checkpointInterval checkpointTrigger = "interval"
	checkpointShutdown checkpointTrigger = "shutdown"
	// checkpointRecordFailed: a batch's resolution record could not be written; a checkpoint
	// covers its outcomes instead, before they leave the processor.
	checkpointRecordFailed checkpointTrigger = "record_failed"
)

// checkpoint writes the whole state to storage. The snapshot is taken under the engine's
// lock (held records serialised there); the encoding and the writes happen after it is
// released.
func (s *shared) checkpoint(ctx context.Context, trigger checkpointTrigger) error {
	st := s.store
	st.ckMu.Lock()
	defer st.ckMu.Unlock()
	began := time.Now()
	st.logMu.Lock()
	saved := s.engine.Snapshot(marshalHeld)
	logStart := st.nextSeq
	st.logMu.Unlock()

	blob, err := statefile.Encode(saved, st.fp)
	if err == nil {
		gen := st.gen + 1
		err = st.client.Set(ctx, stateKey(gen), blob)
		if err == nil {
			ops := []*storage.Operation{storage.SetOperation(pointerKey, encodePointer(gen, logStart))}
			if st.gen > 0 {
				ops = append(ops, storage.DeleteOperation(stateKey(st.gen)))
			}
			for seq := st.logStart; seq < logStart; seq++ {
				ops = append(ops, storage.DeleteOperation(resolvedKey(seq)))
			}
			if err = st.client.Batch(ctx, ops...); err == nil {
				st.gen, st.logStart = gen, logStart
			} else {
				_ = st.client.Delete(ctx, stateKey(gen))
			}
		}
	}
	if err != nil {
		s.tel.storageError(ctx, "checkpoint")
		return fmt.Errorf("toolpair: writing the state to storage: %w", err)
	}
	s.tel.checkpointed(ctx, trigger, time.Since(began), len(blob))
	return nil
}

// recordResolutions writes the resolution record of a batch's outcomes, before they leave the
// processor: after a crash, these calls are resolved, not restored as pending from an older
// checkpoint. Should the record's write fail (counted, storage_errors operation
// resolution_record), it writes a checkpoint at once instead (the engine already holds these
// outcomes, so the checkpoint covers them); the error it returns is that checkpoint's, when
// it failed too (counted, operation checkpoint): the outcomes then leave uncovered by storage.
func (s *shared) recordResolutions(ctx context.Context, res []pairing.Resolution) error {
	if s.store == nil || len(res) == 0 {
		return nil
	}
	b, err := statefile.EncodeResolutions(res)
	if b == nil && err == nil {
		return nil
	}
	if err == nil {
		err = s.appendResolutions(ctx, b)
	}
	if err == nil {
		return nil
	}
	s.tel.storageError(ctx, "resolution_record")
	s.logger.Warn("toolpair: writing a resolution record failed; writing a checkpoint instead", zap.Error(err))
	if cerr := s.checkpoint(ctx, checkpointRecordFailed); cerr != nil {
		return fmt.Errorf("toolpair: neither the resolution record (%w) nor a checkpoint covering it (%w) could be written; a crash before the next checkpoint can bring these calls back as pending", err, cerr)
	}
	return nil
}

// appendResolutions writes b as the next resolution record.
func (s *shared) appendResolutions(ctx context.Context, b []byte) error {
	st := s.store
	st.logMu.Lock()
	defer st.logMu.Unlock()
	if err := st.client.Set(ctx, resolvedKey(st.nextSeq), b); err != nil {
		return err
	}
	st.nextSeq++
	return nil
}

// closeStore closes the storage client.
func (s *shared) closeStore(ctx context.Context) error {
	if s.store == nil {
		return nil
	}
	return s.store.client.Close(ctx)
}

// Telemetry of the state store.

const telAttrStateKind = "toolpair.state.kind"

func (t *telemetry) restored(ctx context.Context, rs pairing.RestoreStats) {
	for _, kv := range []struct {
		kind string
		n    int
	}{{"pending_calls", rs.Pending}, {"held_results", rs.Waiting}, {"resolved_calls", rs.Resolved}, {"replayed_resolutions", rs.Replayed}} {
		t.tb.ProcessorToolpairStateRestored.Add(ctx, int64(kv.n), metric.WithAttributes(attribute.String(telAttrStateKind, kv.kind)))
	}
}

func (t *telemetry) stateDiscarded(ctx context.Context, reason statefile.Reason) {
	t.tb.ProcessorToolpairStateDiscarded.Add(ctx, 1, metric.WithAttributes(attribute.String(telAttrWhy, string(reason))))
}

func (t *telemetry) checkpointed(ctx context.Context, trigger checkpointTrigger, d time.Duration, size int) {
	opt := metric.WithAttributes(attribute.String(telAttrTrigger, string(trigger)))
	t.tb.ProcessorToolpairStateCheckpointDuration.Record(ctx, float64(d)/float64(time.Millisecond), opt)
	t.tb.ProcessorToolpairStateCheckpointSize.Record(ctx, int64(size), opt)
}

func (t *telemetry) storageError(ctx context.Context, op string) {
	t.tb.ProcessorToolpairStorageErrors.Add(ctx, 1, metric.WithAttributes(attribute.String("operation", op)))
}
