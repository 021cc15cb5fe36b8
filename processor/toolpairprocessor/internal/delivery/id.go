// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package delivery

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/cespare/xxhash/v2"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// ID is the identity of one record as its sender sends it again: equal for two deliveries of
// the same record, different (but for a 2^-64 chance) for two different records. 0 is no ID.
// IDs are stable across processes (xxhash64, no seed), so that a restart with storage still
// knows a record delivered before it.
type ID uint64

// Span returns the ID of span under the resource and scope whose hashes are resource and
// scope (Resource, Scope): its trace ID, span ID and end time (specification section 2), with
// its name, start, status and attributes. An SDK exports a span once, when it ends; a span sent
// again carries the same. The rest guards against spans that share their IDs without being
// one (an exporter writing no span IDs, test fixtures).
func Span(resource, scope uint64, span ptrace.Span) ID {
	var dig xxhash.Digest
	dig.Reset()
	d := &dig
	var b [8 + 16 + 8 + 8*5]byte
	copy(b[:8], "spanv1\x00\x00")
	tid, sid := span.TraceID(), span.SpanID()
	copy(b[8:24], tid[:])
	copy(b[24:32], sid[:])
	binary.LittleEndian.PutUint64(b[32:], uint64(span.EndTimestamp()))
	binary.LittleEndian.PutUint64(b[40:], uint64(span.StartTimestamp()))
	binary.LittleEndian.PutUint64(b[48:], uint64(span.Status().Code()))
	binary.LittleEndian.PutUint64(b[56:], resource)
	binary.LittleEndian.PutUint64(b[64:], scope)
	_, _ = d.Write(b[:])
	hashString(d, span.Name())
	hashString(d, span.Status().Message())
	hashMap(d, span.Attributes())
	return nonZero(d.Sum64())
}

// Resource returns the hash of a resource's attributes, the part of a log record's ID shared
// by every record under it (Log).
func Resource(r pcommon.Resource) uint64 {
	var d xxhash.Digest
	d.Reset()
	hashMap(&d, r.Attributes())
	return d.Sum64()
}

// Scope returns the hash of an instrumentation scope (name, version, attributes), the part of
// a log record's ID shared by every record under it (Log).
func Scope(s pcommon.InstrumentationScope) uint64 {
	var d xxhash.Digest
	d.Reset()
	hashString(&d, s.Name())
	hashString(&d, s.Version())
	hashMap(&d, s.Attributes())
	return d.Sum64()
}

// Log returns the ID of log record lr under the resource and scope whose hashes are resource
// and scope (Resource, Scope): its timestamps, severity, event name, trace context, body and
// attributes (specification section 2). A log record carries no identity of
// its own; a sender sending it again sends these unchanged, and two different records of a
// call differ in at least one of them (another time, another body).
func Log(resource, scope uint64, lr plog.LogRecord) ID {
	var dig xxhash.Digest
	dig.Reset()
	d := &dig
	var b [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		_, _ = d.Write(b[:])
	}
	put(resource)
	put(scope)
	put(uint64(lr.Timestamp()))
	put(uint64(lr.ObservedTimestamp()))
	put(uint64(lr.SeverityNumber()))
	put(uint64(lr.Flags()))
	hashString(d, lr.SeverityText())
	hashString(d, lr.EventName())
	tid, sid := lr.TraceID(), lr.SpanID()
	_, _ = d.Write(tid[:])
	_, _ = d.Write(sid[:])
	hashValue(d, lr.Body())
	hashMap(d, lr.Attributes())
	return nonZero(d.Sum64())
}

func nonZero(h uint64) ID {
	if h == 0 {
		return 1
	}
	return ID(h)
}

// hashString writes s with its length, so that ("ab","c") and ("a","bc") differ.
func hashString(d *xxhash.Digest, s string) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(len(s)))
	_, _ = d.Write(b[:])
	_, _ = d.WriteString(s)
}

// hashMap writes the hash of m, whatever the order of its keys: the sum of each pair's own
// hash. A sender sends a record again with its attributes in their order, but a record built
// again from a map (an SDK's attribute set, a processor before this one) need not keep it.
func hashMap(d *xxhash.Digest, m pcommon.Map) {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(m.Len()))
	binary.LittleEndian.PutUint64(b[8:], mapHash(m))
	_, _ = d.Write(b[:])
}

// mapHash is the order-free hash of m: the sum of a mix of each key's and value's hashes.
func mapHash(m pcommon.Map) uint64 {
	var sum uint64
	for k, v := range m.All() {
		sum += mix(xxhash.Sum64String(k) ^ bits.RotateLeft64(valueHash(v), 29))
	}
	return sum
}

// valueHash hashes v with its type, so that the string "1" and the int 1 differ.
func valueHash(v pcommon.Value) uint64 {
	t := uint64(v.Type()) * 0x9e3779b97f4a7c15
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return t ^ xxhash.Sum64String(v.Str())
	case pcommon.ValueTypeInt:
		return t ^ mix(uint64(v.Int()))
	case pcommon.ValueTypeDouble:
		return t ^ mix(math.Float64bits(v.Double()))
	case pcommon.ValueTypeBool:
		if v.Bool() {
			return t ^ 1
		}
		return t
	case pcommon.ValueTypeBytes:
		return t ^ xxhash.Sum64(v.Bytes().AsRaw())
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		h := t ^ mix(uint64(s.Len()))
		for i := 0; i < s.Len(); i++ {
			h = mix(h ^ valueHash(s.At(i)))
		}
		return h
	case pcommon.ValueTypeMap:
		return t ^ mix(mapHash(v.Map())+uint64(v.Map().Len()))
	}
	return t
}

// mix is the finalizer of SplitMix64: every bit of x reaches every bit of the result.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// hashValue writes the hash of v (valueHash).
func hashValue(d *xxhash.Digest, v pcommon.Value) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], valueHash(v))
	_, _ = d.Write(b[:])
}
