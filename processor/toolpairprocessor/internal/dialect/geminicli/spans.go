// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package geminicli is the dialect of Gemini CLI's spans and log events (checked against
// Gemini CLI 0.61.0, @google/gemini-cli, with telemetry traces on: its llm_call,
// schedule_tool_calls and tool_call spans under the tracer "gemini-cli", and its
// gemini_cli.* and gen_ai.client.inference.operation.details log events).
//
// Call IDs: the Gemini API gives function calls no ID. Gemini CLI makes one,
// "<tool>_<epoch ms>_<n>", sends it to the model as functionResponse.id and writes it into
// the input messages of later requests, but its spans, its output messages and its session
// transcript carry "<tool>__<that ID>". Every ID this dialect reads goes through
// genaievents.WireID, which removes a leading "<tool>__", so that all records of one call,
// spans and logs, share one key.
//
// Scope: the spans carry the session ID as gen_ai.conversation.id, the log events as
// session.id (attribute and resource); both are read through scope_attributes.
//
// Steps: every model request of the main agent is a root llm_call span (a trace of its
// own); the llm_call spans of a sub-agent run under the sub-agent's span, inside the tool
// call that runs it. Steps are therefore grouped by the span's parent span ID ("" for a
// root span): a sub-agent's requests never close the call of the main agent that waits
// for it. Log records carry no parent: their uses and boundaries are in the group "", the
// main agent's, and only api_request records of the main agent (role "main" or none) are
// boundaries.
package geminicli

import (
	"bytes"

	"github.com/buger/jsonparser"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/genaievents"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/readonly"
)

// Name is the dialect's configuration name.
const Name = "gemini_cli"

// Span attributes and operation names read (Gemini CLI 0.61.0 telemetry constants; the
// call ID key is Gemini's own gen_ai.tool.call_id, not semconv's gen_ai.tool.call.id).
const (
	attrOperation      = "gen_ai.operation.name"
	attrOutputMessages = "gen_ai.output.messages"
	attrInputMessages  = "gen_ai.input.messages"
	attrToolCallID     = "gen_ai.tool.call_id"
	attrToolName       = "gen_ai.tool.name"

	opLLMCall           = "llm_call"
	opScheduleToolCalls = "schedule_tool_calls"
	opToolCall          = "tool_call"

	// statusCancelled is the status of a tool call Gemini CLI cancelled while it ran or
	// before (the user pressed Esc, the turn was aborted).
	statusCancelled = "cancelled"
)

// ExtractSpan appends to f the tool calls a Gemini CLI span announces or resolves, and
// reports whether the span is one of Gemini CLI's: a span named llm_call, schedule_tool_calls
// or tool_call whose gen_ai.operation.name is its name.
//
//   - llm_call (gen_ai.operation.name): its start is a step boundary; each functionCall part
//     ({"functionCall":{"id","name"}}, the Gemini API's Content shape Gemini CLI records) or
//     semconv {"type":"tool_call","id","name"} part of gen_ai.output.messages (a JSON string)
//     is a tool_use at the span's end; each functionResponse part ({"functionResponse":
//     {"id","name"}}) or {"type":"tool_call_response","id"} part of gen_ai.input.messages (the
//     history the request sent) is an echo of a result at the span's start: it resolves its
//     call only when the call is still pending (its tool_call span was lost), and is
//     otherwise ignored;
//   - schedule_tool_calls: each request.callId (and request.name) of gen_ai.output.messages, a
//     JSON array of {request, response, status}, is a tool_use at the span's start (the
//     scheduler accepted the call); without output messages, each callId of
//     gen_ai.input.messages, the array of requests;
//   - tool_call: gen_ai.tool.call_id and gen_ai.tool.name: a tool_result at the span's end;
//     a KindAbort when the top-level status of its gen_ai.output.messages object is
//     "cancelled", or when dialect.Cancelled says the span reports its call's cancellation
//     (error.type, tool.failure_kind, status, span status). A failed tool (status "error",
//     span status Error without an abort message) is a result.
//
// Gemini CLI's other spans (agent_call, which wraps a sub-agent run) are not claimed.
func ExtractSpan(span ptrace.Span, f *dialect.Found) bool {
	// Gemini CLI names its spans after their operation: the name is checked first, so that
	// another source's span costs a string comparison, not an attribute lookup.
	name := span.Name()
	switch name {
	case opLLMCall, opScheduleToolCalls, opToolCall:
	default:
		return false
	}
	attrs := span.Attributes()
	if op, ok := fields.Get(attrs, attrOperation); !ok || op.Type() != pcommon.ValueTypeStr || op.Str() != name {
		return false
	}
	switch name {
	case opLLMCall:
		step := spanStep(span)
		f.AddStep(pairing.KindBoundary, "", "", int64(span.StartTimestamp()), "", "", step)
		if v, ok := fields.Get(attrs, attrOutputMessages); ok {
			end := int64(span.EndTimestamp())
			scanParts(v, f, callParts, func(id, tool string) {
				f.AddStep(pairing.KindUse, genaievents.UseID(id, tool, f), tool, end, "", "", step)
			})
		}
		if v, ok := fields.Get(attrs, attrInputMessages); ok {
			start := int64(span.StartTimestamp())
			scanParts(v, f, responseParts, func(id, tool string) {
				f.Add(pairing.KindEcho, genaievents.WireID(id, tool), "", start)
			})
		}
	case opScheduleToolCalls:
		step := spanStep(span)
		start := int64(span.StartTimestamp())
		add := func(id, tool string) {
			f.AddStep(pairing.KindUse, genaievents.UseID(id, tool, f), tool, start, "", "", step)
		}
		if v, ok := fields.Get(attrs, attrOutputMessages); ok {
			scanScheduled(v, f, add, "request")
		} else if v, ok := fields.Get(attrs, attrInputMessages); ok {
			scanScheduled(v, f, add)
		}
	case opToolCall:
		id, ok := f.CallID(attrs, attrToolCallID)
		if !ok {
			return true
		}
		tool := ""
		if v, ok := fields.Get(attrs, attrToolName); ok {
			tool = v.AsString()
		}
		kind := dialect.ResultKind(span)
		if v, ok := fields.Get(attrs, attrOutputMessages); ok && v.Type() == pcommon.ValueTypeStr &&
			toolStatus(v.Str()) == statusCancelled {
			kind = pairing.KindAbort
		}
		f.Add(kind, genaievents.WireID(id, tool), tool, int64(span.EndTimestamp()))
	default:
		return false
	}
	return true
}

// spanStep is the Step of an llm_call or schedule_tool_calls span: its own ID, grouped by its
// parent span ID ("" for a root span, the main agent's requests).
func spanStep(span ptrace.Span) string {
	return pairing.GroupStep(span.ParentSpanID().String(), span.SpanID().String())
}

// toolStatus returns the top-level "status" of a tool_call span's output messages object,
// or "" when there is none.
func toolStatus(s string) string {
	data := readonly.Bytes(s)
	v, dt, _, err := jsonparser.Get(data, "status")
	if err != nil || dt != jsonparser.String {
		return ""
	}
	return string(v)
}

// scanScheduled calls fn for each call of a schedule_tool_calls span's messages: a JSON array
// of objects whose callId and name sit under the key path prefix (["request"] for the
// output messages, none for the input messages).
func scanScheduled(v pcommon.Value, f *dialect.Found, fn func(id, name string), prefix ...string) {
	if v.Type() != pcommon.ValueTypeStr {
		f.Skip(dialect.ReasonInvalidType)
		return
	}
	idPath := append(append([]string(nil), prefix...), "callId")
	namePath := append(append([]string(nil), prefix...), "name")
	eachObject(readonly.Bytes(v.Str()), f, func(item []byte) {
		if id, ok := f.JSONCallID(item, idPath...); ok {
			fn(id, dialect.JSONString(item, namePath...))
		}
	})
}

// eachObject calls fn for each object of a JSON array, or for data itself when it is an
// object. Elements that are not objects are reported once as ReasonInvalidType (one reason
// per array, however long), data that is neither an array nor an object, or does not
// parse, as ReasonInvalidJSON.
func eachObject(data []byte, f *dialect.Found, fn func(obj []byte)) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		f.Skip(dialect.ReasonInvalidJSON)
		return
	}
	switch data[0] {
	case '{':
		if data[len(data)-1] != '}' {
			f.Skip(dialect.ReasonInvalidJSON)
			return
		}
		fn(data)
	case '[':
		f.EachArrayObject(data, fn)
	default:
		f.Skip(dialect.ReasonInvalidJSON)
	}
}
