// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package claudecode is the dialect of Claude Code's log events (Claude Code 2.1, exported
// with CLAUDE_CODE_ENABLE_TELEMETRY=1 and OTEL_LOGS_EXPORTER=otlp).
//
// Claude Code names each event in three ways, all accepted: the log body
// ("claude_code.tool_result"), the attribute event.name ("tool_result", without the prefix),
// and, in newer exporters, the OTLP EventName field ("claude_code.tool_result").
//
// Fields read:
//
//   - claude_code.tool_decision: tool_use_id (string, the Anthropic tool_use.id), tool_name,
//     decision ("accept" announces the call: a tool_use; "reject" refuses it). It is emitted
//     when the call is approved, before execution.
//   - claude_code.tool_result: tool_use_id, tool_name (a tool_result; a KindAbort when
//     dialect.Cancelled says its attributes report the call's cancellation). Its success and
//     duration_ms arrive as strings and are not needed for pairing.
//   - time: the record's time, else its observed time, else its event.timestamp attribute
//     (ISO 8601).
//   - trace ID (set when beta tracing is on: the interaction's trace): a tool_decision's
//     call is grouped by it (SessionGroup), so the claude_code.interaction span's end
//     closes it.
//
// claude_code.api_request is not read: it is not a step boundary here. Sub-agents (the Task
// tool) share their parent's session.id and their requests carry no agent ID, so a
// sub-agent's api_request would close the parent's pending Task call.
//
// A record whose tool_use_id is missing, empty or not a string is skipped and reported as
// malformed.
package claudecode

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
const Name = "claude_code"

const (
	prefix        = "claude_code."
	eventDecision = "tool_decision"
	eventResult   = "tool_result"
)

// eventName returns the Claude Code event name of a record without its prefix, or "".
func eventName(lr plog.LogRecord) string {
	if n := lr.EventName(); strings.HasPrefix(n, prefix) {
		return n[len(prefix):]
	}
	if b := lr.Body(); b.Type() == pcommon.ValueTypeStr && strings.HasPrefix(b.Str(), prefix) {
		return b.Str()[len(prefix):]
	}
	return ""
}

// Keys of the fields of Claude Code's events, read in the record's one pass (fields.Record).
var (
	keyEventName = fields.Register("event.name")
	keyToolUseID = fields.Register(attrToolUseID)
	keyToolName  = fields.Register("tool_name")
	keyDecision  = fields.Register("decision")
)

// ExtractLog appends to f the tool call a Claude Code log record announces, refuses or
// resolves, and reports whether the record is a Claude Code tool event.
func ExtractLog(lr plog.LogRecord, f *dialect.Found) bool {
	name := eventName(lr)
	attrs := lr.Attributes()
	if name == "" {
		// The event.name attribute alone is too generic to claim a record; require the
		// Claude Code tool_use_id with it.
		a := f.Attrs(attrs)
		if v, ok := a.Value(keyEventName); ok && a.Has(keyToolUseID) {
			name = v.AsString()
		}
	}
	if name != eventDecision && name != eventResult {
		return false
	}
	// The fields of the call, from the record's one pass over its attributes.
	a := f.Attrs(attrs)
	id, idOK := a.Value(keyToolUseID)
	tool, toolOK := a.Value(keyToolName)
	var kind pairing.Kind
	switch name {
	case eventDecision:
		kind = pairing.KindUse
		if decision, ok := a.Value(keyDecision); ok && decision.AsString() == "reject" {
			kind = pairing.KindReject
		}
	case eventResult:
		kind = pairing.KindResult
		if dialect.CancelledIn(a, ptrace.StatusCodeUnset, "") {
			kind = pairing.KindAbort
		}
	}
	if f.AddLogCallValues(lr, kind, id, idOK, tool, toolOK) && kind == pairing.KindUse {
		f.Items[len(f.Items)-1].Step = SessionGroup(lr.TraceID())
	}
	return true
}
