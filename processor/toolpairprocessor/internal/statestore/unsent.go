// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package statestore

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"strconv"

	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/outbox"
)

// The outbox's items in storage (outbox.Persister): each refused delivery under
// UnsentKeyPrefix and its sequence number, written when it is refused and deleted once a
// next consumer took it or it was given up, and UnsentRangeKey the range [first, next) of the
// numbers that may be stored, written with each, so that a start reads them back without a
// listing (storage clients have none). Items leave the outbox oldest first, so the range
// moves forward.
const (
	UnsentRangeKey  = "toolpair.unsent"
	UnsentKeyPrefix = "toolpair.unsent."
	unsentMagic     = "TPU1"
	unsentRngMagic  = "TPR1"
)

// UnsentKey is the key of the stored item seq.
func UnsentKey(seq uint64) string { return UnsentKeyPrefix + strconv.FormatUint(seq, 10) }

func encodeUnsentRange(first, next uint64) []byte { return encodePair(unsentRngMagic, first, next) }

func decodeUnsentRange(b []byte) (first, next uint64, ok bool) {
	first, next, ok = decodePair(unsentRngMagic, b)
	return first, next, ok && first <= next
}

// encodeUnsent frames the OTLP protobuf of an item: magic, 1 for spans or 2 for log
// records, the bytes, a CRC-32.
func encodeUnsent(it *outbox.Item) ([]byte, error) {
	b := []byte(unsentMagic)
	var err error
	if it.IsLogs() {
		b = append(b, 2)
		b, err = appendProto(b, (&plog.ProtoMarshaler{}).MarshalLogs, it.Logs)
	} else {
		b = append(b, 1)
		b, err = appendProto(b, (&ptrace.ProtoMarshaler{}).MarshalTraces, it.Traces)
	}
	if err != nil {
		return nil, err
	}
	return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b)), nil
}

func appendProto[T any](b []byte, marshal func(T) ([]byte, error), v T) ([]byte, error) {
	p, err := marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, p...), nil
}

// decodeUnsent reads a stored item back, bound to the component's next consumer of its signal;
// ok is false for a blob that is not one, or of a signal the component has no pipeline of.
func (st *Store) decodeUnsent(seq uint64, b []byte) (it outbox.Item, err error) {
	if len(b) < len(unsentMagic)+5 || string(b[:len(unsentMagic)]) != unsentMagic ||
		crc32.ChecksumIEEE(b[:len(b)-4]) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return it, errors.New("not a stored unsent delivery")
	}
	sig, data := b[len(unsentMagic)], b[len(unsentMagic)+1:len(b)-4]
	switch {
	case sig == 1 && st.o.Traces != nil:
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(data)
		if err != nil {
			return it, err
		}
		it = outbox.Item{Traces: td, ToTraces: st.o.Traces}
	case sig == 2 && st.o.Logs != nil:
		ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(data)
		if err != nil {
			return it, err
		}
		it = outbox.Item{Logs: ld, ToLogs: st.o.Logs}
	default:
		return it, errors.New("a stored unsent delivery of a signal the component has no pipeline of")
	}
	it.Seq, it.Size = seq, int64(len(data))
	return it, nil
}

// Put implements outbox.Persister: the item and the range, in one storage batch.
func (st *Store) Put(ctx context.Context, it *outbox.Item) error {
	b, err := encodeUnsent(it)
	if err != nil {
		return err
	}
	st.unsentMu.Lock()
	defer st.unsentMu.Unlock()
	if st.unsentFirst == 0 || it.Seq < st.unsentFirst {
		st.unsentFirst = it.Seq
	}
	st.unsentNext = max(st.unsentNext, it.Seq+1)
	err = st.client.Batch(ctx,
		storage.SetOperation(UnsentKey(it.Seq), b),
		storage.SetOperation(UnsentRangeKey, encodeUnsentRange(st.unsentFirst, st.unsentNext)))
	if err != nil {
		st.o.Telemetry.StorageError(ctx, "unsent")
	}
	return err
}

// Delete implements outbox.Persister.
func (st *Store) Delete(ctx context.Context, seq uint64) error {
	st.unsentMu.Lock()
	defer st.unsentMu.Unlock()
	if seq == st.unsentFirst {
		st.unsentFirst = min(seq+1, st.unsentNext)
	}
	err := st.client.Batch(ctx,
		storage.DeleteOperation(UnsentKey(seq)),
		storage.SetOperation(UnsentRangeKey, encodeUnsentRange(st.unsentFirst, st.unsentNext)))
	if err != nil {
		st.o.Telemetry.StorageError(ctx, "unsent")
	}
	return err
}

// restoreUnsent reads the stored items back into the outbox (Options.Outbox) and stores its
// items from then on. An item that cannot be read is logged and deleted; nothing here keeps
// the component from starting.
func (st *Store) restoreUnsent(ctx context.Context) {
	var items []outbox.Item
	if rb, err := st.client.Get(ctx, UnsentRangeKey); err != nil {
		st.o.Telemetry.StorageError(ctx, "read")
		st.o.Logger.Warn("toolpair: reading the records kept to send again failed; they are not restored", zap.Error(err))
	} else if first, next, ok := decodeUnsentRange(rb); ok {
		for seq := first; seq < next; seq++ {
			b, err := st.client.Get(ctx, UnsentKey(seq))
			if err != nil || b == nil {
				continue
			}
			it, err := st.decodeUnsent(seq, b)
			if err != nil {
				st.o.Logger.Warn("toolpair: a stored record kept to send again is not readable; it is deleted",
					zap.String("key", UnsentKey(seq)), zap.Error(err))
				_ = st.client.Delete(ctx, UnsentKey(seq))
				continue
			}
			items = append(items, it)
		}
		st.unsentFirst, st.unsentNext = first, next
	}
	_ = st.o.Outbox.SetPersister(ctx, st)
	st.o.Outbox.Restore(items, st.unsentNext)
	if len(items) > 0 {
		st.o.Logger.Info("toolpair: records kept to send again restored from storage", zap.Int("deliveries", len(items)))
	}
}
