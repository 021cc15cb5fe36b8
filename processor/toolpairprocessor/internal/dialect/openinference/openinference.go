// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package openinference is the dialect of OpenInference spans (specification section 8), as the
// Arize OpenInference instrumentations write them.
//
// Checked against the OpenInference semantic conventions (spec/semantic_conventions.md and
// spec/tool_calling.md of Arize-ai/openinference), against
// @arizeai/openinference-instrumentation-openai-agents 0.2.15 with @openai/agents 0.20.0
// (the captures in testdata/agents), and against
// @arizeai/openinference-instrumentation-langchain 4.1.1 with LangGraph.js 1.7.3
// (@langchain/core 1.4.0, @langchain/openai 1.6.0; the captures in testdata/langgraph).
//
// Fields read, on spans whose openinference.span.kind is:
//
//   - LLM: the span's start is a step boundary. Its uses, at the span's end: when
//     output.mime_type is application/json and output.value (a string) is a LangChain
//     LLMResult, the entries of generations[0][i].message.kwargs.tool_calls (id, name, args:
//     see langchain.go), with the match hash matchLangChain of name and args; otherwise
//     llm.output_messages.{i}.message.tool_calls.{j}.tool_call.id (string), named by
//     .tool_call.function.name, with the match hash (dialect.MatchJSON) of that name and
//     .tool_call.function.arguments (a JSON string). The LangChain instrumentation writes
//     these flattened calls without their ID. llm.input_messages.{i}.message.tool_call_id
//     (string) is an echo of a result at the span's start. Its boundary and uses share the
//     Step pairing.GroupStep(trace ID, span ID): the Agents SDK puts each model request
//     under a "turn" span of its own, so the parent span does not tell the agent apart.
//   - TOOL: a tool result at the span's end, named by tool.name (else the span name). Its
//     call ID is tool_call.id, else tool.id, else gen_ai.tool.call.id (strings), else, when
//     output.mime_type is application/json, the output.kwargs.tool_call_id of the LangChain
//     ToolMessage in output.value (written only when the tool returned; its status "error"
//     is a failed tool, still a result); with a call ID, it is a pairing.KindAbort when
//     dialect.Cancelled says the span reports its call's cancellation (error.type,
//     tool.failure_kind, status, span status). The Agents SDK writes none of them, nor does
//     LangChain on a tool that failed or was interrupted: the span then resolves the
//     pending call of its scope and trace whose use has the same tool name and arguments
//     (input.value: the JSON arguments the tool received, or, with input.mime_type
//     text/plain, LangChain's bare value of a tool's one string argument, see
//     matchToolInput), earliest use first (pairing.KindMatch); when dialect.Cancelled says
//     the span reports its call's cancellation, the match item is marked Abort.
//   - AGENT or CHAIN without a parent span (the root of the run): a session end at the span's
//     end, closing every pending call of its scope.
//
// Nested agents run as tools in the same trace share its steps: a model request of the inner
// agent is a step boundary for the calls of the outer one.
package openinference

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/genai"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/readonly"
)

// Name is the dialect's configuration name.
const Name = "openinference"

// Attribute keys (OpenInference semantic conventions).
const (
	keySpanKind    = "openinference.span.kind"
	keyToolName    = "tool.name"
	keyToolCallID  = "tool_call.id"
	keyToolID      = "tool.id"
	keyGenAICallID = "gen_ai.tool.call.id"
	keyInputValue  = "input.value"
	keyInputMime   = "input.mime_type"
	keyOutputValue = "output.value"
	keyOutputMime  = "output.mime_type"
	mimeJSON       = "application/json"
	mimeText       = "text/plain"
	kindLLM        = "LLM"
	kindTool       = "TOOL"
	kindAgent      = "AGENT"
	kindChain      = "CHAIN"
)

var (
	outputs = dialect.FlatLayout{
		Messages: "llm.output_messages.", Calls: "message.tool_calls.",
		ID: "tool_call.id", Name: "tool_call.function.name", Arguments: "tool_call.function.arguments",
	}
	inputs = dialect.FlatLayout{Messages: "llm.input_messages.", ResultID: "message.tool_call_id"}
)

// fieldSpanKind is keySpanKind, read in the span's one pass (fields.Record).
var fieldSpanKind = fields.Register(keySpanKind)

// ExtractSpan appends to f the tool calls that span announces or resolves and reports whether
// it is an OpenInference span of a kind this dialect reads (LLM, TOOL, or a root AGENT or
// CHAIN). It never modifies the span.
func ExtractSpan(span ptrace.Span, f *dialect.Found) bool {
	// From the span's one pass over its attributes (fields.Record), shared with the other
	// dialects: most spans are not OpenInference's.
	v, ok := f.Attrs(span.Attributes()).Value(fieldSpanKind)
	if !ok || v.Type() != pcommon.ValueTypeStr {
		return false
	}
	switch v.Str() {
	case kindLLM:
		extractLLM(span, f)
	case kindTool:
		extractTool(span, f)
	case kindAgent, kindChain:
		if !span.ParentSpanID().IsEmpty() {
			return false
		}
		f.Add(pairing.KindSessionEnd, "", "", int64(span.EndTimestamp()))
	default:
		return false
	}
	return true
}

func extractLLM(span ptrace.Span, f *dialect.Found) {
	step := ""
	if !span.SpanID().IsEmpty() {
		step = genai.TraceStep(span)
		f.AddStep(pairing.KindBoundary, "", "", int64(span.StartTimestamp()), "", "", step)
	}
	if addLangChainUses(span, f, step) {
		f.AddFlatHistory(span, nil, &inputs, step)
		return
	}
	f.AddFlatHistory(span, &outputs, &inputs, step)
}

// addLangChainUses appends the uses of an LLM span whose output.value is a LangChain LLMResult
// (output.mime_type application/json; see langChainCalls) and reports whether it is one: each
// kwargs.tool_calls entry with a usable id is a use at the span's end, of step step, named by
// its name, with the match hash of its args in LangChain's form (matchLangChain). An entry
// without a usable id, an entry that is not an object and a result that is not JSON are
// reported in f; a result that is not JSON is not one (the flattened attributes are read).
func addLangChainUses(span ptrace.Span, f *dialect.Found, step string) bool {
	attrs := span.Attributes()
	if !isStrAttr(attrs, keyOutputMime, mimeJSON) {
		return false
	}
	v, ok := fields.Get(attrs, keyOutputValue)
	if !ok || v.Type() != pcommon.ValueTypeStr {
		return false
	}
	var buf [4]lcCall
	calls, recognised, invalid, wrong := langChainCalls(readonly.Bytes(v.Str()), buf[:0])
	if invalid {
		f.Skip(dialect.ReasonInvalidJSON)
		return false
	}
	if !recognised {
		return false
	}
	if wrong {
		f.Skip(dialect.ReasonInvalidType)
	}
	end := int64(span.EndTimestamp())
	for _, c := range calls {
		if c.bad != "" {
			f.Skip(c.bad)
			continue
		}
		f.AddMatch(pairing.KindUse, c.id, c.name, end, step, dialect.InTrace(matchLangChain(c.name, c.args), span.TraceID()))
	}
	return true
}

func extractTool(span ptrace.Span, f *dialect.Found) {
	attrs := span.Attributes()
	name := span.Name()
	if v, ok := fields.Get(attrs, keyToolName); ok && v.Type() == pcommon.ValueTypeStr && v.Str() != "" {
		name = v.Str()
	}
	end := int64(span.EndTimestamp())
	for _, k := range [...]string{keyToolCallID, keyToolID, keyGenAICallID} {
		v, ok := fields.Get(attrs, k)
		if !ok {
			continue
		}
		if v.Type() != pcommon.ValueTypeStr {
			f.Skip(dialect.ReasonInvalidCallID)
			return
		}
		if v.Str() != "" {
			f.Add(dialect.ResultKind(span), v.Str(), name, end)
			return
		}
	}
	if isStrAttr(attrs, keyOutputMime, mimeJSON) {
		if v, ok := fields.Get(attrs, keyOutputValue); ok && v.Type() == pcommon.ValueTypeStr {
			id, bad, found := langChainToolCallID(readonly.Bytes(v.Str()))
			if found && bad == "" {
				f.Add(dialect.ResultKind(span), id, name, end)
				return
			}
			if bad != "" {
				f.Skip(bad)
			}
		}
	}
	var h uint64
	if v, ok := fields.Get(attrs, keyInputValue); ok {
		h = matchToolInput(name, v, attrs)
	}
	f.AddMatchedResult(span, name, end, dialect.InTrace(h, span.TraceID()))
}

// matchToolInput returns the match hash of a TOOL span of tool whose input.value is v: the
// string itself (dialect.MatchAny: JSON it holds read as JSON, other text as a string) when
// input.mime_type is text/plain, as LangChain writes a tool input that is one string (see
// matchLangChain); else the arguments v holds (dialect.MatchValue), 0 when they are not JSON.
func matchToolInput(tool string, v pcommon.Value, attrs pcommon.Map) uint64 {
	if v.Type() == pcommon.ValueTypeStr && isStrAttr(attrs, keyInputMime, mimeText) {
		return dialect.MatchAny(tool, v.Str())
	}
	h, _ := dialect.MatchValue(tool, v)
	return h
}

// isStrAttr reports whether attribute key of attrs (its last occurrence) is the string want.
func isStrAttr(attrs pcommon.Map, key, want string) bool {
	v, ok := fields.Get(attrs, key)
	return ok && v.Type() == pcommon.ValueTypeStr && v.Str() == want
}
