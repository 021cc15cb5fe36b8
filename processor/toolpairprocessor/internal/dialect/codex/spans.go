// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package codex

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// Keys of the fields that tell a Codex tool span, read in the span's one pass (fields.Record).
var (
	fieldToolName = fields.Register("tool_name")
	fieldCallID   = fields.Register("call_id")
)

// ExtractSpan appends to f the tool_result a Codex tool span is, and reports whether the span
// is one. Codex (0.169, trace_exporter in [otel]) names the span that dispatches a tool call
// after the tool ("exec_command") and gives it the attributes
//
//   - call_id (string): the call ID;
//   - tool_name (string): equal to the span name, which is what tells this span apart from
//     the other spans carrying call_id (guardian_scoring_observation,
//     unified_exec.exec_command);
//   - aborted (bool; "true" accepted as well): the turn was aborted during the call (Codex's
//     SIGINT handling); the result is then a KindAbort and the call is interrupted with reason
//     aborted, as it is when dialect.Cancelled says the span reports its call's cancellation;
//   - conversation.id: the scope, read through scope_attributes.
//
// The result time is the span's end. A tool span whose call_id is not a string or empty is
// skipped and reported as malformed.
func ExtractSpan(span ptrace.Span, f *dialect.Found) bool {
	attrs := span.Attributes()
	// From the span's one pass over its attributes (fields.Record), shared with the other
	// dialects: most spans are not Codex's.
	a := f.Attrs(attrs)
	tool, ok := a.Value(fieldToolName)
	if !ok || tool.Type() != pcommon.ValueTypeStr || tool.Str() == "" || tool.Str() != span.Name() {
		return false
	}
	if !a.Has(fieldCallID) {
		return false
	}
	id, ok := f.CallID(attrs, "call_id")
	if !ok {
		return true
	}
	kind := dialect.ResultKind(span)
	if v, ok := fields.Get(attrs, "aborted"); ok && v.AsString() == "true" {
		kind = pairing.KindAbort
	}
	f.Add(kind, id, tool.Str(), int64(span.EndTimestamp()))
	return true
}
