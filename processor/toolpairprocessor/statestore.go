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
)

// Keys of the storage client (one client per component, named by the component's ID):
//
//   - pointerKey: the generation of the current checkpoint and the sequence number of the
//     first resolution record it does not cover;
//   - toolpair.state.{generation}: a checkpoint (state_codec.go);
//   - toolpair.resolved.{sequence}: the resolution record of one batch (state_resolutions.go).
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
		return 0, 0, discard(discardCorrupt, "pointer %q is not readable", pointerKey)
	}
	r := &decoder{buf: b[len(pointerMagic) : len(b)-4]}
	gen, logStart = r.uint(), r.uint()
	if r.err != nil {
		return 0, 0, r.err
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
	s.restore(ctx)
	return nil
}

// restore reads the stored checkpoint and the resolution records written after it, and
// rebuilds the state from them. It never fails: whatever cannot be used is discarded.
func (s *shared) restore(ctx context.Context) {
	st := s.store
	ptr, err := st.client.Get(ctx, pointerKey)
	if err != nil {
		s.tel.storageError(ctx, "read")
		s.logger.Warn("toolpair: reading the stored state failed; starting clean", zap.Error(err))
		return
	}
	if ptr == nil {
		return // nothing stored yet
	}
	gen, logStart, err := decodePointer(ptr)
	if err != nil {
		s.discarded(ctx, err)
		return
	}
	st.gen, st.logStart, st.nextSeq = gen, logStart, logStart
	var keys []pairing.Key
	var released []pairing.HeldRef
	for seq := logStart; ; seq++ {
		b, err := st.client.Get(ctx, resolvedKey(seq))
		if err != nil || b == nil {
			break
		}
		st.nextSeq = seq + 1
		k, h, err := decodeResolutions(b)
		if err != nil {
			s.logger.Warn("toolpair: a stored resolution record is not readable; its calls may be restored as pending",
				zap.String("key", resolvedKey(seq)), zap.Error(err))
			continue
		}
		keys = append(keys, k...)
		released = append(released, h...)
	}
	blob, err := st.client.Get(ctx, stateKey(gen))
	if err != nil {
		s.tel.storageError(ctx, "read")
		s.logger.Warn("toolpair: reading the stored state failed; starting clean", zap.Error(err))
		return
	}
	if blob == nil {
		s.discarded(ctx, discard(discardMissing, "checkpoint %q named by %q is absent", stateKey(gen), pointerKey))
		return
	}
	saved, err := decodeState(blob, st.fp, nexts{traces: s.nextTraces, logs: s.nextLogs})
	if err != nil {
		s.discarded(ctx, err)
		return
	}
	rs, err := s.engine.Restore(saved.engine, keys, released...)
	if err != nil {
		s.discarded(ctx, discard(discardCorrupt, "%v", err))
		return
	}
	if s.tmo != nil {
		if err := s.tmo.flight.Import(saved.flight); err != nil {
			s.logger.Warn("toolpair: the timeout classifier's stored state was not restored", zap.Error(err))
		}
	}
	s.tel.restored(ctx, rs)
	s.logger.Info("toolpair: state restored from storage",
		zap.Int("pending_calls", rs.Pending), zap.Int("held_results", rs.Waiting),
		zap.Int("resolved_calls", rs.Resolved), zap.Int("replayed_resolutions", rs.Replayed),
		zap.Int("timeout_operations", len(saved.flight)), zap.Int("bytes", len(blob)))
}

// discarded logs and counts a stored state that was not used.
func (s *shared) discarded(ctx context.Context, err error) {
	reason := discardCorrupt
	var de *discardError
	if errors.As(err, &de) {
		reason = de.reason
	}
	s.tel.stateDiscarded(ctx, reason)
	s.logger.Warn("toolpair: stored state discarded; starting clean (pending calls, held results and resolved-call memory of the previous run are lost)",
		zap.String("reason", string(reason)), zap.Error(err))
}

// checkpointTrigger is what made a checkpoint (the toolpair.trigger of its metrics).
type checkpointTrigger string

const (
	checkpointInterval checkpointTrigger = "interval"
	checkpointShutdown checkpointTrigger = "shutdown"
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
	saved := &savedState{engine: s.engine.Snapshot(marshalHeld)}
	if s.tmo != nil {
		saved.flight = s.tmo.flight.Export()
	}
	logStart := st.nextSeq
	st.logMu.Unlock()

	blob, err := encodeState(saved, st.fp)
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
// checkpoint.
func (s *shared) recordResolutions(ctx context.Context, res []pairing.Resolution) {
	if s.store == nil || len(res) == 0 {
		return
	}
	b := encodeResolutions(res)
	if b == nil {
		return
	}
	st := s.store
	st.logMu.Lock()
	defer st.logMu.Unlock()
	if err := st.client.Set(ctx, resolvedKey(st.nextSeq), b); err != nil {
		s.tel.storageError(ctx, "resolution_record")
		s.logger.Warn("toolpair: writing a resolution record failed", zap.Error(err))
		return
	}
	st.nextSeq++
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

func (t *telemetry) stateDiscarded(ctx context.Context, reason discardReason) {
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
