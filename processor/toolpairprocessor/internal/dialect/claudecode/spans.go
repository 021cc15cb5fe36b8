// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// Span names of Claude Code's beta tracing (Claude Code 2.1, CLAUDE_CODE_ENABLE_TELEMETRY=1,
// CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1, OTEL_TRACES_EXPORTER=otlp). One trace per user
// prompt, rooted at the interaction span.
const (
	// SpanInteraction is the root span of one user interaction (a turn).
	SpanInteraction = "claude_code.interaction"
	// SpanLLMRequest is one model request, a child of the interaction.
	SpanLLMRequest = "claude_code.llm_request"
	// SpanTool is one tool call, from permission check to result, a child of the
	// interaction.
	SpanTool = "claude_code.tool"
	// SpanToolExecution is the execution phase of a tool call, a child of SpanTool.
	SpanToolExecution = "claude_code.tool.execution"
)

// Attribute names of the beta spans; the semconv copies are read when Claude Code's own are
// missing.
const (
	attrToolUseID     = "tool_use_id"
	attrToolName      = "tool_name"
	attrGenAICallID   = "gen_ai.tool.call.id"
	attrGenAIToolName = "gen_ai.tool.name"
)

// SessionGroup returns the step group of Claude Code records of one interaction: its trace ID
// in hex. Sub-agents (the Task tool) share their parent's session.id, so the interaction's
// end must only close the calls of its own trace; the tool_decision log events carry the
// trace ID of the interaction they belong to. It returns "" for an empty trace ID.
func SessionGroup(traceID pcommon.TraceID) string {
	if traceID.IsEmpty() {
		return ""
	}
	return pairing.GroupStep(traceID.String(), "")
}

// ExtractSpan appends to f what a Claude Code beta span says about tool calls, and reports
// whether the span is one this dialect reads:
//
//   - claude_code.tool: a tool_result of the call tool_use_id (else gen_ai.tool.call.id),
//     tool tool_name (else gen_ai.tool.name), at the span's end; a KindAbort when
//     dialect.Cancelled says the span reports its call's cancellation;
//   - claude_code.interaction: a session end at the span's end, grouped by the trace ID (see
//     SessionGroup): the calls of the interaction still pending then were never answered;
//   - claude_code.llm_request: recognised, nothing to pair (it is an anchor for synthetic
//     spans; Claude Code's model requests are not step boundaries, see docs/dialects/claude_code.md).
//
// claude_code.tool.execution is read by ExtractExecutionSpan.
func ExtractSpan(span ptrace.Span, f *dialect.Found) bool {
	switch span.Name() {
	case SpanTool:
		extractToolSpan(span, dialect.ResultKind(span), f)
		return true
	case SpanInteraction:
		if g := SessionGroup(span.TraceID()); g != "" {
			f.AddStep(pairing.KindSessionEnd, "", "", int64(span.EndTimestamp()), "", "", g)
		}
		return true
	case SpanLLMRequest:
		return true
	}
	return false
}

// ExtractExecutionSpan appends to f the companion result (pairing.KindCompanion) a
// claude_code.tool.execution span is (tool_use_id, else gen_ai.tool.call.id; at the span's
// end, whatever it says of a cancellation), and reports whether the span is one. Its parent
// claude_code.tool span is the call's result record: whatever the order the two arrive in,
// the tool span is the one marked paired and this one a kept duplicate (it resolves the call
// itself only when the tool span does not come within orphan_grace).
func ExtractExecutionSpan(span ptrace.Span, f *dialect.Found) bool {
	if span.Name() != SpanToolExecution {
		return false
	}
	extractToolSpan(span, pairing.KindCompanion, f)
	return true
}

func extractToolSpan(span ptrace.Span, kind pairing.Kind, f *dialect.Found) {
	attrs := span.Attributes()
	key := attrToolUseID
	if _, ok := fields.Get(attrs, key); !ok {
		if _, ok := fields.Get(attrs, attrGenAICallID); ok {
			key = attrGenAICallID
		}
	}
	id, ok := f.CallID(attrs, key)
	if !ok {
		return
	}
	tool := ""
	if v, ok := fields.Get(attrs, attrToolName); ok {
		tool = v.AsString()
	} else if v, ok := fields.Get(attrs, attrGenAIToolName); ok {
		tool = v.AsString()
	}
	f.Add(kind, id, tool, int64(span.EndTimestamp()))
}
