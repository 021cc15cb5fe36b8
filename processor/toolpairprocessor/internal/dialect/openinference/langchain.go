// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package openinference

import (
	"bytes"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/jsonscan"
)

// LangChain's serialisation, as the OpenInference LangChain instrumentation writes it into
// input.value and output.value (checked: @arizeai/openinference-instrumentation-langchain
// 4.1.1, @langchain/core 1.4.0, LangGraph.js 1.7.3; the captures in testdata/langgraph). The
// flattened llm.output_messages attributes of that instrumentation carry no tool_call.id: the
// IDs are only in these JSON values.
//
// An LLM span's output.value is LangChain's LLMResult, a JSON object:
//
//	{"generations":[[{"text":"...","message":{"lc":1,"type":"constructor",
//	  "id":["langchain_core","messages","AIMessage"],"kwargs":{"id":"chatcmpl-...",
//	  "tool_calls":[{"name":"run_shell","args":{"command":"echo hello"},"type":"tool_call",
//	  "id":"call_mock_normal_01"}], ...}}}]],"llmOutput":{...}}
//
// A TOOL span's output.value, when the tool returned, is {"output": <ToolMessage>}:
//
//	{"output":{"lc":1,"type":"constructor","id":["langchain_core","messages","ToolMessage"],
//	  "kwargs":{"status":"success","content":"hello\n","tool_call_id":"call_mock_normal_01",
//	  "name":"run_shell", ...}}}
//
// Of a key repeated in one object the last occurrence is read (specification section 2).

// JSON keys read.
const (
	jsonGenerations = "generations"
	jsonMessage     = "message"
	jsonKwargs      = "kwargs"
	jsonToolCalls   = "tool_calls"
	jsonID          = "id"
	jsonName        = "name"
	jsonArgs        = "args"
	jsonOutput      = "output"
	jsonToolCallID  = "tool_call_id"
)

// lcCall is one entry of an AIMessage's kwargs.tool_calls.
type lcCall struct {
	// id is the call ID, "" when bad says why it is unusable.
	id string
	// bad is the malformed reason of an unusable ID (dialect.ReasonMissingCallID,
	// ReasonNullCallID, ReasonInvalidCallID, ReasonInvalidJSON), "" when id is usable.
	bad string
	// name is the tool name, "" when missing or not a string.
	name string
	// args is the raw JSON of the call's arguments (a sub-slice of the input), nil when absent.
	args []byte
}

// langChainCalls reads the tool calls of a LangChain LLMResult held in data (an LLM span's
// output.value): the kwargs.tool_calls entries of the message of each generation of the first
// set (generations[0][i].message.kwargs.tool_calls[j], the messages the instrumentation
// flattens into llm.output_messages.{i}), appended to buf. recognised says data is such a
// result: a JSON object whose generations[0] holds at least one message with a kwargs object
// holding a tool_calls array (an empty one included: the answer of a model that called no
// tool). data that is not a JSON object is not one. invalid is true when data is an object
// that is not JSON where it was walked; calls is then nil and recognised false. wrong is true when an
// element of a tool_calls array is not an object (skipped).
func langChainCalls(data []byte, buf []lcCall) (calls []lcCall, recognised, invalid, wrong bool) {
	if !isObject(data) {
		// Not a LangChain result (some other instrumentation's output, or a mime type that
		// says more than the value holds).
		return nil, false, false, false
	}
	var top [1][]byte
	if !members(data, []string{jsonGenerations}, top[:]) {
		return nil, false, true, false
	}
	calls = buf[:0]
	sets := 0
	ok := elems(top[0], func(gens []byte) bool {
		if sets++; sets > 1 {
			return true // generations[0] only: the first set, as the instrumentation flattens
		}
		return elems(gens, func(gen []byte) bool {
			msg, ok := member(gen, jsonMessage)
			if !ok {
				return false
			}
			kw, ok := member(msg, jsonKwargs)
			if !ok {
				return false
			}
			tc, ok := member(kw, jsonToolCalls)
			if !ok {
				return false
			}
			if !isArray(tc) {
				return true
			}
			recognised = true
			return elems(tc, func(el []byte) bool {
				if !isObject(el) {
					wrong = true
					return true
				}
				var f [3][]byte
				if !members(el, []string{jsonID, jsonName, jsonArgs}, f[:]) {
					return false
				}
				c := lcCall{args: f[2]}
				c.id, c.bad = stringID(f[0])
				c.name = stringOf(f[1])
				calls = append(calls, c)
				return true
			})
		})
	})
	if !ok {
		return nil, false, true, wrong
	}
	return calls, recognised, false, wrong
}

// langChainToolCallID reads the call ID of the ToolMessage a TOOL span's output.value (data)
// holds: output.kwargs.tool_call_id. found is false when data holds no such member (the tool
// failed or was interrupted and left no output, or returned something other than a
// ToolMessage, such as a LangGraph Command, or data is not a JSON object); then id and bad
// are "", except that bad is dialect.ReasonInvalidJSON when data is an object that is not
// JSON where it was walked.
// With found, bad is the malformed reason of a tool_call_id that is unusable (empty, null,
// not a string), "" when id is usable.
func langChainToolCallID(data []byte) (id, bad string, found bool) {
	if !isObject(data) {
		return "", "", false
	}
	var out [1][]byte
	if !members(data, []string{jsonOutput}, out[:]) {
		return "", dialect.ReasonInvalidJSON, false
	}
	kw, ok := member(out[0], jsonKwargs)
	if !ok {
		return "", dialect.ReasonInvalidJSON, false
	}
	tc, ok := member(kw, jsonToolCallID)
	if !ok {
		return "", dialect.ReasonInvalidJSON, false
	}
	if tc == nil {
		return "", "", false
	}
	id, bad = stringID(tc)
	return id, bad, true
}

// member returns the raw value of the last member named key of raw when raw is a JSON object
// (nil when it has none, or when raw is no object: a value of another kind has no members).
// ok is false when raw is an object that is not JSON where it was walked.
func member(raw []byte, key string) (v []byte, ok bool) {
	if !isObject(raw) {
		return nil, true
	}
	var out [1][]byte
	if !members(raw, []string{key}, out[:]) {
		return nil, false
	}
	return out[0], true
}

// members reads raw, which must be one JSON object (surrounding white space aside), and sets
// out[i] to the raw bytes of the value of the last member named keys[i], nil when there is
// none. It reports false, with out cleared, when raw is not an object or not JSON where it
// was walked (the values of other members are skipped, see package jsonscan).
func members(raw []byte, keys []string, out [][]byte) bool {
	clear(out)
	var sc jsonscan.Scanner
	sc.Reset(raw)
	if sc.Peek() != jsonscan.Object {
		return false
	}
	sc.Enter(jsonscan.Object)
	for first := true; ; first = false {
		k, esc, more := sc.Key(first)
		if !more {
			break
		}
		i := 0
		for i < len(keys) && !jsonscan.Equal(k, esc, keys[i]) {
			i++
		}
		if i == len(keys) {
			if !sc.Skip() {
				break
			}
			continue
		}
		v, _, ok := sc.Raw()
		if !ok {
			break
		}
		out[i] = v
	}
	if sc.Err() != nil || len(bytes.TrimSpace(raw[sc.Offset():])) != 0 {
		clear(out)
		return false
	}
	return true
}

// elems calls fn with the raw bytes of each element of raw, a JSON array, until fn returns
// false. It returns false when fn did, or when raw is an array that is not JSON where it was
// walked; a raw value that is not an array (nil included) has no elements and returns true.
func elems(raw []byte, fn func(el []byte) bool) bool {
	if !isArray(raw) {
		return true
	}
	var sc jsonscan.Scanner
	sc.Reset(raw)
	sc.Enter(jsonscan.Array)
	for first := true; sc.Elem(first); first = false {
		v, _, ok := sc.Raw()
		if !ok || !fn(v) {
			return false
		}
	}
	return sc.Err() == nil
}

// isObject and isArray report whether raw JSON starts with an object or an array.
func isObject(raw []byte) bool { return kindOf(raw) == jsonscan.Object }

func isArray(raw []byte) bool { return kindOf(raw) == jsonscan.Array }

func kindOf(raw []byte) jsonscan.Kind {
	var sc jsonscan.Scanner
	sc.Reset(raw)
	return sc.Peek()
}

// stringID reads a raw JSON call ID as dialect.Found.JSONCallID does: a string, unescaped and
// not empty; else bad says why not (absent or empty: missing; null; another type: invalid).
func stringID(raw []byte) (id, bad string) {
	var sc jsonscan.Scanner
	sc.Reset(raw)
	switch sc.Peek() {
	case jsonscan.Invalid:
		return "", dialect.ReasonMissingCallID
	case jsonscan.Null:
		return "", dialect.ReasonNullCallID
	case jsonscan.String:
	default:
		return "", dialect.ReasonInvalidCallID
	}
	s, esc, ok := sc.String()
	if !ok {
		return "", dialect.ReasonInvalidJSON
	}
	id, err := jsonscan.Unquote(s, esc)
	switch {
	case err != nil:
		return "", dialect.ReasonInvalidJSON
	case id == "":
		return "", dialect.ReasonMissingCallID
	}
	return id, ""
}

// stringOf returns the unescaped string raw holds, "" when it holds no string.
func stringOf(raw []byte) string {
	var sc jsonscan.Scanner
	sc.Reset(raw)
	if sc.Peek() != jsonscan.String {
		return ""
	}
	s, esc, ok := sc.String()
	if !ok {
		return ""
	}
	out, err := jsonscan.Unquote(s, esc)
	if err != nil {
		return ""
	}
	return out
}

// matchLangChain returns the match hash (see dialect.MatchJSON) of a call of tool whose
// arguments are the raw JSON args (nil: none), in the form LangChain logs a tool's input:
// the OpenInference LangChain instrumentation writes a tool run's inputs as the bare value,
// with input.mime_type text/plain, when they are one string (a call whose arguments object
// has one member, a string: {"command":"echo hello"} is written `echo hello`), and as their
// JSON otherwise. Such a call hashes as that string (dialect.MatchAny, as matchToolInput
// hashes a text/plain input), any other as its arguments. 0 when args is not JSON.
func matchLangChain(tool string, args []byte) uint64 {
	if args == nil {
		h, _ := dialect.MatchJSON(tool, nil)
		return h
	}
	v, ok := dialect.DecodeJSON(args)
	if !ok {
		return 0
	}
	if m, isObj := v.(map[string]any); isObj && len(m) == 1 {
		for _, x := range m {
			if s, isStr := x.(string); isStr {
				return dialect.MatchAny(tool, s)
			}
		}
	}
	return dialect.MatchAny(tool, v)
}
