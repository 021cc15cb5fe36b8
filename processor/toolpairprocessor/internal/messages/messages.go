// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package messages finds the tool call parts of GenAI chat history attributes without
// decoding the rest of them.
//
// The OTel GenAI semantic conventions (v1.37+, "gen_ai.input.messages" and
// "gen_ai.output.messages") record a chat history as a JSON array of messages, each
// {"role": ..., "parts": [...], ...}. A part {"type":"tool_call","id","name","arguments"}
// is a model's request to run a tool; a part {"type":"tool_call_response","id","response"}
// carries its result back to the model. These attributes hold whole prompts and tool
// outputs and can be megabytes long, so Scan reads only the "type", "id" and "name" fields of
// each part, hands over the bytes of its "arguments" undecoded, and skips every other value
// (responses, text) without decoding it.
// Instrumentations that record the history as a structured attribute (a slice of maps)
// are read through ScanValue.
package messages

import (
	"bytes"
	"errors"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/jsonscan"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/readonly"
)

// PartType is the type of a message part that concerns a tool call.
type PartType uint8

const (
	// ToolCall is a {"type":"tool_call"} part: a tool_use.
	ToolCall PartType = iota + 1
	// ToolCallResponse is a {"type":"tool_call_response"} part: a tool_result.
	ToolCallResponse
)

// IDState says whether a part carried a usable call ID.
type IDState uint8

const (
	// IDPresent: "id" is a non-empty string.
	IDPresent IDState = iota
	// IDMissing: the part has no "id" key, or it is "".
	IDMissing
	// IDNull: "id" is JSON null (the semconv allows it when the provider gives none).
	IDNull
	// IDWrongType: "id" is a number, object, array or boolean.
	IDWrongType
)

// String names the state, as used in the malformed-input counter's reason attribute.
func (s IDState) String() string {
	switch s {
	case IDPresent:
		return "present"
	case IDMissing:
		return "missing_call_id"
	case IDNull:
		return "null_call_id"
	default:
		return "invalid_call_id"
	}
}

// Part is one tool call part. ID and Name are unescaped and safe to keep: copies when Scan
// read a byte slice; from ScanString, when the JSON string holds no escape, substrings of
// the (immutable) string, which they keep alive while they are referenced.
type Part struct {
	Type    PartType
	ID      string
	IDState IDState
	Name    string
	// Arguments is the raw JSON text of the part's "arguments" value (an object, or a string
	// holding one), nil when it has none or was read from a structured value. It aliases
	// the scanned input: valid only while fn runs, and never to be modified.
	Arguments []byte
	// ArgumentsValue is the "arguments" value of a part read from a structured attribute
	// (ScanValue of a slice or map); the zero Value otherwise (a part without arguments, or
	// read from JSON text), on which only a comparison with pcommon.Value{} is safe.
	ArgumentsValue pcommon.Value
}

// ErrMalformed is returned (wrapped) when the attribute is not a JSON array of messages or a
// single message object.
var ErrMalformed = errors.New("malformed messages JSON")

// ErrWrongType is returned when a chat history attribute is neither a string nor a
// structured (slice or map) value.
var ErrWrongType = errors.New("messages attribute of a wrong type")

// ScanString calls fn for every tool call part of a JSON chat history held in a string,
// without copying the string. It returns an error wrapping ErrMalformed when the JSON
// cannot be walked; parts found before the error have been reported.
func ScanString(s string, fn func(Part)) error {
	if s == "" {
		return nil
	}
	return scan(readonly.Bytes(s), true, fn)
}

// Scan calls fn for every tool call part of a JSON chat history: an array of messages, or
// one message object. data is only read, in one pass (see package jsonscan): everything but
// the messages' "parts" arrays and the parts' "type", "id" and "name" is skipped undecoded
// (a part's "arguments" is passed on as its raw bytes).
// It returns an error wrapping ErrMalformed when the JSON cannot be walked; parts found
// before the error have been reported. Of duplicate "parts" keys the first is read; of
// duplicate keys within a part, the last.
func Scan(data []byte, fn func(Part)) error {
	return scan(data, false, fn)
}

// scan is Scan; immutable says data is a string's memory, whose unescaped strings need no
// copy.
func scan(data []byte, immutable bool, fn func(Part)) error {
	var sc jsonscan.Scanner
	sc.Reset(data)
	switch sc.Peek() {
	case jsonscan.Invalid:
		if len(bytes.TrimLeft(data, " \t\r\n")) == 0 {
			return nil
		}
		return ErrMalformed
	case jsonscan.Array:
		sc.Enter(jsonscan.Array)
		for first := true; sc.Elem(first); first = false {
			if sc.Peek() == jsonscan.Object {
				scanMessage(&sc, immutable, fn)
			} else {
				sc.Skip()
			}
		}
	case jsonscan.Object:
		scanMessage(&sc, immutable, fn)
	default:
		return ErrMalformed
	}
	if err := sc.Err(); err != nil {
		return errors.Join(ErrMalformed, err)
	}
	return nil
}

// scanMessage reads one message object at the cursor.
func scanMessage(sc *jsonscan.Scanner, immutable bool, fn func(Part)) {
	sc.Enter(jsonscan.Object)
	seenParts := false
	for first := true; ; first = false {
		key, esc, more := sc.Key(first)
		if !more {
			return
		}
		isParts := !seenParts && jsonscan.Equal(key, esc, "parts")
		seenParts = seenParts || isParts
		if !isParts || sc.Peek() != jsonscan.Array {
			if !sc.Skip() {
				return
			}
			continue
		}
		sc.Enter(jsonscan.Array)
		for pfirst := true; sc.Elem(pfirst); pfirst = false {
			if sc.Peek() == jsonscan.Object {
				scanPart(sc, immutable, fn)
			} else if !sc.Skip() {
				return
			}
		}
		if sc.Err() != nil {
			return
		}
	}
}

// The keys of a part that Scan reads.
const (
	keyOther = iota
	keyType
	keyID
	keyName
	keyArguments
)

// partKey returns which key of a part raw is.
func partKey(raw []byte, escaped bool) int {
	if escaped {
		k, err := jsonscan.Unquote(raw, true)
		if err != nil {
			return keyOther
		}
		raw = []byte(k)
	}
	switch string(raw) {
	case "type":
		return keyType
	case "id":
		return keyID
	case "name":
		return keyName
	case "arguments":
		return keyArguments
	}
	return keyOther
}

// scanPart reads one part object at the cursor and reports it when it is a tool call part.
func scanPart(sc *jsonscan.Scanner, immutable bool, fn func(Part)) {
	var (
		p            Part
		id, name     []byte
		idEsc, nmEsc bool
		idKind       = jsonscan.Invalid // Invalid: no "id" key
		nameIsString bool
	)
	sc.Enter(jsonscan.Object)
	for first := true; ; first = false {
		key, esc, more := sc.Key(first)
		if !more {
			break
		}
		switch partKey(key, esc) {
		case keyType:
			if sc.Peek() == jsonscan.String {
				raw, e, ok := sc.String()
				if !ok {
					return
				}
				switch {
				case jsonscan.Equal(raw, e, "tool_call"):
					p.Type = ToolCall
				case jsonscan.Equal(raw, e, "tool_call_response"):
					p.Type = ToolCallResponse
				}
				continue
			}
		case keyID:
			idKind = sc.Peek()
			if idKind == jsonscan.String {
				var ok bool
				if id, idEsc, ok = sc.String(); !ok {
					return
				}
				continue
			}
		case keyName:
			if sc.Peek() == jsonscan.String {
				var ok bool
				if name, nmEsc, ok = sc.String(); !ok {
					return
				}
				nameIsString = true
				continue
			}
		case keyArguments:
			raw, _, ok := sc.Raw()
			if !ok {
				return
			}
			p.Arguments = raw
			continue
		}
		if !sc.Skip() {
			return
		}
	}
	if sc.Err() != nil || p.Type == 0 {
		return
	}
	switch idKind {
	case jsonscan.String:
		s, err := unquote(id, idEsc, immutable)
		if err != nil {
			return
		}
		p.ID = s
		if s == "" {
			p.IDState = IDMissing
		}
	case jsonscan.Invalid:
		p.IDState = IDMissing
	case jsonscan.Null:
		p.IDState = IDNull
	default:
		p.IDState = IDWrongType
	}
	if nameIsString {
		s, err := unquote(name, nmEsc, immutable)
		if err != nil {
			return
		}
		p.Name = s
	}
	fn(p)
}

// unquote is jsonscan.Unquote, without a copy when raw is unescaped and immutable.
func unquote(raw []byte, escaped, immutable bool) (string, error) {
	if immutable && !escaped {
		return readonly.String(raw), nil
	}
	return jsonscan.Unquote(raw, escaped)
}

// ScanValue calls fn for every tool call part of a chat history attribute of any shape: a
// JSON string (see Scan), or a structured value (a slice of message maps, or one message
// map) as some instrumentations record it. Other value types give ErrWrongType.
func ScanValue(v pcommon.Value, fn func(Part)) error {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return ScanString(v.Str(), fn)
	case pcommon.ValueTypeBytes:
		return Scan(v.Bytes().AsRaw(), fn)
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		for i := 0; i < s.Len(); i++ {
			if m := s.At(i); m.Type() == pcommon.ValueTypeMap {
				scanMessageMap(m.Map(), fn)
			}
		}
		return nil
	case pcommon.ValueTypeMap:
		scanMessageMap(v.Map(), fn)
		return nil
	case pcommon.ValueTypeEmpty:
		return nil
	default:
		return ErrWrongType
	}
}

func scanMessageMap(msg pcommon.Map, fn func(Part)) {
	parts, ok := fields.Get(msg, "parts")
	if !ok || parts.Type() != pcommon.ValueTypeSlice {
		return
	}
	ps := parts.Slice()
	for i := 0; i < ps.Len(); i++ {
		pv := ps.At(i)
		if pv.Type() != pcommon.ValueTypeMap {
			continue
		}
		pm := pv.Map()
		var p Part
		if t, ok := fields.Get(pm, "type"); ok && t.Type() == pcommon.ValueTypeStr {
			switch t.Str() {
			case "tool_call":
				p.Type = ToolCall
			case "tool_call_response":
				p.Type = ToolCallResponse
			}
		}
		if p.Type == 0 {
			continue
		}
		id, ok := fields.Get(pm, "id")
		switch {
		case !ok:
			p.IDState = IDMissing
		case id.Type() == pcommon.ValueTypeStr:
			p.ID = id.Str()
			if p.ID == "" {
				p.IDState = IDMissing
			}
		case id.Type() == pcommon.ValueTypeEmpty:
			p.IDState = IDNull
		default:
			p.IDState = IDWrongType
		}
		if n, ok := fields.Get(pm, "name"); ok && n.Type() == pcommon.ValueTypeStr {
			p.Name = n.Str()
		}
		if a, ok := fields.Get(pm, "arguments"); ok {
			p.ArgumentsValue = a
		}
		fn(p)
	}
}
