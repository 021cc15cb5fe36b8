// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package claim

import (
	"slices"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/registry"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
)

// durationKeys are the duration attributes of the built-in dialects
// (dialect.Operations.DurationAttributes), each once, in trial order.
var durationKeys = func() []string {
	var keys []string
	for _, e := range registry.Entries() {
		for _, k := range e.Operations.DurationAttributes {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	return keys
}()

// durationFields are durationKeys registered with package fields, read in a record's one pass.
var durationFields = func() []fields.Key {
	keys := make([]fields.Key, len(durationKeys))
	for i, k := range durationKeys {
		keys[i] = fields.Register(k)
	}
	return keys
}()

// LogStart is the start of the tool call a result log record reports: its time minus its
// duration (the first of durationKeys it has, an int or a decimal string, in ms), else 0.
func LogStart(lr plog.LogRecord) int64 {
	var v pcommon.Value
	ok := false
	for _, k := range durationKeys {
		if v, ok = fields.Get(lr.Attributes(), k); ok {
			break
		}
	}
	if !ok {
		return 0
	}
	return logStart(lr, v)
}

// LogStartIn is LogStart of a record whose attributes a reads (dialect.Found.Attrs).
func LogStartIn(lr plog.LogRecord, a *fields.Record) int64 {
	for _, k := range durationFields {
		if v, ok := a.Value(k); ok {
			return logStart(lr, v)
		}
	}
	return 0
}

// logStart is LogStart of a record whose duration field has value v.
func logStart(lr plog.LogRecord, v pcommon.Value) int64 {
	var ms int64
	switch v.Type() {
	case pcommon.ValueTypeInt:
		ms = v.Int()
	case pcommon.ValueTypeStr:
		n, err := strconv.ParseInt(v.Str(), 10, 64)
		if err != nil {
			return 0
		}
		ms = n
	default:
		return 0
	}
	end := dialect.LogTime(lr)
	if ms < 0 || end <= ms*int64(time.Millisecond) {
		return 0
	}
	return end - ms*int64(time.Millisecond)
}
