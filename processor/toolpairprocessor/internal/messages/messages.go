// Package messages finds the tool call parts of GenAI chat history attributes without
// decoding the rest of them.
//
// The OTel GenAI semantic conventions (v1.37+, "gen_ai.input.messages" and
// "gen_ai.output.messages") record a chat history as a JSON array of messages, each
// {"role": ..., "parts": [...], ...}. A part {"type":"tool_call","id","name","arguments"}
// is a model's request to run a tool; a part {"type":"tool_call_response","id","response"}
// carries its result back to the model. These attributes hold whole prompts and tool
// outputs and can be megabytes long, so Scan reads only the "type", "id" and "name" fields of
// each part and skips every other value (arguments, responses, text) without decoding it.
// Instrumentations that record the history as a structured attribute (a slice of maps)
// are read through ScanValue.
package messages

import (
	"bytes"
	"errors"
	"unsafe"

	"github.com/buger/jsonparser"
	"go.opentelemetry.io/collector/pdata/pcommon"
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

// Part is one tool call part. ID and Name are unescaped copies, safe to keep.
type Part struct {
	Type    PartType
	ID      string
	IDState IDState
	Name    string
}

// ErrMalformed is returned (wrapped) when the attribute is not a JSON array of messages or a
// single message object.
var ErrMalformed = errors.New("malformed messages JSON")

var (
	typeToolCall         = []byte("tool_call")
	typeToolCallResponse = []byte("tool_call_response")
	keyParts             = []string{"parts"}
)

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
	return Scan(unsafe.Slice(unsafe.StringData(s), len(s)), fn)
}

// Scan calls fn for every tool call part of a JSON chat history: an array of messages, or
// one message object. data is only read. It returns an error wrapping ErrMalformed when the
// JSON cannot be walked; parts found before the error have been reported.
func Scan(data []byte, fn func(Part)) error {
	data = bytes.TrimLeft(data, " \t\r\n")
	if len(data) == 0 {
		return nil
	}
	var err error
	switch data[0] {
	case '[':
		var inner error
		_, err = jsonparser.ArrayEach(data, func(msg []byte, dt jsonparser.ValueType, _ int, e error) {
			if e != nil {
				inner = e
				return
			}
			if dt == jsonparser.Object && inner == nil {
				inner = scanMessage(msg, fn)
			}
		})
		if err == nil {
			err = inner
		}
	case '{':
		err = scanMessage(data, fn)
	default:
		return ErrMalformed
	}
	if err != nil {
		return errors.Join(ErrMalformed, err)
	}
	return nil
}

func scanMessage(msg []byte, fn func(Part)) error {
	parts, dt, _, err := jsonparser.Get(msg, keyParts...)
	if err != nil {
		if errors.Is(err, jsonparser.KeyPathNotFoundError) {
			return nil
		}
		return err
	}
	if dt != jsonparser.Array {
		return nil
	}
	var inner error
	_, err = jsonparser.ArrayEach(parts, func(part []byte, dt jsonparser.ValueType, _ int, e error) {
		if e != nil {
			inner = e
			return
		}
		if dt == jsonparser.Object && inner == nil {
			inner = scanPart(part, fn)
		}
	})
	if err != nil {
		return err
	}
	return inner
}

func scanPart(part []byte, fn func(Part)) error {
	var (
		p               Part
		id, name        []byte
		idType          = jsonparser.NotExist
		nameIsString    bool
		idNeedsUnescape bool
	)
	err := jsonparser.ObjectEach(part, func(k, v []byte, dt jsonparser.ValueType, _ int) error {
		switch string(k) {
		case "type":
			if dt == jsonparser.String {
				switch {
				case bytes.Equal(v, typeToolCall):
					p.Type = ToolCall
				case bytes.Equal(v, typeToolCallResponse):
					p.Type = ToolCallResponse
				}
			}
		case "id":
			id, idType = v, dt
			idNeedsUnescape = bytes.IndexByte(v, '\\') >= 0
		case "name":
			if dt == jsonparser.String {
				name, nameIsString = v, true
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if p.Type == 0 {
		return nil
	}
	switch idType {
	case jsonparser.String:
		s, err := unescape(id, idNeedsUnescape)
		if err != nil {
			return err
		}
		p.ID = s
		if s == "" {
			p.IDState = IDMissing
		}
	case jsonparser.NotExist:
		p.IDState = IDMissing
	case jsonparser.Null:
		p.IDState = IDNull
	default:
		p.IDState = IDWrongType
	}
	if nameIsString {
		s, err := unescape(name, bytes.IndexByte(name, '\\') >= 0)
		if err != nil {
			return err
		}
		p.Name = s
	}
	fn(p)
	return nil
}

func unescape(v []byte, escaped bool) (string, error) {
	if !escaped {
		return string(v), nil
	}
	return jsonparser.ParseString(v)
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
	parts, ok := msg.Get("parts")
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
		if t, ok := pm.Get("type"); ok && t.Type() == pcommon.ValueTypeStr {
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
		id, ok := pm.Get("id")
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
		if n, ok := pm.Get("name"); ok && n.Type() == pcommon.ValueTypeStr {
			p.Name = n.Str()
		}
		fn(p)
	}
}
