// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package genai is the dialect of spans that follow the OpenTelemetry GenAI semantic
// conventions (v1.37+): model call spans whose gen_ai.output.messages announce tool calls,
// execute_tool spans that resolve them, and later model calls whose gen_ai.input.messages
// repeat the results as history; the same messages in span events; and the steps of Mastra,
// whose spans are the conventions' plus its own agent_step output.
//
// Fields read (semconv v1.37.0 names):
//
//   - gen_ai.operation.name (string): "execute_tool" marks a tool_result span.
//   - gen_ai.tool.call.id (string) on execute_tool spans: the call ID.
//   - gen_ai.tool.name (string) on execute_tool spans, else the span name after
//     "execute_tool ".
//   - on execute_tool spans, the cancellation markers of dialect.Cancelled (error.type
//     cancelled, canceled, aborted or AbortError; tool.failure_kind or status cancelled; span
//     status Error with a message saying aborted or cancelled): the result is then a
//     pairing.KindAbort. GitHub Copilot CLI ends an interrupted call's span with
//     error.type=cancelled and status Error "Operation aborted"; Qwen Code's qwen-code.tool
//     span (gen_ai.operation.name=execute_tool) carries tool.failure_kind=cancelled.
//   - gen_ai.output.messages (JSON string or structured) on any other span: each
//     {"type":"tool_call","id","name"} part is a tool_use at the span's end time.
//   - gen_ai.input.messages (JSON string or structured) on any other span: each
//     {"type":"tool_call_response","id"} part is an echo of a tool_result at the span's
//     start time (the result existed when the model request began).
//   - a model call span whose gen_ai.operation.name is chat, text_completion or
//     generate_content: its start is a step boundary. Its uses and its boundary share the
//     Step pairing.GroupStep(group, span ID), where group is the span's parent span ID
//     (the agent span the request belongs to), or its trace ID for a root span. A
//     boundary therefore closes only the calls announced by earlier model calls under the
//     same parent: the model calls of an agent run as a tool sit under that agent's own
//     span and never close the outer call that waits for it. (Vercel AI SDK 7 puts every
//     model call under a "step N" span of its own, so its steps never close each other.)
//   - invoke_agent spans: their end is a session end grouped by the span's own ID
//     (pairing.GroupStep(span ID, "")), closing the calls of the model calls directly
//     under it. The tool calls an invoke_agent span repeats in its output messages are
//     uses without a step (normally ignored as repeats of the model calls' uses).
//   - span events (specification section 8: the semantic-convention events are read as log
//     records and as span events), read only on the spans read as model calls or agent
//     spans above, and only these two names (any other event is passed over by its name):
//     a gen_ai.choice event, the legacy per-message event, whose attributes stand for the
//     log event's body (genaievents.ExtractChoiceEvent: message a JSON string of the OpenAI
//     message shape with tool_calls[].id, or of content blocks, AWS Strands Agents TS 1.19.0's
//     [{"type":"toolUse","name","toolUseId","input"}]), each call a tool_use at the span's
//     end with the span's Step, as its output messages are; a
//     gen_ai.client.inference.operation.details event (Strands with
//     OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental), whose gen_ai.output.messages
//     and gen_ai.input.messages are read exactly as the span attributes of the same names.
//     ExtractSpanMatching does not read span events. Strands' chat spans carry
//     gen_ai.operation.name=chat and sit, one each, under an execute_agent_loop_cycle span
//     (no operation name, not read): each loop cycle is its own group, as AI SDK 7's steps.
//   - Mastra (@mastra/otel-exporter 1.4.0, Mastra 1.71.0), whose chat spans list no tool
//     calls: an agent_step span (gen_ai.operation.name agent_step, mastra.span.type
//     model_step; one per model round trip, under the run's model_generation span, the
//     parent of its chat span and of its execute_tool spans) is a step of its own: its start
//     is a step boundary with the Step pairing.GroupStep(parent span ID, span ID), and each
//     {"toolCallId","toolName"} of toolCalls in its mastra.model_step.output (a JSON string
//     {"text","toolCalls":[{"toolCallId","toolName","args"}]}) is a tool_use of that Step at
//     the span's start. The start, not the end: the step's span ends after its tools (the
//     execute_tool span ends before its sibling chat span and the step do), and the model
//     step's own announcement time (its tool-call model_chunk span) is not on the span; the
//     start puts the use before its result (the step's start precedes the model request by
//     a few ms, so a synthetic span of a call left without result starts with the model
//     request). A model_generation span (mastra.span.type model_generation) ends the run's
//     steps: its end is a session end grouped by its own ID, like an invoke_agent span's; its
//     mastra.model_generation.output, which repeats every call of the run, is not read.
//     Mastra's model_chunk spans are not read.
//
// A part or span whose call ID is missing, null, empty or not a string is skipped and
// reported as malformed; it never pairs.
package genai

import (
	"encoding/hex"
	"errors"
	"strings"

	"github.com/buger/jsonparser"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/genaievents"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/messages"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/readonly"
)

// Name is the dialect's configuration name.
const Name = "genai"

var (
	keyOperation      = string(semconv.GenAIOperationNameKey)
	keyToolCallID     = string(semconv.GenAIToolCallIDKey)
	keyToolName       = string(semconv.GenAIToolNameKey)
	keyInputMessages  = string(semconv.GenAIInputMessagesKey)
	keyOutputMessages = string(semconv.GenAIOutputMessagesKey)
	opExecuteTool     = semconv.GenAIOperationNameExecuteTool.Value.AsString()
	opInvokeAgent     = semconv.GenAIOperationNameInvokeAgent.Value.AsString()
	// Mastra's operations (@mastra/otel-exporter 1.4.0), outside the conventions, told from
	// another source's by keyMastraSpanType.
	opAgentStep       = "agent_step"
	opModelGeneration = "model_generation"
	// Model request operations whose start is a step boundary.
	opBoundaries = map[string]bool{
		semconv.GenAIOperationNameChat.Value.AsString():            true,
		semconv.GenAIOperationNameTextCompletion.Value.AsString():  true,
		semconv.GenAIOperationNameGenerateContent.Value.AsString(): true,
	}
)

// Mastra's own span attributes (@mastra/otel-exporter 1.4.0), read only on spans whose
// gen_ai.operation.name is one of Mastra's: the span type, and the output of a model step.
const (
	keyMastraSpanType   = "mastra.span.type"
	keyMastraStepOutput = "mastra.model_step.output"
	// Values of keyMastraSpanType.
	mastraModelStep       = "model_step"
	mastraModelGeneration = "model_generation"
)

// Keys of the fields of GenAI spans, read in the span's one pass (fields.Record).
var (
	fieldOperation      = fields.Register(keyOperation)
	fieldOutputMessages = fields.Register(keyOutputMessages)
	fieldInputMessages  = fields.Register(keyInputMessages)
	fieldToolName       = fields.Register(keyToolName)
	fieldToolCallID     = fields.Register(keyToolCallID)
)

// SpanKind says what role a span plays for pairing.
type SpanKind uint8

const (
	// Other: not a GenAI span this dialect knows.
	Other SpanKind = iota
	// ExecuteTool: an execute_tool span (a tool_result).
	ExecuteTool
	// ModelCall: any other span carrying chat history (chat, text_completion,
	// generate_content, and custom model call spans), and Mastra's agent_step span.
	ModelCall
	// InvokeAgent: an invoke_agent span (its end is the end of the agent's turn), or
	// Mastra's model_generation span (its end is the end of the run's steps).
	InvokeAgent
)

// ExtractSpan appends to f the tool calls that span announces or resolves, and returns the
// span's role. It never modifies the span.
func ExtractSpan(span ptrace.Span, f *dialect.Found) SpanKind {
	return extractSpan(span, f, false)
}

// ExtractSpanMatching is ExtractSpan for sources whose tool spans carry no call ID (the
// openllmetry dialect): each use also carries the match hash of its tool name and
// "arguments" (dialect.MatchJSON) in the span's trace (dialect.InTrace), 0 when the
// arguments are not valid JSON.
func ExtractSpanMatching(span ptrace.Span, f *dialect.Found) SpanKind {
	return extractSpan(span, f, true)
}

func extractSpan(span ptrace.Span, f *dialect.Found, matching bool) SpanKind {
	attrs := span.Attributes()
	kind := ModelCall
	step := ""
	// The fields of the span, from its one pass over its attributes (shared with the
	// dialects tried before, and the processor after).
	a := f.Attrs(attrs)
	if op, opOK := a.Value(fieldOperation); opOK {
		switch op := op.AsString(); {
		case op == opExecuteTool:
			extractExecuteTool(span, a, f)
			return ExecuteTool
		case op == opInvokeAgent:
			kind = InvokeAgent
			if span.SpanID().IsEmpty() {
				break
			}
			id := span.SpanID()
			f.AddStep(pairing.KindSessionEnd, "", "", int64(span.EndTimestamp()), "", "", hexGroupStep(id[:], nil, f))
		case opBoundaries[op] && !span.SpanID().IsEmpty():
			step = modelStep(span, f)
			f.AddStep(pairing.KindBoundary, "", "", int64(span.StartTimestamp()), "", "", step)
		case op == opAgentStep && mastraType(a, mastraModelStep) && !span.SpanID().IsEmpty():
			step = modelStep(span, f)
			start := int64(span.StartTimestamp())
			f.AddStep(pairing.KindBoundary, "", "", start, "", "", step)
			if out, ok := a.Get(keyMastraStepOutput); ok {
				extractMastraStep(out, start, step, f)
			}
		case op == opModelGeneration && mastraType(a, mastraModelGeneration):
			kind = InvokeAgent
			if id := span.SpanID(); !id.IsEmpty() {
				f.AddStep(pairing.KindSessionEnd, "", "", int64(span.EndTimestamp()), "", "", hexGroupStep(id[:], nil, f))
			}
		}
	}
	found := step != ""
	if out, outOK := a.Value(fieldOutputMessages); outOK {
		found = true
		outputUses(out, span, step, matching, f)
	}
	if in, inOK := a.Value(fieldInputMessages); inOK {
		found = true
		inputEchoes(in, span, f)
	}
	if !found && kind != InvokeAgent {
		return Other
	}
	if !matching && span.Events().Len() > 0 {
		extractEvents(span, step, f)
	}
	return kind
}

// outputUses appends a use for each tool_call part of the output messages out of span, at
// the span's end, with the Step step (and, matching, the part's match hash).
func outputUses(out pcommon.Value, span ptrace.Span, step string, matching bool, f *dialect.Found) {
	end := int64(span.EndTimestamp())
	err := messages.ScanValue(out, func(p messages.Part) {
		if p.Type != messages.ToolCall {
			return
		}
		if p.IDState != messages.IDPresent {
			f.Skip(p.IDState.String())
			return
		}
		if matching {
			f.AddMatch(pairing.KindUse, p.ID, p.Name, end, step, dialect.InTrace(partMatch(p), span.TraceID()))
			return
		}
		f.AddStep(pairing.KindUse, p.ID, p.Name, end, "", "", step)
	})
	f.SkipHistory(err)
}

// inputEchoes appends an echo for each tool_call_response part of the input messages in of
// span, at the span's start.
func inputEchoes(in pcommon.Value, span ptrace.Span, f *dialect.Found) {
	start := int64(span.StartTimestamp())
	err := messages.ScanValue(in, func(p messages.Part) {
		if p.Type != messages.ToolCallResponse {
			return
		}
		if p.IDState != messages.IDPresent {
			f.Skip(p.IDState.String())
			return
		}
		f.Add(pairing.KindEcho, p.ID, "", start)
	})
	f.SkipHistory(err)
}

// extractEvents reads the span events of a model call or agent span: a gen_ai.choice event
// announces tool calls (genaievents.ExtractChoiceEvent), at the span's end with the Step
// step, as its output messages would; a gen_ai.client.inference.operation.details event's
// gen_ai.output.messages and gen_ai.input.messages are read as the span's attributes of the
// same names are. Other events are skipped by name, without reading their attributes.
func extractEvents(span ptrace.Span, step string, f *dialect.Found) {
	events := span.Events()
	for i := 0; i < events.Len(); i++ {
		ev := events.At(i)
		switch ev.Name() {
		case genaievents.EventChoice:
			genaievents.ExtractChoiceEvent(ev.Attributes(), int64(span.EndTimestamp()), step, f)
		case genaievents.EventOperationDetails:
			out, outOK, in, inOK := fields.Get2(ev.Attributes(), keyOutputMessages, keyInputMessages)
			if outOK {
				outputUses(out, span, step, false, f)
			}
			if inOK {
				inputEchoes(in, span, f)
			}
		}
	}
}

// mastraType reports whether the span whose attributes a reads has the Mastra span type
// want (mastra.span.type).
func mastraType(a *fields.Record, want string) bool {
	v, ok := a.Get(keyMastraSpanType)
	return ok && v.Type() == pcommon.ValueTypeStr && v.Str() == want
}

// extractMastraStep appends the uses of a Mastra agent_step span's mastra.model_step.output,
// a JSON string {"text","toolCalls":[{"toolCallId","toolName","args"}]}: each toolCalls
// element is a use at time t (the step's start) with the Step step. A missing or null
// toolCalls is a step without calls; an output that is not a JSON object string, or
// toolCalls that is not an array, is skipped as malformed.
func extractMastraStep(out pcommon.Value, t int64, step string, f *dialect.Found) {
	if out.Type() != pcommon.ValueTypeStr {
		f.Skip(dialect.ReasonInvalidType)
		return
	}
	data := readonly.Bytes(strings.TrimSpace(out.Str()))
	if len(data) == 0 || data[0] != '{' || data[len(data)-1] != '}' {
		f.Skip(dialect.ReasonInvalidJSON)
		return
	}
	calls, dt, _, err := jsonparser.Get(data, "toolCalls")
	switch {
	case errors.Is(err, jsonparser.KeyPathNotFoundError) || (err == nil && dt == jsonparser.Null):
		return
	case err != nil:
		f.Skip(dialect.ReasonInvalidJSON)
		return
	case dt != jsonparser.Array:
		f.Skip(dialect.ReasonInvalidType)
		return
	}
	f.EachArrayObject(calls, func(c []byte) {
		if id, ok := f.JSONCallID(c, "toolCallId"); ok {
			f.AddStep(pairing.KindUse, id, dialect.JSONString(c, "toolName"), t, "", "", step)
		}
	})
}

// ModelStep returns the Step of a model call span (its boundary and its uses):
// pairing.GroupStep(group, span ID) in hex, where group is the span's parent span ID, or its
// trace ID for a root span. The span ID must not be empty.
func ModelStep(span ptrace.Span) string { return modelStep(span, nil) }

// modelStep is ModelStep with its bytes from f.Text (f nil: allocated).
func modelStep(span ptrace.Span, f *dialect.Found) string {
	tid, pid, id := span.TraceID(), span.ParentSpanID(), span.SpanID()
	var group []byte // the hex of an empty ID is "", as pcommon formats it
	switch {
	case !pid.IsEmpty():
		group = pid[:]
	case !tid.IsEmpty():
		group = tid[:]
	}
	return hexGroupStep(group, id[:], f)
}

// TraceStep returns pairing.GroupStep(trace ID, span ID) in hex: the Step of a model call
// span of a source whose model calls are grouped by trace. The span ID must not be empty.
func TraceStep(span ptrace.Span) string {
	tid, id := span.TraceID(), span.SpanID()
	return hexGroupStep(tid[:], id[:], nil)
}

// OwnGroup returns pairing.GroupStep(span ID, "") in hex: the Step of a session end that
// closes the calls of the model calls directly under span.
func OwnGroup(span ptrace.Span) string {
	id := span.SpanID()
	return hexGroupStep(id[:], nil, nil)
}

// hexGroupStep returns pairing.GroupStep of the hex forms of group and step, built in f.Text
// (a chat span's step is made for every chat span), or in one allocation when f is nil.
func hexGroupStep(group, step []byte, f *dialect.Found) string {
	n := hex.EncodedLen(len(group)) + len(pairing.GroupSep) + hex.EncodedLen(len(step))
	var buf []byte
	if f != nil {
		buf = f.Text(n)
	} else {
		buf = make([]byte, n)
	}
	i := hex.Encode(buf, group)
	i += copy(buf[i:], pairing.GroupSep)
	hex.Encode(buf[i:], step)
	return readonly.String(buf) // buf is never written again
}

// partMatch returns the match hash of a tool_call part, 0 when its arguments are not JSON.
func partMatch(p messages.Part) uint64 {
	var h uint64
	if p.Arguments != nil {
		h, _ = dialect.MatchJSON(p.Name, p.Arguments)
	} else {
		h, _ = dialect.MatchValue(p.Name, p.ArgumentsValue)
	}
	return h
}

// extractExecuteTool appends to f the result an execute_tool span whose attributes a reads
// resolves.
func extractExecuteTool(span ptrace.Span, a *fields.Record, f *dialect.Found) {
	tool, toolOK := a.Value(fieldToolName)
	callID, callIDOK := a.Value(fieldToolCallID)
	name := ""
	if toolOK {
		name = tool.AsString()
	} else {
		name = strings.TrimPrefix(span.Name(), opExecuteTool+" ")
	}
	if !callIDOK {
		f.Skip(dialect.ReasonMissingCallID)
		return
	}
	if id, ok := f.ValueCallID(callID); ok {
		f.Add(dialect.ResultKindIn(span, a), id, name, int64(span.EndTimestamp()))
	}
}
