// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package synth

import (
	"math"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/normalize"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// Run is the tool's own execution time as one result record states it (specification section
// 3), in nanoseconds; Known is false when the record states none (a log record without a
// duration field, a history echo).
type Run struct {
	Ns    int64
	Known bool
}

// RunOf returns the Run of a stated duration in milliseconds.
func RunOf(ms int64) Run { return Run{Ns: ms * int64(time.Millisecond), Known: true} }

// Runtime reads the Run of result records: the agent's own duration field where the record
// has one, else, for a span, the span's own length (end minus start). The fields are, in
// this order: the attributes of Fields (the dialects' duration attributes, in ms: Claude
// Code's, Codex's and Gemini CLI's duration_ms), then the duration_normalization canonical
// field and its mirrors (Norm) in the attributes and, on a log record, in a map body. Values
// are read as section 5 reads the canonical field (an int, a double rounded to the nearest ms,
// a numeric string); a field holding anything else is not a duration. The record is read
// after its normalization, so it states one duration wherever it states several.
type Runtime struct {
	// Fields are the agents' duration attributes, in ms; each must be registered with package
	// fields, which reads them in the record's one pass over its attributes.
	Fields []fields.Key
	// Norm reads the canonical duration field and its mirrors; nil reads none.
	Norm *normalize.Normalizer
}

// stated returns the duration the attributes a reads state, in ms.
func (rt *Runtime) stated(a *fields.Record) (int64, bool) {
	for _, k := range rt.Fields {
		if v, ok := a.Value(k); ok {
			if ms, ok := normalize.Millis(v); ok {
				return ms, true
			}
		}
	}
	if rt.Norm != nil {
		return rt.Norm.ReadIn(a)
	}
	return 0, false
}

// SpanIn returns the Run of a result span whose attributes a reads: the duration it states,
// else its own length.
func (rt *Runtime) SpanIn(span ptrace.Span, a *fields.Record) Run {
	if ms, ok := rt.stated(a); ok {
		return RunOf(ms)
	}
	start, end := span.StartTimestamp(), span.EndTimestamp()
	if start == 0 || end < start {
		return Run{}
	}
	return Run{Ns: int64(end - start), Known: true}
}

// LogIn returns the Run of a result log record whose attributes a reads: the duration its
// attributes or its map body state, else the one its dialect read in its body (dialect, which
// a dialect reading a string body as a transcript line finds there).
func (rt *Runtime) LogIn(lr plog.LogRecord, a *fields.Record, dialect Run) Run {
	if ms, ok := rt.stated(a); ok {
		return RunOf(ms)
	}
	if rt.Norm != nil && lr.Body().Type() == pcommon.ValueTypeMap {
		if ms, ok := rt.Norm.ReadMap(lr.Body().Map()); ok {
			return RunOf(ms)
		}
	}
	return dialect
}

// Span and Log are SpanIn and LogIn on a record read outside its batch (a held record
// restored from storage), in a pass of their own.
func (rt *Runtime) Span(span ptrace.Span) Run {
	var a fields.Record
	a.Reset(span.Attributes())
	defer a.Release()
	return rt.SpanIn(span, &a)
}

// Log is LogIn on a record read outside its batch (see Span).
func (rt *Runtime) Log(lr plog.LogRecord, dialect Run) Run {
	var a fields.Record
	a.Reset(lr.Attributes())
	defer a.Release()
	return rt.LogIn(lr, &a, dialect)
}

// Durations returns what a paired result record carries (specification section 3), in whole
// milliseconds, each rounded to the nearest: duration, the tool's execution time (run when
// known, else the result time minus the use time); elapsed, the time from the call's
// announcement (its use time) to its result; and whether elapsed differs from duration,
// when it is written too.
func Durations(r *pairing.Resolution, run Run) (duration, elapsed int64, differs bool) {
	elapsed = roundMs(r.ResultTime - r.UseTime)
	if !run.Known {
		return elapsed, elapsed, false
	}
	duration = roundMs(run.Ns)
	return duration, elapsed, duration != elapsed
}

// roundMs rounds ns to the nearest millisecond (halves away from zero).
func roundMs(ns int64) int64 {
	return int64(math.Round(float64(ns) / float64(time.Millisecond)))
}
