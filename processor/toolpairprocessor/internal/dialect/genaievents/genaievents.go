// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package genaievents is the dialect of the OpenTelemetry GenAI semantic-convention events,
// log records that carry the chat history of model calls:
//
//   - the per-message events of semantic conventions v1.28 to v1.36 (as the Python
//     opentelemetry-instrumentation-openai-v2 and similar instrumentations emit them):
//     gen_ai.choice (the model's response: tool_calls announce calls), gen_ai.assistant.message
//     (an earlier response repeated as history) and gen_ai.tool.message (a tool's result
//     repeated as history);
//   - the event gen_ai.client.inference.operation.details of v1.37+ (written by Gemini CLI
//     0.61, among others), whose attributes gen_ai.output.messages and gen_ai.input.messages
//     hold the whole exchange.
//
// The event name is the OTLP EventName field, else the event.name attribute, else a string
// body equal to one of the names above. Fields read:
//
//   - gen_ai.choice and gen_ai.assistant.message: the body's tool_calls[] (at the body's top
//     level, or under message as gen_ai.choice nests it): each {"id", "function":{"name"}} is a
//     tool_use at the record's time. The body is a map, or a JSON string.
//   - gen_ai.tool.message: the body's id (the call ID) is an echo of the tool's result
//     (pairing.KindEcho): these events repeat the chat history at every later model request,
//     and the tool's own record (an execute_tool span in most SDKs) is the result record.
//     An echo resolves its call when the call is still pending (the tool left no record of
//     its own) and is otherwise ignored; it is never held, never an orphan, never a
//     duplicate, so the history of later requests is never marked or dropped.
//   - gen_ai.client.inference.operation.details: each {"type":"tool_call","id","name"} part of
//     gen_ai.output.messages is a tool_use at the record's time; each
//     {"type":"tool_call_response","id"} part of gen_ai.input.messages is an echo (the input
//     messages are the history again). Read through package messages, so the messages are
//     not decoded beyond the parts' type, id and name.
//   - time: the record's time, else its observed time, else event.timestamp.
//
// Gemini CLI call IDs: Gemini's API gives calls no ID; Gemini CLI makes one,
// "<tool>_<epoch ms>_<n>", sends it to the model and writes it into the input messages, but
// writes "<tool>__<that ID>" into gen_ai.output.messages (and its spans and transcript). A
// tool_call part whose ID starts with its own name followed by "__" is therefore read
// without that prefix, so that the output and the later input of one call agree.
//
// The same events recorded as span events (no body: the attributes stand for it) are read by
// package genai on the spans it reads, through ExtractChoiceEvent for gen_ai.choice.
//
// A tool call whose ID is missing, null, empty or not a string is skipped and reported as
// malformed, and so is a body or attribute that is not valid JSON or of the wrong type.
package genaievents

import (
	"errors"
	"strings"

	"github.com/buger/jsonparser"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/messages"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/readonly"
)

// Name is the dialect's configuration name.
const Name = "genai_events"

// Event names read.
const (
	EventChoice           = "gen_ai.choice"
	EventAssistantMessage = "gen_ai.assistant.message"
	EventToolMessage      = "gen_ai.tool.message"
	EventOperationDetails = "gen_ai.client.inference.operation.details"
)

const (
	attrInputMessages  = "gen_ai.input.messages"
	attrOutputMessages = "gen_ai.output.messages"
)

// eventName returns the record's event name, or "" when it is none of the names read.
func eventName(lr plog.LogRecord) string {
	name := dialect.EventName(lr)
	if name == "" && lr.Body().Type() == pcommon.ValueTypeStr {
		name = lr.Body().Str()
	}
	switch name {
	case EventChoice, EventAssistantMessage, EventToolMessage, EventOperationDetails:
		return name
	}
	return ""
}

// ExtractLog appends to f the tool calls a GenAI event announces or echoes, and reports
// whether the record is one of the events read.
func ExtractLog(lr plog.LogRecord, f *dialect.Found) bool {
	name := eventName(lr)
	if name == "" {
		return false
	}
	t := dialect.LogTime(lr)
	body := lr.Body()
	if body.Type() == pcommon.ValueTypeStr && body.Str() == name {
		body = pcommon.NewValueEmpty() // the body names the event and holds no payload
	}
	switch name {
	case EventOperationDetails:
		ExtractDetails(lr.Attributes(), t, "", f)
	case EventToolMessage:
		extractToolMessage(body, t, f)
	default:
		extractToolCalls(body, t, "", f)
	}
	return true
}

// ExtractDetails appends to f the tool calls of the attributes of a
// gen_ai.client.inference.operation.details record at time t: a use for each tool_call part
// of gen_ai.output.messages (its ID through WireID), with the Step step, and an echo for each
// tool_call_response part of gen_ai.input.messages.
func ExtractDetails(attrs pcommon.Map, t int64, step string, f *dialect.Found) {
	if v, ok := fields.Get(attrs, attrOutputMessages); ok {
		f.SkipHistory(messages.ScanValue(v, func(p messages.Part) {
			if p.Type != messages.ToolCall {
				return
			}
			if p.IDState != messages.IDPresent {
				f.Skip(p.IDState.String())
				return
			}
			f.AddStep(pairing.KindUse, UseID(p.ID, p.Name, f), p.Name, t, "", "", step)
		}))
	}
	if v, ok := fields.Get(attrs, attrInputMessages); ok {
		f.SkipHistory(messages.ScanValue(v, func(p messages.Part) {
			if p.Type != messages.ToolCallResponse {
				return
			}
			if p.IDState != messages.IDPresent {
				f.Skip(p.IDState.String())
				return
			}
			f.Add(pairing.KindEcho, p.ID, "", t)
		}))
	}
}

// UseID returns WireID(id, name), the ID of a use item, and sets f.ToolPrefixedIDs when it
// removed a prefix: the record shows its calls in Gemini CLI's telemetry form.
func UseID(id, name string, f *dialect.Found) string {
	w := WireID(id, name)
	if len(w) != len(id) {
		f.ToolPrefixedIDs = true
	}
	return w
}

// WireID returns the call ID a model saw for the tool call id of tool name: id without a
// leading "<name>__" (Gemini CLI's telemetry form), else id unchanged.
func WireID(id, name string) string {
	if name != "" && len(id) > len(name)+2 && strings.HasPrefix(id, name) && strings.HasPrefix(id[len(name):], "__") {
		return id[len(name)+2:]
	}
	return id
}

// extractToolMessage reads the call ID of a gen_ai.tool.message body.
func extractToolMessage(body pcommon.Value, t int64, f *dialect.Found) {
	switch body.Type() {
	case pcommon.ValueTypeMap:
		if id, ok := f.CallID(body.Map(), "id"); ok {
			f.Add(pairing.KindEcho, id, "", t)
		}
	case pcommon.ValueTypeStr:
		data, ok := jsonBody(body.Str(), f)
		if !ok {
			return
		}
		if id, ok := jsonID(data, f, "id"); ok {
			f.Add(pairing.KindEcho, id, "", t)
		}
	default:
		f.Skip(dialect.ReasonMissingCallID)
	}
}

// extractToolCalls reads the tool_calls of a gen_ai.choice or gen_ai.assistant.message body,
// at its top level or under message: each a use at time t with the Step step.
func extractToolCalls(body pcommon.Value, t int64, step string, f *dialect.Found) {
	switch body.Type() {
	case pcommon.ValueTypeMap:
		extractToolCallsMap(body.Map(), t, step, f)
	case pcommon.ValueTypeStr:
		data, ok := jsonBody(body.Str(), f)
		if !ok {
			return
		}
		extractToolCallsJSON(data, t, step, f)
	}
}

// extractToolCallsMap reads the tool_calls of a map (a body, or a span event's attributes),
// at its top level or under message.
func extractToolCallsMap(m pcommon.Map, t int64, step string, f *dialect.Found) {
	calls, ok := fields.Get(m, "tool_calls")
	if !ok {
		if msg, found := fields.Get(m, "message"); found && msg.Type() == pcommon.ValueTypeMap {
			calls, ok = fields.Get(msg.Map(), "tool_calls")
		}
	}
	if !ok || calls.Type() == pcommon.ValueTypeEmpty {
		return // a text response
	}
	if calls.Type() != pcommon.ValueTypeSlice {
		f.Skip(dialect.ReasonInvalidType)
		return
	}
	s := calls.Slice()
	for i := 0; i < s.Len(); i++ {
		c := s.At(i)
		if c.Type() != pcommon.ValueTypeMap {
			f.Skip(dialect.ReasonInvalidType)
			continue
		}
		id, ok := f.CallID(c.Map(), "id")
		if !ok {
			continue
		}
		name := ""
		if fn, ok := fields.Get(c.Map(), "function"); ok && fn.Type() == pcommon.ValueTypeMap {
			if n, ok := fields.Get(fn.Map(), "name"); ok {
				name = n.AsString()
			}
		}
		f.AddStep(pairing.KindUse, id, name, t, "", "", step)
	}
}

// extractToolCallsJSON reads the tool_calls of a JSON object, at its top level or under
// message.
func extractToolCallsJSON(data []byte, t int64, step string, f *dialect.Found) {
	calls, dt, _, err := jsonparser.Get(data, "tool_calls")
	if errors.Is(err, jsonparser.KeyPathNotFoundError) {
		calls, dt, _, err = jsonparser.Get(data, "message", "tool_calls")
	}
	switch {
	case errors.Is(err, jsonparser.KeyPathNotFoundError) || dt == jsonparser.Null:
		return
	case err != nil:
		f.Skip(dialect.ReasonInvalidJSON)
		return
	case dt != jsonparser.Array:
		f.Skip(dialect.ReasonInvalidType)
		return
	}
	_, err = jsonparser.ArrayEach(calls, func(c []byte, dt jsonparser.ValueType, _ int, e error) {
		if e != nil || dt != jsonparser.Object {
			f.Skip(dialect.ReasonInvalidType)
			return
		}
		id, ok := jsonID(c, f, "id")
		if !ok {
			return
		}
		name, _ := jsonparser.GetString(c, "function", "name")
		f.AddStep(pairing.KindUse, id, name, t, "", "", step)
	})
	if err != nil {
		f.Skip(dialect.ReasonInvalidJSON)
	}
}

// ExtractChoiceEvent appends to f the tool calls of the attributes attrs of a gen_ai.choice
// span event (a span event has attributes and no body: the attributes stand for the body of
// the log event), each a use at time t with the Step step:
//
//   - message a JSON string holding an object (the OpenAI message shape): its tool_calls, at
//     its top level or under message, as in a string body ({"id", "function":{"name"}});
//   - message a JSON string holding an array of content blocks, as AWS Strands Agents TS
//     1.19.0 writes it on its chat spans ([{"type":"toolUse","name","toolUseId","input"}]; a
//     Bedrock Converse {"toolUse":{"toolUseId","name"}} block is read the same): each toolUse
//     block's toolUseId is a use, other blocks ({"text"}) are skipped;
//   - message any other string: a text answer (Strands' invoke_agent span writes the final
//     text so), nothing announced;
//   - message absent or a map: the attributes are read as a map body (tool_calls at the top
//     level, or under the message map).
//
// A message of another type is skipped as ReasonInvalidType; unreadable JSON (a truncated
// message) as ReasonInvalidJSON; a toolUse block or tool call without a string call ID as
// the ID's reason (dialect.Found.JSONCallID). The JSON is read by path (the first of repeated
// keys).
func ExtractChoiceEvent(attrs pcommon.Map, t int64, step string, f *dialect.Found) {
	msg, ok := fields.Get(attrs, "message")
	switch {
	case !ok || msg.Type() == pcommon.ValueTypeMap:
		extractToolCallsMap(attrs, t, step, f)
		return
	case msg.Type() != pcommon.ValueTypeStr:
		f.Skip(dialect.ReasonInvalidType)
		return
	}
	s := strings.TrimSpace(msg.Str())
	switch {
	case s == "":
	case s[0] == '{':
		if data, ok := jsonBody(s, f); ok {
			extractToolCallsJSON(data, t, step, f)
		}
	case blockArray(s):
		f.EachArrayObject(readonly.Bytes(s), func(block []byte) {
			extractToolUse(block, t, step, f)
		})
	}
}

// blockArray reports whether s, trimmed, starts as a JSON array of objects or an empty
// array ("[{", "[]", spaces allowed between): text such as "[1] done" is not one.
func blockArray(s string) bool {
	if s[0] != '[' {
		return false
	}
	rest := strings.TrimLeft(s[1:], " \t\r\n")
	return rest != "" && (rest[0] == '{' || rest[0] == ']')
}

// extractToolUse reads one content block of a Strands message: {"type":"toolUse",
// "toolUseId","name"}, or {"toolUse":{"toolUseId","name"}}. Other blocks are skipped.
func extractToolUse(block []byte, t int64, step string, f *dialect.Found) {
	if inner, dt, _, err := jsonparser.Get(block, "toolUse"); err == nil && dt == jsonparser.Object {
		block = inner
	} else if typ, err := jsonparser.GetUnsafeString(block, "type"); err != nil || typ != "toolUse" {
		return
	}
	id, ok := f.JSONCallID(block, "toolUseId")
	if !ok {
		return
	}
	f.AddStep(pairing.KindUse, id, dialect.JSONString(block, "name"), t, "", "", step)
}

// jsonBody returns a string body as bytes when it looks like a JSON object (braces at both
// ends, so a truncated line is caught); otherwise it reports the body as malformed.
func jsonBody(s string, f *dialect.Found) ([]byte, bool) {
	s = strings.TrimSpace(s)
	if s == "" || s[0] != '{' || s[len(s)-1] != '}' {
		f.Skip(dialect.ReasonInvalidJSON)
		return nil, false
	}
	return readonly.Bytes(s), true
}

// jsonID reads the string call ID at key of a JSON object, reporting a missing, empty or
// non-string one as malformed. The returned string is a copy.
func jsonID(obj []byte, f *dialect.Found, key string) (string, bool) {
	v, dt, _, err := jsonparser.Get(obj, key)
	switch {
	case errors.Is(err, jsonparser.KeyPathNotFoundError):
		f.Skip(dialect.ReasonMissingCallID)
	case err != nil:
		f.Skip(dialect.ReasonInvalidJSON)
	case dt == jsonparser.Null:
		f.Skip(dialect.ReasonNullCallID)
	case dt != jsonparser.String:
		f.Skip(dialect.ReasonInvalidCallID)
	default:
		id, err := jsonparser.ParseString(v)
		if err != nil {
			f.Skip(dialect.ReasonInvalidJSON)
			return "", false
		}
		if id == "" {
			f.Skip(dialect.ReasonMissingCallID)
			return "", false
		}
		return strings.Clone(id), true
	}
	return "", false
}
