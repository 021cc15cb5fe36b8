// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package openllmetry is the dialect of Traceloop OpenLLMetry spans (specification section 8).
//
// Checked against OpenLLMetry JS 0.27.0 (@traceloop/node-server-sdk and
// @traceloop/instrumentation-openai 0.27.0, the captures in testdata/openllmetry); the
// flattened attributes of older releases and of the Python SDK are read as the project's
// documentation and published test fixtures show them (traceloop/openllmetry,
// traceloop/openllmetry-js), not from a capture.
//
// Fields read:
//
//   - a chat span (gen_ai.operation.name chat, or llm.request.type chat in older
//     releases) that also carries a traceloop.* attribute or the flattened
//     gen_ai.completion.* keys: the span is OpenLLMetry's. Its gen_ai.output.messages and
//     gen_ai.input.messages are read as the genai dialect reads them (the semconv shape,
//     0.27): tool_call parts are uses at the span's end, tool_call_response parts echoes at
//     its start, its start a step boundary grouped by its parent span. Each use also
//     carries the match hash of its name and arguments (dialect.MatchJSON), so that a tool
//     span can find it.
//   - older releases: gen_ai.completion.{i}.tool_calls.{j}.id (string), .name and
//     .arguments (a JSON string) are uses at the span's end; gen_ai.prompt.{i}.tool_call_id
//     (string) an echo at its start.
//   - traceloop.span.kind "tool" (a withTool / @tool span, named "{name}.tool"): a tool
//     result at the span's end. It carries no call ID: it resolves the pending call of its
//     scope and trace whose use has the same tool name (traceloop.entity.name, else the span name
//     without ".tool") and arguments (traceloop.entity.input, a JSON string
//     {"args":[...],"kwargs":{...}}: kwargs when not empty, else the single object in
//     args, else the empty object), earliest use first (pairing.KindMatch). Positional
//     arguments other than one object cannot be matched: such a span is settled at once as
//     an orphan or standalone (its match hash is 0). A tool
//     span that already carries gen_ai.tool.call.id (string) is resolved by that ID.
//   - traceloop.span.kind "agent" or "workflow": a session end at the span's end, closing
//     every pending call of the scope for a root span, else the calls of the chat spans
//     directly under it.
//
// A chat span without any traceloop.* attribute (an app that calls the model outside
// withWorkflow/withAgent) is left to the genai dialect, which reads the same uses without
// match hashes: tool spans cannot find its calls, and are released as orphans or standalone
// after orphan_grace.
package openllmetry

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/genai"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/readonly"
)

// Name is the dialect's configuration name.
const Name = "openllmetry"

// Attribute keys (OpenLLMetry's own, and the semconv ones it writes).
const (
	keySpanKind      = "traceloop.span.kind"
	keyEntityName    = "traceloop.entity.name"
	keyEntityInput   = "traceloop.entity.input"
	keyRequestType   = "llm.request.type"
	keyOperation     = "gen_ai.operation.name"
	keyToolCallID    = "gen_ai.tool.call.id"
	prefixTraceloop  = "traceloop."
	prefixCompletion = "gen_ai.completion."
	kindTool         = "tool"
	kindAgent        = "agent"
	kindWorkflow     = "workflow"
	toolSpanSuffix   = ".tool"
)

// completions is the layout of older releases' flattened history.
var (
	completions = dialect.FlatLayout{Messages: prefixCompletion, Calls: "tool_calls.", ID: "id", Name: "name", Arguments: "arguments"}
	prompts     = dialect.FlatLayout{Messages: "gen_ai.prompt.", ResultID: "tool_call_id"}
)

// ExtractSpan appends to f the tool calls that span announces or resolves and reports whether
// the span is OpenLLMetry's (a tool, agent or workflow span, or a chat span marked as
// above). It never modifies the span.
func ExtractSpan(span ptrace.Span, f *dialect.Found) bool {
	attrs := span.Attributes()
	kind, hasKind, traceloop, flattened := scan(attrs)
	if hasKind {
		switch kind.AsString() {
		case kindTool:
			extractTool(span, f)
			return true
		case kindAgent, kindWorkflow:
			step := ""
			if !span.ParentSpanID().IsEmpty() && !span.SpanID().IsEmpty() {
				step = genai.OwnGroup(span)
			}
			f.AddStep(pairing.KindSessionEnd, "", "", int64(span.EndTimestamp()), "", "", step)
			return true
		}
		// task spans and others: not tool records; a chat span never carries the kind.
		return false
	}
	if !traceloop && !flattened {
		return false
	}
	chat := false
	if op, ok := fields.Get(attrs, keyOperation); ok && op.AsString() == "chat" {
		if !flattened {
			genai.ExtractSpanMatching(span, f)
			return true
		}
		chat = true
	}
	if rt, ok := fields.Get(attrs, keyRequestType); ok && rt.AsString() == "chat" {
		chat = true
	}
	if !flattened && !chat {
		return false
	}
	extractFlattened(span, chat, f)
	return true
}

// scan reads, in one pass over attrs, the last traceloop.span.kind (hasKind false when there
// is none), whether they hold any traceloop.* key, and whether they hold the flattened
// completion keys of older releases. On spans of other sources this pass is all the dialect
// costs.
func scan(attrs pcommon.Map) (kind pcommon.Value, hasKind, traceloop, flattened bool) {
	for k, v := range attrs.All() {
		if len(k) < len(prefixTraceloop) {
			continue
		}
		switch k[0] {
		case 't':
			if strings.HasPrefix(k, prefixTraceloop) {
				traceloop = true
				if k == keySpanKind {
					kind, hasKind = v, true
				}
			}
		case 'g':
			flattened = flattened || strings.HasPrefix(k, prefixCompletion)
		}
	}
	return kind, hasKind, traceloop, flattened
}

// extractFlattened reads the flattened history of older releases.
func extractFlattened(span ptrace.Span, chat bool, f *dialect.Found) {
	step := ""
	if chat && !span.SpanID().IsEmpty() {
		step = genai.ModelStep(span)
		f.AddStep(pairing.KindBoundary, "", "", int64(span.StartTimestamp()), "", "", step)
	}
	f.AddFlatHistory(span, &completions, &prompts, step)
}

// extractTool reads a tool span: resolved by its gen_ai.tool.call.id when it has one, else
// by name and arguments.
func extractTool(span ptrace.Span, f *dialect.Found) {
	attrs := span.Attributes()
	name := strings.TrimSuffix(span.Name(), toolSpanSuffix)
	if v, ok := fields.Get(attrs, keyEntityName); ok && v.Type() == pcommon.ValueTypeStr {
		name = v.Str()
	}
	end := int64(span.EndTimestamp())
	if v, ok := fields.Get(attrs, keyToolCallID); ok && v.Type() == pcommon.ValueTypeStr && v.Str() != "" {
		f.Add(pairing.KindResult, v.Str(), name, end)
		return
	}
	var h uint64
	if v, ok := fields.Get(attrs, keyEntityInput); ok {
		h = inputMatch(name, v)
	}
	f.AddMatchedResult(span, name, end, dialect.InTrace(h, span.TraceID()))
}

// inputMatch returns the match hash of a tool span's traceloop.entity.input, 0 when it
// cannot be matched.
func inputMatch(name string, v pcommon.Value) uint64 {
	var in any
	switch v.Type() {
	case pcommon.ValueTypeStr:
		var ok bool
		if in, ok = dialect.DecodeJSON(readonly.Bytes(v.Str())); !ok {
			return 0
		}
	case pcommon.ValueTypeMap:
		in = v.Map().AsRaw()
	default:
		return 0
	}
	obj, ok := in.(map[string]any)
	if !ok {
		return 0
	}
	args, hasArgs := obj["args"]
	kwargs, hasKwargs := obj["kwargs"]
	if !hasArgs && !hasKwargs {
		return dialect.MatchAny(name, obj) // not the SDK's wrapper: the arguments themselves
	}
	if kw, ok := kwargs.(map[string]any); ok && len(kw) > 0 {
		return dialect.MatchAny(name, kw)
	}
	list, _ := args.([]any)
	switch {
	case len(list) == 0:
		return dialect.MatchAny(name, map[string]any{})
	case len(list) == 1:
		if o, ok := list[0].(map[string]any); ok {
			return dialect.MatchAny(name, o)
		}
	}
	return 0
}
