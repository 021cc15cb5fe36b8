// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package aisdk is the dialect of the Vercel AI SDK's own telemetry spans (the ai.* spans
// that generateText and streamText make when experimental_telemetry is enabled, in the
// "ai" package v4 to v6; checked against ai 6.0.326 and the SDK's telemetry documentation).
// AI SDK 7 writes OTel GenAI semantic-convention spans instead (through @ai-sdk/otel), which
// the genai dialect reads.
//
// Every span is named after its operation, which it also records in ai.operationId; a span
// is read only when both agree, and a span whose name does not start with "ai." is not
// looked into at all. Fields read:
//
//   - ai.generateText.doGenerate / ai.streamText.doStream (one provider call, a step): its
//     start is a step boundary; each {"toolCallId","toolName"} of ai.response.toolCalls (a
//     JSON array string, written when the response is complete) is a tool_use at the span's
//     end;
//   - ai.toolCall: ai.toolCall.id (the call ID) and ai.toolCall.name: a tool_result at the
//     span's end (a tool that threw is a result with an error), or a KindAbort when
//     dialect.Cancelled says the span reports its call's cancellation (error.type,
//     tool.failure_kind, status, or status Error with a message saying aborted or cancelled);
//   - ai.generateText / ai.streamText (the whole run): its end is a session end.
//
// Steps are grouped by the run: a provider call's Step is its own span ID grouped by its
// parent span ID (the run's span, of which it is a child), and a run's session end is
// grouped by the run's span ID. A run nested inside a tool (an agent used as a tool) has a
// span of its own, so its steps and its end never close the calls of the outer run.
//
// The SDK sets no session ID: unless the application adds one of scope_attributes, a
// call's scope is its trace, which is the run's. A call ID that is missing, empty or not a
// string is skipped and reported as malformed, and so is a toolCalls attribute that is not
// a JSON array of objects.
package aisdk

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/readonly"
)

// Name is the dialect's configuration name.
const Name = "ai_sdk"

// Attributes and operation IDs read (AI SDK telemetry documentation, ai 4.x to 6.x).
const (
	attrOperationID   = "ai.operationId"
	attrToolCalls     = "ai.response.toolCalls"
	attrToolCallID    = "ai.toolCall.id"
	attrToolCallName  = "ai.toolCall.name"
	opGenerateText    = "ai.generateText"
	opStreamText      = "ai.streamText"
	opDoGenerate      = "ai.generateText.doGenerate"
	opDoStream        = "ai.streamText.doStream"
	opToolCall        = "ai.toolCall"
	keyToolCallIDJSON = "toolCallId"
	keyToolNameJSON   = "toolName"
	// spanPrefix starts the name of every span of the SDK's telemetry.
	spanPrefix = "ai."
)

// ExtractSpan appends to f the tool calls an AI SDK span announces or resolves, the step
// boundary a provider call is, or the session end a run's span is, and reports whether the
// span is one of those. Other ai.* spans (generateObject, embed, ...) are not claimed.
func ExtractSpan(span ptrace.Span, f *dialect.Found) bool {
	// The SDK names each span after its operation ID: a span whose name does not start with
	// "ai." costs a prefix comparison, not an attribute lookup.
	name := span.Name()
	if !strings.HasPrefix(name, spanPrefix) {
		return false
	}
	attrs := span.Attributes()
	op, ok := fields.Get(attrs, attrOperationID)
	if !ok || op.Type() != pcommon.ValueTypeStr || op.Str() != name {
		return false
	}
	switch name {
	case opDoGenerate, opDoStream:
		step := pairing.GroupStep(span.ParentSpanID().String(), span.SpanID().String())
		f.AddStep(pairing.KindBoundary, "", "", int64(span.StartTimestamp()), "", "", step)
		if v, ok := fields.Get(attrs, attrToolCalls); ok {
			end := int64(span.EndTimestamp())
			scanToolCalls(v, f, func(id, name string) {
				f.AddStep(pairing.KindUse, id, name, end, "", "", step)
			})
		}
	case opToolCall:
		id, ok := f.CallID(attrs, attrToolCallID)
		if !ok {
			return true
		}
		name := ""
		if v, ok := fields.Get(attrs, attrToolCallName); ok {
			name = v.AsString()
		}
		f.Add(dialect.ResultKind(span), id, name, int64(span.EndTimestamp()))
	case opGenerateText, opStreamText:
		f.AddStep(pairing.KindSessionEnd, "", "", int64(span.EndTimestamp()), "", "",
			pairing.GroupStep(span.SpanID().String(), ""))
	default:
		return false
	}
	return true
}

// scanToolCalls calls fn for each entry of ai.response.toolCalls, a JSON array of
// {"toolCallId","toolName",...} (the arguments, "args" in v4 and "input" from v5, are not
// read). Entries that are not objects are reported once per array as ReasonInvalidType;
// a value that is not a JSON array string as ReasonInvalidType or ReasonInvalidJSON.
func scanToolCalls(v pcommon.Value, f *dialect.Found, fn func(id, name string)) {
	if v.Type() != pcommon.ValueTypeStr {
		f.Skip(dialect.ReasonInvalidType)
		return
	}
	f.EachArrayObject(readonly.Bytes(v.Str()), func(el []byte) {
		if id, ok := f.JSONCallID(el, keyToolCallIDJSON); ok {
			fn(id, dialect.JSONString(el, keyToolNameJSON))
		}
	})
}
