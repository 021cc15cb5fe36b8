// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package synth turns pairing outcomes back into pdata: it writes the toolpair attributes
// on result records and builds the synthetic span or log record of an interrupted call
// (specification section 3).
package synth

import (
	"crypto/sha256"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// Attributes the processor writes (specification section 3). Only toolpair.* names are ours; the
// others are OTel semantic conventions v1.37.0.
const (
	// AttrOutcome (string): the outcome of the call or record, one of pairing.Outcome's names.
	AttrOutcome = "toolpair.outcome"
	// AttrCallDurationMs (int, ms): the tool's execution time, on paired results only: the
	// agent's own duration field, else the result span's length, else the result time minus
	// the use time (Durations).
	AttrCallDurationMs = "toolpair.call.duration_ms"
	// AttrCallElapsedMs (int, ms): the result time minus the use time (from the call's
	// announcement to its result), on paired results whose AttrCallDurationMs differs.
	AttrCallElapsedMs = "toolpair.call.elapsed_ms"
	// AttrInterruptReason (string): why an interrupted call was interrupted.
	AttrInterruptReason = "toolpair.interrupt.reason"
	// AttrCallCounted (bool, true when present) marks the one record that counts its call
	// (specification section 3): the record of the report the component's telemetry counted
	// the call by, or the synthetic record of an interrupted call. Metrics made from records
	// count calls by this mark, so a call reported by a span and an event counts once.
	AttrCallCounted = "toolpair.call.counted"
	// AttrSynthetic (bool): true on records the processor made.
	AttrSynthetic = "toolpair.synthetic"
	// AttrSyntheticCompanion (bool): true on the extra synthetic span made for a call announced
	// only in logs, whose synthetic log record is the call's own record. Lets metrics count
	// the call once (from the log record) while the span shows it in the trace view.
	AttrSyntheticCompanion = "toolpair.synthetic.companion"
	// AttrToolCallID (string): the ID of the call a result record resolved, written on a
	// result that carries no call ID of its own (an OpenLLMetry or OpenInference tool span
	// matched by tool name and arguments), so that queries can join it to the call. Semconv
	// gen_ai.tool.call.id.
	AttrToolCallID = "gen_ai.tool.call.id"

	// ErrorTypeInterrupted is the error.type of a synthetic record.
	ErrorTypeInterrupted = "tool_call_interrupted"
	// EventNameInterrupted is the event name of a synthetic log record.
	EventNameInterrupted = "toolpair.tool_call.interrupted"
)

var (
	attrOperationName = string(semconv.GenAIOperationNameKey)
	attrToolName      = string(semconv.GenAIToolNameKey)
	attrToolCallID    = AttrToolCallID
	attrErrorType     = string(semconv.ErrorTypeKey)
	opExecuteTool     = semconv.GenAIOperationNameExecuteTool.Value.AsString()
)

// Signal is the pipeline a record travels in.
type Signal uint8

const (
	// Traces: spans.
	Traces Signal = iota + 1
	// Logs: log records.
	Logs
)

// Resource is a resource shared by the origins of one batch's resource group, or of several
// batches' equal ones (see ResourceCache). It is read-only once made.
type Resource struct {
	Resource pcommon.Resource
	// attrs are the attributes of Resource as ResourceCache compares them, nil when it does
	// not (see comparableAttrs).
	attrs []attr
}

// NewResource copies res.
func NewResource(res pcommon.Resource) *Resource {
	r := &Resource{Resource: pcommon.NewResource()}
	res.CopyTo(r.Resource)
	return r
}

// Origin is what the processor remembers of the record that announced a call: enough to
// build its synthetic record, and never the call's content.
type Origin struct {
	// Resource of the announcing record, copied.
	Resource *Resource
	// ConversationAttr is the attribute that keyed the call's scope, "" when it was the trace ID.
	ConversationAttr string
	Conversation     string
	// Next is the pipeline the announcing record came through, where its synthetic record
	// goes (the processor's next consumer; opaque to this package).
	Next any
	// Signal is the signal of Next's pipeline: a next consumer may implement the consumers
	// of several signals, so its type does not tell.
	Signal Signal
	// TraceID, SpanID and ParentSpanID are the announcing span's (or log record's) IDs.
	TraceID      pcommon.TraceID
	SpanID       pcommon.SpanID
	ParentSpanID pcommon.SpanID
	// ToolPrefixedIDs: the announcing record writes call IDs as "<tool>__<id>" (Gemini CLI's
	// telemetry form, dialect.Found.ToolPrefixedIDs), while the call's key holds "<id>"; the
	// synthetic records write gen_ai.tool.call.id in the record's form.
	ToolPrefixedIDs bool
	// Also is the origin of the call's first announcing record of the other signal, when it
	// was announced in both (its own Also is nil): an interrupted call then gets a synthetic
	// record in each (specification section 3).
	Also *Origin
}

// ForSignal returns the origin of signal s among o and o.Also, or nil.
func (o *Origin) ForSignal(s Signal) *Origin {
	switch {
	case o == nil:
		return nil
	case o.Signal == s:
		return o
	case o.Also != nil && o.Also.Signal == s:
		return o.Also
	}
	return nil
}

// MergeOrigins is the engine's pairing.Config.MergePayload: a call announced by a record of
// each signal keeps both origins (a copy of kept with Also set; kept itself, which other calls
// of its record share, is not changed). Any other payload is kept as it is.
func MergeOrigins(kept, repeated any) any {
	k, ok := kept.(*Origin)
	r, ok2 := repeated.(*Origin)
	if !ok || !ok2 || k.Signal == r.Signal || k.Also != nil || r.Resource == nil {
		return kept
	}
	c := *k
	c.Also = r
	return &c
}

// Mark gathers the outcomes of the calls one result record resolved, to write them on it once
// (specification section 3): toolpair.outcome when every call the record resolved had the same
// outcome (and reason), toolpair.call.duration_ms (and toolpair.call.elapsed_ms where it
// differs) only when it resolved one call (a paired one), toolpair.interrupt.reason with an
// aborted outcome, and toolpair.call.counted, the number of calls this record counts (those
// whose first report it is), when not 0. The zero Mark is empty.
type Mark struct {
	n          int
	outcome    pairing.Outcome
	reason     pairing.Reason
	mixed      bool
	differs    bool
	durationMs int64
	elapsedMs  int64
	counted    int64
}

// Add adds the outcome r of one call the record resolved; run is the record's own Run (see
// Runtime; unknown for a record that is not the tool's own, such as a history echo).
func (m *Mark) Add(r *pairing.Resolution, run Run) {
	if m.n > 0 && (r.Outcome != m.outcome || r.Reason != m.reason) {
		m.mixed = true
	}
	m.n++
	m.outcome, m.reason = r.Outcome, r.Reason
	if r.Outcome.Props().Timed {
		m.durationMs, m.elapsedMs, m.differs = Durations(r, run)
	}
	if Counts(r) {
		m.counted++
	}
}

// Empty reports whether no outcome was added.
func (m *Mark) Empty() bool { return m.n == 0 }

// Write writes the mark on a record's attributes.
func (m *Mark) Write(attrs pcommon.Map) {
	if m.n == 0 {
		return
	}
	// Room for the attributes in one exact allocation: appending the first would double a
	// record's attribute slice (most of the cost of marking, on records of 20 attributes).
	attrs.EnsureCapacity(attrs.Len() + 4)
	if m.counted > 0 {
		attrs.PutInt(AttrCallCounted, m.counted)
	}
	if m.mixed {
		return
	}
	attrs.PutStr(AttrOutcome, m.outcome.String())
	p := m.outcome.Props()
	if p.Timed && m.n == 1 {
		attrs.PutInt(AttrCallDurationMs, m.durationMs)
		if m.differs {
			attrs.PutInt(AttrCallElapsedMs, m.elapsedMs)
		}
	}
	if p.PerReason {
		// Of interrupted calls, only an aborted result reaches a record: it says so itself.
		attrs.PutStr(AttrInterruptReason, m.reason.String())
	}
}

// MarkResult writes the outcome r of the one call a result record resolved on its attributes
// (see Mark); run is the record's own Run.
func MarkResult(attrs pcommon.Map, r *pairing.Resolution, run Run) {
	var m Mark
	m.Add(r, run)
	m.Write(attrs)
}

// Counts reports whether the record of resolution r counts its call (toolpair.call.counted):
// the call's first report (of an outcome that counts, pairing.Props.Counts: not a duplicate),
// not a further report of another source.
func Counts(r *pairing.Resolution) bool {
	return !r.Report && r.Outcome.Props().Counts
}

// SpanID returns the synthetic span ID of a call: the first 8 bytes of SHA-256 over the trace
// ID and the call ID, so replaying the same input yields the same span.
func SpanID(traceID pcommon.TraceID, callID string) pcommon.SpanID {
	h := sha256.New()
	h.Write(traceID[:])
	h.Write([]byte(callID))
	var sum [sha256.Size]byte
	var id pcommon.SpanID
	copy(id[:], h.Sum(sum[:0]))
	if id.IsEmpty() {
		id[7] = 1 // an all-zero span ID is invalid
	}
	return id
}

// AppendSpan adds the synthetic execute_tool span of an interrupted call to td, under a new
// resource copied from the origin: name "execute_tool {tool}", kind INTERNAL, the origin's
// trace ID, parent the origin's parent span (else the origin span), start the use time,
// end the interruption's EndTime, status Error. It returns the span added.
func AppendSpan(td ptrace.Traces, r *pairing.Resolution, o *Origin, scopeName, scopeVersion string) ptrace.Span {
	rs := td.ResourceSpans().AppendEmpty()
	o.Resource.Resource.CopyTo(rs.Resource())
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(scopeName)
	ss.Scope().SetVersion(scopeVersion)
	span := ss.Spans().AppendEmpty()
	name := opExecuteTool
	if r.ToolName != "" {
		name += " " + r.ToolName
	}
	span.SetName(name)
	span.SetKind(ptrace.SpanKindInternal)
	span.SetTraceID(o.TraceID)
	span.SetSpanID(SpanID(o.TraceID, r.Key.CallID))
	if !o.ParentSpanID.IsEmpty() {
		span.SetParentSpanID(o.ParentSpanID)
	} else {
		span.SetParentSpanID(o.SpanID)
	}
	span.SetStartTimestamp(pcommon.Timestamp(r.UseTime))
	span.SetEndTimestamp(pcommon.Timestamp(max(r.EndTime, r.UseTime)))
	span.Status().SetCode(ptrace.StatusCodeError)
	span.Status().SetMessage("tool call interrupted: " + r.Reason.String())
	putSyntheticAttrs(span.Attributes(), r, o)
	return span
}

// AppendLog adds the synthetic log record of an interrupted call to ld, under a new resource
// copied from the origin: event name toolpair.tool_call.interrupted, severity WARN, time the
// interruption's EndTime, a one-line body without content. It returns the record added.
func AppendLog(ld plog.Logs, r *pairing.Resolution, o *Origin, scopeName, scopeVersion string, observed time.Time) plog.LogRecord {
	rl := ld.ResourceLogs().AppendEmpty()
	o.Resource.Resource.CopyTo(rl.Resource())
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName(scopeName)
	sl.Scope().SetVersion(scopeVersion)
	lr := sl.LogRecords().AppendEmpty()
	lr.SetEventName(EventNameInterrupted)
	lr.SetSeverityNumber(plog.SeverityNumberWarn)
	lr.SetSeverityText("WARN")
	lr.SetTimestamp(pcommon.Timestamp(max(r.EndTime, r.UseTime)))
	lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(observed))
	lr.SetTraceID(o.TraceID)
	lr.SetSpanID(o.SpanID)
	tool := r.ToolName
	if tool == "" {
		tool = "unknown tool"
	}
	lr.Body().SetStr(fmt.Sprintf("tool call %s (%s) interrupted: %s", shownID(r, o), tool, r.Reason))
	putSyntheticAttrs(lr.Attributes(), r, o)
	return lr
}

// shownID is the call ID of r as the announcing record o shows it: "<tool>__<id>" when o
// writes IDs in that form (Origin.ToolPrefixedIDs), else the key's.
func shownID(r *pairing.Resolution, o *Origin) string {
	if o.ToolPrefixedIDs && r.ToolName != "" {
		return r.ToolName + "__" + r.Key.CallID
	}
	return r.Key.CallID
}

func putSyntheticAttrs(attrs pcommon.Map, r *pairing.Resolution, o *Origin) {
	attrs.EnsureCapacity(9)
	attrs.PutStr(attrOperationName, opExecuteTool)
	if r.ToolName != "" {
		attrs.PutStr(attrToolName, r.ToolName)
	}
	attrs.PutStr(attrToolCallID, shownID(r, o))
	attrs.PutStr(attrErrorType, ErrorTypeInterrupted)
	attrs.PutBool(AttrSynthetic, true)
	attrs.PutStr(AttrOutcome, pairing.OutcomeInterrupted.String())
	attrs.PutStr(AttrInterruptReason, r.Reason.String())
	if o.ConversationAttr != "" {
		attrs.PutStr(o.ConversationAttr, o.Conversation)
	}
}
