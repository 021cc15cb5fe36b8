// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package geminicli

import (
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/genai"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// Qwen Code (0.24.4, @qwen-code/qwen-code), a fork of Gemini CLI, writes Gemini CLI's
// telemetry under its own prefix: log events named by the event.name attribute (the OTLP
// EventName is empty) and spans of its own, under the tracer "qwen-code". Its call IDs are the
// model provider's (an OpenAI-compatible endpoint's call_...), carried as they are.
const (
	// qwenPrefix starts the names of Qwen Code's spans and events.
	qwenPrefix = "qwen-code."

	// qwenSpanLLMRequest is one model request: a GenAI chat span whose
	// gen_ai.output.messages announce the calls.
	qwenSpanLLMRequest = qwenPrefix + "llm_request"
	// qwenSpanTool is one tool call, from scheduling to result.
	qwenSpanTool = qwenPrefix + "tool"
	// qwenSpanToolExecution is the execution phase of a tool call, a child of qwenSpanTool.
	qwenSpanToolExecution = qwenPrefix + "tool.execution"

	// attrGenAICallID is the semconv call ID of qwenSpanTool.
	attrGenAICallID = "gen_ai.tool.call.id"
	// attrFailureKind is qwenSpanTool's kind of failure ("cancelled": the user or a signal
	// stopped the call).
	attrFailureKind = "tool.failure_kind"
	// attrExecutionStatus is qwenSpanToolExecution's status ("cancelled" when the user or a
	// signal stopped the tool, as its tool span's tool.failure_kind says).
	attrExecutionStatus = "execution_status"
	// attrQwenCallID is the call ID of qwenSpanToolExecution.
	attrQwenCallID = "tool.call_id"

	qwenEventToolCall   = qwenPrefix + "tool_call"
	qwenEventAPIRequest = qwenPrefix + "api_request"
	// qwenEventSessionEnd is Qwen Code's last event of a session (no prefix).
	qwenEventSessionEnd = "session.end"
	// attrCallID, attrStatus and attrFunctionName are the call ID, status ("success",
	// "error", "cancelled") and tool of a qwenEventToolCall.
	attrCallID       = "call_id"
	attrStatus       = "status"
	attrFunctionName = "function_name"
	// attrSubagentName names the sub-agent of a qwenEventAPIRequest; empty or absent for the
	// main agent's requests.
	attrSubagentName = "subagent_name"
)

// qwenLogBoundaryStep is the Step of the boundary of a qwen-code.api_request: ungrouped, so
// it closes the calls any earlier model request of the session announced.
const qwenLogBoundaryStep = "qwen_api_request"

// ExtractQwenSpan appends to f the tool calls a Qwen Code span announces or resolves, and
// reports whether the span is one the dialect reads:
//
//   - qwen-code.llm_request: a GenAI chat span, read as the genai dialect reads one: its start
//     a step boundary, each tool_call part of gen_ai.output.messages a tool_use at its end,
//     both grouped by its parent span; each tool_call_response part of
//     gen_ai.input.messages (the history the request sent) an echo at its start;
//   - qwen-code.tool: gen_ai.tool.call.id and gen_ai.tool.name, a tool_result at the span's
//     end; a KindAbort when tool.failure_kind is "cancelled". A failed tool (another
//     failure kind) is a result.
//
// qwen-code.tool.execution is read by ExtractQwenExecutionSpan.
func ExtractQwenSpan(span ptrace.Span, f *dialect.Found) bool {
	switch span.Name() {
	case qwenSpanLLMRequest:
		return genai.ExtractSpan(span, f) != genai.Other
	case qwenSpanTool:
		attrs := span.Attributes()
		kind := pairing.KindResult
		if v, ok := fields.Get(attrs, attrFailureKind); ok && v.AsString() == statusCancelled {
			kind = pairing.KindAbort
		}
		addSpanCall(span, f, kind, attrGenAICallID)
		return true
	}
	return false
}

// ExtractQwenExecutionSpan appends to f the companion result (pairing.KindCompanion) a
// qwen-code.tool.execution span is (tool.call_id, gen_ai.tool.name, at the span's end), a
// pairing.KindAbort when its execution_status is "cancelled", and reports whether the span is
// one. It is a source of its own beside its parent qwen-code.tool span: its first record of a
// call gets the outcome its own content shows (specification section 2).
func ExtractQwenExecutionSpan(span ptrace.Span, f *dialect.Found) bool {
	if span.Name() != qwenSpanToolExecution {
		return false
	}
	kind := pairing.KindCompanion
	if v, ok := fields.Get(span.Attributes(), attrExecutionStatus); ok && v.AsString() == statusCancelled {
		// The execution reports its own abort (specification section 2), as the tool span
		// of the same call does.
		kind = pairing.KindAbort
	}
	addSpanCall(span, f, kind, attrQwenCallID)
	return true
}

// addSpanCall appends an item of kind for the call idKey of span names, its tool
// gen_ai.tool.name, at the span's end; a missing or wrong call ID is skipped and reported.
func addSpanCall(span ptrace.Span, f *dialect.Found, kind pairing.Kind, idKey string) {
	attrs := span.Attributes()
	id, ok := f.CallID(attrs, idKey)
	if !ok {
		return
	}
	tool := ""
	if v, ok := fields.Get(attrs, attrToolName); ok {
		tool = v.AsString()
	}
	f.Add(kind, id, tool, int64(span.EndTimestamp()))
}

// ExtractQwenLog appends to f the tool calls a Qwen Code log event resolves or closes, and
// reports whether the record is one the dialect reads (its name the OTLP EventName, else the
// event.name attribute):
//
//   - qwen-code.tool_call: call_id and function_name, a tool_result at the record's time; a
//     KindAbort when status is "cancelled";
//   - qwen-code.api_request: a step boundary at the record's time when subagent_name is
//     absent or empty (a sub-agent's request is claimed and closes nothing);
//   - session.end: a session end at the record's time, closing every call of the session
//     still pending.
//
// The record's time is its timestamp, else its observed time, else event.timestamp.
func ExtractQwenLog(lr plog.LogRecord, f *dialect.Found) bool {
	attrs := lr.Attributes()
	name := dialect.EventName(lr)
	if name == "" {
		return false
	}
	switch name {
	case qwenEventToolCall:
		kind := pairing.KindResult
		if v, ok := fields.Get(attrs, attrStatus); ok && v.AsString() == statusCancelled {
			kind = pairing.KindAbort
		}
		f.AddLogCall(lr, kind, attrCallID, attrFunctionName)
	case qwenEventAPIRequest:
		if v, ok := fields.Get(attrs, attrSubagentName); !ok || v.AsString() == "" {
			f.AddStep(pairing.KindBoundary, "", "", dialect.LogTime(lr), "", "", qwenLogBoundaryStep)
		}
	case qwenEventSessionEnd:
		f.Add(pairing.KindSessionEnd, "", "", dialect.LogTime(lr))
	default:
		return false
	}
	return true
}
