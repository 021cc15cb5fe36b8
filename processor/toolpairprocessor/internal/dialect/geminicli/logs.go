// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package geminicli

import (
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/genaievents"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// Log event names and attributes read (Gemini CLI 0.61.0; the event name is the event.name
// attribute, Gemini CLI leaves the OTLP EventName empty).
const (
	// attrInstallationID is one of the attributes Gemini CLI adds to every log event it
	// writes (with session.id and interactive): it tells Gemini CLI's operation details
	// events apart from those of other GenAI instrumentations.
	attrInstallationID = "installation.id"
	// attrRole is the LLM role of a gemini_cli.api_request: "main" for the main agent's
	// requests, "subagent" and "utility_*" for the others.
	attrRole = "role"

	eventAPIRequest = "gemini_cli.api_request"
	roleMain        = "main"
)

// Steps of log records: all in the main agent's group "", which is also the group of root
// llm_call spans, so that a log boundary closes a call a span announced and the reverse.
var (
	logUseStep      = pairing.GroupStep("", "operation_details")
	logBoundaryStep = pairing.GroupStep("", "api_request")
)

// ExtractLog appends to f the tool calls a Gemini CLI log record announces or repeats, and
// reports whether the record is one of Gemini CLI's that the dialect reads:
//
//   - gemini_cli.api_request: a step boundary at the record's time when its role is "main"
//     or absent (a request of a sub-agent or a utility request, such as the next-speaker
//     check, is claimed and closes nothing);
//   - gen_ai.client.inference.operation.details carrying installation.id: each tool_call
//     part of gen_ai.output.messages is a tool_use at the record's time, each
//     tool_call_response part of gen_ai.input.messages an echo (package genaievents reads
//     them; a details record without installation.id is left to genai_events).
//
// The event name is the OTLP EventName, else the event.name attribute (a string).
// gemini_cli.tool_call records carry no call ID (only the trace of the schedule_tool_calls
// span) and are not read. The record's time is its timestamp, else its observed time, else
// event.timestamp.
func ExtractLog(lr plog.LogRecord, f *dialect.Found) bool {
	attrs := lr.Attributes()
	name := dialect.EventName(lr)
	if name == "" {
		return false
	}
	switch name {
	case eventAPIRequest:
		if role, ok := fields.Get(attrs, attrRole); !ok || role.AsString() == roleMain {
			f.AddStep(pairing.KindBoundary, "", "", dialect.LogTime(lr), "", "", logBoundaryStep)
		}
		return true
	case genaievents.EventOperationDetails:
		if _, ok := fields.Get(attrs, attrInstallationID); !ok {
			return false
		}
		genaievents.ExtractDetails(attrs, dialect.LogTime(lr), logUseStep, f)
		return true
	}
	return false
}
