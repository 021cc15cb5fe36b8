// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package voltagent is the dialect of VoltAgent's own telemetry (@voltagent/core 2.10.0, on
// the Vercel AI SDK 6, exported through VoltAgentObservability's span and log processors;
// checked against the captures in testdata/voltagent).
//
// VoltAgent announces its calls in log records only: its spans carry no tool call list (one
// llm:generateText span covers every step of a generateText call). Its tool span is the
// call's result, and the step's log records are a second report of it, in the other signal.
//
// Spans (instrumentation scope @voltagent/core) read:
//
//   - tool.execution:<tool> (span.type=tool, a child of the root agent span): the
//     tool_result. tool.call.id (string, the model's call ID, call_...) is the call ID,
//     tool.name (string) the tool name (else the span name after "tool.execution:"); time =
//     the span's end (its start is the call's start). It is a pairing.KindAbort when
//     dialect.Cancelled says the span reports its call's abort: VoltAgent ends the span of a
//     tool that threw with status Error and the error's message, and the capture's tool,
//     aborted by the run's signal, throws "Command aborted: <command>". error.type is
//     VoltAgentError for every tool error, which is no cancellation marker.
//   - the root agent span (no parent span, entity.type=agent, voltagent.operation_id set;
//     named after the agent): its end is a session end, ungrouped (it closes every pending
//     call of its scope, the run's trace). An agent span with a parent (a sub-agent) is not
//     read.
//
// Log records (scope voltagent; VoltAgent's logger bridged to OTel, the trace and span IDs
// set), told apart by their attribute event (string):
//
//   - agent.step.tool_call ("Step: Calling tool '<tool>'"): a tool_use; toolCallId (string)
//     the call ID, toolName (string) the tool name, time the record's timestamp.
//   - tool.execution.started ("[agent:<name>] toolCall - Executing <tool>"): the same call
//     again (toolCallId, toolName): a tool_use, which the engine counts as a repeat.
//   - agent.step.tool_result ("Step: Tool '<tool>' completed", or "... error"): a
//     tool_result of the log signal's own source; toolCallId, toolName. hasError (bool) true
//     says the tool failed: its error is the map attribute result ({error, name, message,
//     stack}: VoltAgent's report of a tool that threw) or error (a map with message, or a
//     string). A failure whose message says the operation was aborted, as a span's status
//     message does (dialect.Cancelled of the record's attributes, with that message as an
//     Error status's), is a pairing.KindAbort: the same error the tool span reports in its
//     status. hasError alone is a result.
//
// VoltAgent writes the three step records when the step ends (its onStepFinish), after the
// tool finished, all at one timestamp: a log use's time is not when the call started, which
// only the tool span shows (its start). VoltAgent has no session ID of its own on these
// records (the logs' conversationId is empty unless the application passes one, and the
// spans carry none), and logs and spans share the run's trace ID: a call's scope is its trace
// unless a scope_attributes attribute is set. operation.id is on the spans only (the logs
// write operationId), so it is not a default scope attribute.
//
// No record marks the start of each model request: llm:generateText spans every step and
// the step records are written at the step's end, so the dialect has no step boundaries. A
// call whose result never comes is closed by the root agent span's end, or by
// pairing_timeout.
//
// A record whose call ID is missing, empty or not a string is skipped and reported as
// malformed.
package voltagent

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// Name is the dialect's configuration name.
const Name = "voltagent"

// Span names and attributes (@voltagent/core 2.10.0).
const (
	// toolSpanPrefix starts the name of a tool span: "tool.execution:<tool>".
	toolSpanPrefix = "tool.execution:"
	// spanGenerateText and spanStreamText are the spans of one generateText or streamText
	// call, all its steps included: "llm:<operation>".
	spanGenerateText = "llm:generateText"
	spanStreamText   = "llm:streamText"
	attrCallID       = "tool.call.id"
	attrToolName     = "tool.name"
	attrOperationID  = "voltagent.operation_id"
	attrEntityType   = "entity.type"
	entityAgent      = "agent"
)

// Log attributes and event values (@voltagent/core 2.10.0 LogEvents).
const (
	attrEvent      = "event"
	attrToolCallID = "toolCallId"
	attrLogTool    = "toolName"
	attrHasError   = "hasError"
	attrResult     = "result"
	attrError      = "error"
	keyMessage     = "message"
	eventToolCall  = "agent.step.tool_call"
	eventStarted   = "tool.execution.started"
	eventResult    = "agent.step.tool_result"
)

// Keys of the log fields read for every log record the dialect is tried on, in the record's
// one pass over its attributes (fields.Record).
var (
	fieldEvent      = fields.Register(attrEvent)
	fieldToolCallID = fields.Register(attrToolCallID)
	fieldLogTool    = fields.Register(attrLogTool)
)

// ExtractSpan appends to f the tool call a VoltAgent span resolves, or the session end its
// root agent span is, and reports whether the span is one of those. Other spans
// (llm:generateText, sub-agents' spans) are not claimed. It never modifies the span.
func ExtractSpan(span ptrace.Span, f *dialect.Found) bool {
	name := span.Name()
	if strings.HasPrefix(name, toolSpanPrefix) {
		extractTool(span, name, f)
		return true
	}
	if !span.ParentSpanID().IsEmpty() {
		return false
	}
	a := f.Attrs(span.Attributes())
	if _, ok := a.Get(attrOperationID); !ok {
		return false
	}
	if et, ok := a.Get(attrEntityType); !ok || et.Type() != pcommon.ValueTypeStr || et.Str() != entityAgent {
		return false
	}
	f.AddStep(pairing.KindSessionEnd, "", "", int64(span.EndTimestamp()), "", "", "")
	return true
}

// extractTool reads a tool.execution:<tool> span.
func extractTool(span ptrace.Span, name string, f *dialect.Found) {
	a := f.Attrs(span.Attributes())
	tool := strings.TrimPrefix(name, toolSpanPrefix)
	if v, ok := a.Get(attrToolName); ok && v.Type() == pcommon.ValueTypeStr && v.Str() != "" {
		tool = v.Str()
	}
	v, ok := a.Get(attrCallID)
	if !ok {
		f.Skip(dialect.ReasonMissingCallID)
		return
	}
	if id, ok := f.ValueCallID(v); ok {
		f.Add(dialect.ResultKindIn(span, a), id, tool, int64(span.EndTimestamp()))
	}
}

// ExtractLog appends to f the tool call a VoltAgent step record announces or resolves, and
// reports whether the record is one (its event attribute agent.step.tool_call,
// tool.execution.started or agent.step.tool_result). It never modifies the record.
func ExtractLog(lr plog.LogRecord, f *dialect.Found) bool {
	a := f.Attrs(lr.Attributes())
	ev, ok := a.Value(fieldEvent)
	if !ok || ev.Type() != pcommon.ValueTypeStr {
		return false
	}
	kind := pairing.KindUse
	switch ev.Str() {
	case eventToolCall, eventStarted:
	case eventResult:
		kind = resultKind(lr.Attributes(), a)
	default:
		return false
	}
	id, idOK := a.Value(fieldToolCallID)
	tool, toolOK := a.Value(fieldLogTool)
	f.AddLogCallValues(lr, kind, id, idOK, tool, toolOK)
	return true
}

// resultKind returns the kind of an agent.step.tool_result record whose attributes are attrs
// (a reads them): pairing.KindAbort when hasError is true and the error's message says the
// operation was aborted (dialect.Cancelled, reading it as a span's status message), else
// pairing.KindResult.
func resultKind(attrs pcommon.Map, a *fields.Record) pairing.Kind {
	if v, ok := a.Get(attrHasError); !ok || v.Type() != pcommon.ValueTypeBool || !v.Bool() {
		return pairing.KindResult
	}
	if dialect.Cancelled(attrs, ptrace.StatusCodeError, ErrorMessage(a)) {
		return pairing.KindAbort
	}
	return pairing.KindResult
}

// ErrorMessage returns the message of the error a failed agent.step.tool_result record
// (hasError true) reports, whose attributes a reads: the string message of the map attribute
// result (a tool-result part whose output is VoltAgent's {error: true, name, message, stack}
// for a tool that threw), else of the map attribute error (a tool-error part), else the
// attribute error itself when it is a string; "" when there is none.
func ErrorMessage(a *fields.Record) string {
	for _, key := range []string{attrResult, attrError} {
		v, ok := a.Get(key)
		if !ok {
			continue
		}
		switch v.Type() {
		case pcommon.ValueTypeMap:
			if m, ok := fields.Get(v.Map(), keyMessage); ok && m.Type() == pcommon.ValueTypeStr {
				return m.Str()
			}
		case pcommon.ValueTypeStr:
			if key == attrError {
				return v.Str()
			}
		}
	}
	return ""
}
