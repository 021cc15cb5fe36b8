// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package codex is the dialect of the OpenAI Codex CLI's log events (Codex 0.169, exported
// through the [otel] section of its config.toml).
//
// Codex names its events by the attribute event.name ("codex.tool_decision"); the log body
// is the constant "event" and the OTLP EventName holds a source location, so neither is
// read. Fields read:
//
//   - codex.tool_decision: call_id (string, the OpenAI function call ID), tool_name,
//     decision ("approved" and other values announce the call: a tool_use; "denied" and
//     "abort" refuse it);
//   - codex.tool_result: call_id, tool_name (a tool_result, or a KindAbort when
//     dialect.Cancelled says its attributes report the call's cancellation; its duration_ms
//     and success arrive as strings and are not needed for pairing);
//   - time: Codex sends timeUnixNano 0, so the observed time is used, else the
//     event.timestamp attribute;
//   - conversation.id (the scope) is read through scope_attributes;
//   - codex.api_request: a step boundary at its time (logged when the response of a model
//     request starts). It closes the calls of the same turn (trace ID) announced before it
//     and still pending: the calls of its own response are decided after it.
//
// A record whose call_id is missing, empty or not a string is skipped and reported as
// malformed.
package codex

import (
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// Name is the dialect's configuration name.
const Name = "codex"

// ExtractLog appends to f the tool call a Codex log record announces, refuses or resolves,
// and reports whether the record is a Codex tool event.
func ExtractLog(lr plog.LogRecord, f *dialect.Found) bool {
	attrs := lr.Attributes()
	ev, ok := fields.Get(attrs, "event.name")
	if !ok {
		return false
	}
	var kind pairing.Kind
	switch ev.Str() {
	case "codex.tool_decision":
		kind = pairing.KindUse
		if d, ok := fields.Get(attrs, "decision"); ok {
			switch d.AsString() {
			case "denied", "abort":
				kind = pairing.KindReject
			}
		}
	case "codex.tool_result":
		kind = pairing.KindResult
		if dialect.Cancelled(attrs, ptrace.StatusCodeUnset, "") {
			kind = pairing.KindAbort
		}
	case "codex.api_request":
		f.AddStep(pairing.KindBoundary, "", "", dialect.LogTime(lr), "", "", step(lr, stepRequest))
		return true
	default:
		return false
	}
	if f.AddLogCall(lr, kind, "call_id", "tool_name") && kind == pairing.KindUse {
		f.Items[len(f.Items)-1].Step = step(lr, stepDecision)
	}
	return true
}

// Steps of Codex records. Codex logs a model request (codex.api_request) when its response
// starts, and decides the calls of that response while it streams, so a request's calls are
// always announced after its own api_request: every call pending at a later api_request of
// the same turn belongs to an earlier request. The calls therefore all share one step, which
// no api_request has.
const (
	stepDecision = "tool_decision"
	stepRequest  = "api_request"
)

// step returns the Step of a Codex record of kind: grouped by the record's trace ID (Codex's
// turn) when it has one, so only the requests of the same turn close its calls.
func step(lr plog.LogRecord, kind string) string {
	if t := lr.TraceID(); !t.IsEmpty() {
		return pairing.GroupStep(t.String(), kind)
	}
	return kind
}
