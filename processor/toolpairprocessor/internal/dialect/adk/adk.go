// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package adk is the dialect of Google's Agent Development Kit for JavaScript (@google/adk
// 2.0.0, tracer gcp.vertex.agent; checked against testdata/adk/normal and ADK's
// telemetry/tracing.ts and agents/functions.ts).
//
// The Gemini API gives function calls no ID; ADK makes one (adk-<uuid>) after the response
// and writes it only on the execute_tool span of a tool that succeeded. The model call span
// records the raw response, before the IDs exist. So the dialect names each call itself, from
// what both sides show: the call_llm span that announced it (a tool's span is a child of the
// call_llm span of the response that requested it), the tool name and the arguments.
//
// Fields read:
//
//   - call_llm spans with gen_ai.system=gcp.vertex.agent: their start is a step boundary
//     (Step genai.ModelStep: grouped by the parent span, the invoke_agent span). Each part
//     {"functionCall":{"name","args","id"?}} of content.parts of
//     gcp.vertex.agent.llm_response (a JSON string, the raw LlmResponse) is a tool_use at
//     the span's end, of the step. Its call ID is the functionCall's id when the model gave
//     one, else DerivedID(the call_llm span ID, name, args). The use also carries the match
//     hash NameMatch(name, the call_llm span ID), by which a bare execute_tool span finds it.
//   - execute_tool <tool> spans with gcp.vertex.agent.tool_call_args (what ADK writes when
//     the tool returned, traceToolCall): a tool_result at the span's end. gen_ai.tool.name
//     is the tool name. gen_ai.tool.call.id is the call ID when it is the model's (it does
//     not start with "adk-" and is not "<not specified>"); otherwise the call ID is
//     DerivedID(the parent span ID, the tool name, gcp.vertex.agent.tool_call_args). The
//     span keeps its own gen_ai.tool.call.id. The cancellation markers of dialect.Cancelled
//     make it a pairing.KindAbort (ADK sets none in 2.0.0: every span's status is Unset).
//   - execute_tool (merged) (gen_ai.tool.name "(merged tools)", a parallel response's merged
//     event, whose gen_ai.tool.call.id is an event ID): claimed, nothing read.
//   - execute_tool <tool> spans with no attribute at all (but toolpair.* ones), under a
//     parent span: what ADK
//     leaves when the tool threw (failed, timed out or aborted: it writes the attributes
//     only after the tool returns). A result without a call ID (pairing.KindMatch) with
//     NameMatch(<tool>, the parent span ID): it resolves the earliest pending call of that
//     tool announced by its parent call_llm span, and gets the call's ID
//     (gen_ai.tool.call.id); a bare span that carries that ID already (replayed, or in the back
//     tier of route mode) is resolved by it. It cannot say which of two calls of one tool in
//     one response it ran; a span whose status reports its abort (specification section 2's
//     markers) resolves its call as interrupted/aborted (Found.AddMatchedResult).
//
// ADK's invoke_agent span is the genai dialect's; its end is a session end keyed under its
// gen_ai.conversation.id, which ADK's call_llm and execute_tool spans do not carry (they are
// keyed by their trace), so it closes none of their calls.
package adk

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash/fnv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/genai"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/readonly"
)

// Name is the dialect's configuration name.
const Name = "adk"

// Span names, attributes and values (@google/adk 2.0.0 telemetry/tracing.ts).
const (
	spanCallLLM       = "call_llm"
	toolSpanPrefix    = "execute_tool "
	attrSystem        = "gen_ai.system"
	systemADK         = "gcp.vertex.agent"
	attrLLMResponse   = "gcp.vertex.agent.llm_response"
	attrToolCallArgs  = "gcp.vertex.agent.tool_call_args"
	attrToolName      = "gen_ai.tool.name"
	attrToolCallID    = "gen_ai.tool.call.id"
	mergedToolName    = "(merged tools)"
	mergedSpanName    = "(merged)"
	clientIDPrefix    = "adk-"
	notSpecifiedID    = "<not specified>"
	derivedIDPrefix   = "adk-derived-"
	derivedIDHexBytes = 8
	// processorPrefix starts the attributes the processor writes.
	processorPrefix = "toolpair."
)

// ExtractSpan appends to f what an ADK span announces or resolves (see the package
// documentation) and reports whether the span is one of ADK's call_llm or execute_tool spans.
// Other spans (invocation, invoke_agent) are not claimed. It never modifies the span.
func ExtractSpan(span ptrace.Span, f *dialect.Found) bool {
	name := span.Name()
	switch {
	case name == spanCallLLM:
		return extractCallLLM(span, f)
	case strings.HasPrefix(name, toolSpanPrefix):
		return extractTool(span, strings.TrimPrefix(name, toolSpanPrefix), f)
	}
	return false
}

// extractCallLLM reads a call_llm span.
func extractCallLLM(span ptrace.Span, f *dialect.Found) bool {
	a := f.Attrs(span.Attributes())
	if v, ok := a.Get(attrSystem); !ok || v.Type() != pcommon.ValueTypeStr || v.Str() != systemADK {
		return false
	}
	id := span.SpanID()
	if id.IsEmpty() {
		return true
	}
	step := genai.ModelStep(span)
	f.AddStep(pairing.KindBoundary, "", "", int64(span.StartTimestamp()), "", "", step)
	v, ok := a.Get(attrLLMResponse)
	if !ok {
		return true
	}
	if v.Type() != pcommon.ValueTypeStr {
		f.Skip(dialect.ReasonInvalidType)
		return true
	}
	end := int64(span.EndTimestamp())
	calls, err := FunctionCalls(readonly.Bytes(v.Str()))
	if err != nil {
		f.Skip(dialect.ReasonInvalidJSON)
	}
	for _, c := range calls {
		if c.Name == "" {
			f.Skip(dialect.ReasonInvalidType)
			continue
		}
		callID := c.ID
		if callID == "" {
			h, ok := dialect.MatchJSON(c.Name, c.Args)
			if !ok {
				f.Skip(dialect.ReasonInvalidJSON)
				continue
			}
			callID = DerivedID(id, h)
		}
		f.AddMatch(pairing.KindUse, callID, c.Name, end, step, NameMatch(c.Name, id))
	}
	return true
}

// extractTool reads an execute_tool <suffix> span.
func extractTool(span ptrace.Span, suffix string, f *dialect.Found) bool {
	attrs := span.Attributes()
	parent := span.ParentSpanID()
	if bare, id := bareSpan(attrs); bare {
		// A tool that threw: no attribute, only its name and place.
		if parent.IsEmpty() || suffix == "" {
			return false
		}
		if suffix == mergedSpanName {
			return true
		}
		end := int64(span.EndTimestamp())
		if id != "" { // matched already (a replay, or the back tier of route mode)
			f.Add(pairing.KindResult, id, suffix, end)
			return true
		}
		f.AddMatchedResult(span, suffix, end, NameMatch(suffix, parent))
		return true
	}
	a := f.Attrs(attrs)
	args, ok := a.Get(attrToolCallArgs)
	if !ok {
		return false // not ADK's: the genai dialect reads it
	}
	tool := suffix
	if v, ok := a.Get(attrToolName); ok && v.Type() == pcommon.ValueTypeStr && v.Str() != "" {
		tool = v.Str()
	}
	if tool == mergedToolName || suffix == mergedSpanName {
		return true
	}
	end := int64(span.EndTimestamp())
	kind := dialect.ResultKindIn(span, a)
	if v, ok := a.Get(attrToolCallID); ok && v.Type() == pcommon.ValueTypeStr && modelID(v.Str()) {
		f.Add(kind, v.Str(), tool, end)
		return true
	}
	if parent.IsEmpty() {
		f.Skip(dialect.ReasonMissingCallID)
		return true
	}
	if args.Type() != pcommon.ValueTypeStr {
		f.Skip(dialect.ReasonInvalidType)
		return true
	}
	h, ok := dialect.MatchJSON(tool, readonly.Bytes(args.Str()))
	if !ok {
		f.Skip(dialect.ReasonInvalidJSON)
		return true
	}
	f.Add(kind, DerivedID(parent, h), tool, end)
	return true
}

// bareSpan reports whether attrs are those of an execute_tool span ADK wrote no attribute on:
// none but the processor's own (toolpair.*: its marks, the route attribute of route mode) and
// the gen_ai.tool.call.id it writes on a matched result, which is then id ("" when absent or
// not a string).
func bareSpan(attrs pcommon.Map) (bare bool, id string) {
	for k, v := range attrs.All() {
		switch {
		case strings.HasPrefix(k, processorPrefix):
		case k == attrToolCallID:
			id = ""
			if v.Type() == pcommon.ValueTypeStr {
				id = v.Str()
			}
		default:
			return false, ""
		}
	}
	return true, id
}

// modelID reports whether id, an execute_tool span's gen_ai.tool.call.id, is the model's
// own call ID: not empty, not one ADK made (adk-<uuid>), not ADK's placeholder.
func modelID(id string) bool {
	return id != "" && id != notSpecifiedID && !strings.HasPrefix(id, clientIDPrefix)
}

// DerivedID returns the call ID the dialect gives a call ADK exports no ID of: "adk-derived-"
// and 16 hex digits of the FNV-1a hash of the span ID of the call_llm span that announced it
// and h, the match hash of its tool name and arguments (dialect.MatchJSON). The use (from
// that span's response) and the tool's execute_tool span (a child of that span, with the
// arguments the tool received) derive the same one.
func DerivedID(callLLM pcommon.SpanID, h uint64) string {
	sum := fnv.New64a()
	sum.Write(callLLM[:])
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], h)
	sum.Write(b[:])
	var out [derivedIDHexBytes]byte
	binary.BigEndian.PutUint64(out[:], sum.Sum64())
	return derivedIDPrefix + hex.EncodeToString(out[:])
}

// NameMatch returns the match hash of a call of tool announced by the call_llm span callLLM:
// what a bare execute_tool <tool> span under that span matches (never 0).
func NameMatch(tool string, callLLM pcommon.SpanID) uint64 {
	sum := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], dialect.MatchAny(tool, nil))
	sum.Write(b[:])
	sum.Write(callLLM[:])
	if s := sum.Sum64(); s != 0 {
		return s
	}
	return 1
}

// Call is one function call of a model response: its name, its arguments as JSON text (nil
// when absent) and its id ("" when the model gave none).
type Call struct {
	Name string
	Args []byte
	ID   string
}

// response is the part of ADK's LlmResponse (gcp.vertex.agent.llm_response) read: the
// function calls of its content's parts. Of a repeated key, the last occurrence is read.
type response struct {
	Content *struct {
		Parts []struct {
			FunctionCall *struct {
				Name json.RawMessage `json:"name"`
				Args json.RawMessage `json:"args"`
				ID   json.RawMessage `json:"id"`
			} `json:"functionCall"`
		} `json:"parts"`
	} `json:"content"`
}

// FunctionCalls returns the function calls of the JSON text of an LlmResponse,
// {"content":{"parts":[...,{"functionCall":{"name","args","id"}}]}}, in order. A call whose
// name is not a string has Name ""; an id that is not a non-empty string is "" (the call is
// named by DerivedID). A text that is not such a JSON object, or has content or parts of
// other types, returns an error and no calls.
func FunctionCalls(data []byte) ([]Call, error) {
	var r response
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	if r.Content == nil {
		return nil, nil
	}
	var calls []Call
	for _, p := range r.Content.Parts {
		fc := p.FunctionCall
		if fc == nil {
			continue
		}
		var c Call
		_ = json.Unmarshal(fc.Name, &c.Name) // not a string: "" (reported by the caller)
		_ = json.Unmarshal(fc.ID, &c.ID)
		if a := fc.Args; len(a) > 0 && string(a) != "null" {
			c.Args = a
		}
		calls = append(calls, c)
	}
	return calls, nil
}
