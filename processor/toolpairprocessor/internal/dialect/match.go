// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package dialect

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"hash"
	"hash/fnv"
	"slices"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// A match hash (pairing.Event.Match) ties a result record that carries no call ID (an
// OpenLLMetry or OpenInference tool span) to the call it ran: a 64-bit FNV-1a hash of the
// tool name and the call's arguments in a canonical form, so that the arguments a model
// wrote and the arguments the tool received hash alike however each side serialised them:
// object keys sorted, numbers compared by value (1, 1.0 and 1e0 are one number),
// insignificant whitespace ignored, and arguments held as a JSON string inside JSON (the
// OpenAI wire form) read as the JSON they hold. Absent or empty arguments are the empty
// object. It is never 0.

// InTrace returns match hash h bound to the trace tid, so that a result matches only the calls
// of its own trace even when its scope (a session ID) spans several traces: the specification
// matches a tool span to "the pending call of its trace". 0 stays 0 (nothing to match).
func InTrace(h uint64, tid pcommon.TraceID) uint64 {
	if h == 0 {
		return 0
	}
	f := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], h)
	f.Write(b[:])
	f.Write(tid[:])
	if s := f.Sum64(); s != 0 {
		return s
	}
	return 1
}

// MatchJSON returns the match hash of a call of tool whose arguments are the JSON text args.
// ok is false when args is not one JSON value.
func MatchJSON(tool string, args []byte) (h uint64, ok bool) {
	v, ok := decodeArgs(args)
	if !ok {
		return 0, false
	}
	return matchHash(tool, v), true
}

// MatchValue returns the match hash of a call of tool whose arguments are the attribute
// value v: a map or slice, or a string holding JSON text (see MatchJSON), or a scalar; an
// empty value, or the zero Value (no arguments read), hashes as no arguments ({}). ok is
// false when a string does not hold one JSON value.
func MatchValue(tool string, v pcommon.Value) (h uint64, ok bool) {
	if v == (pcommon.Value{}) {
		return matchHash(tool, map[string]any{}), true
	}
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return MatchJSON(tool, []byte(v.Str()))
	case pcommon.ValueTypeEmpty:
		return matchHash(tool, map[string]any{}), true
	}
	return matchHash(tool, v.AsRaw()), true
}

// MatchAny returns the match hash of a call of tool whose arguments are v, a value decoded
// from JSON (with json.Number or float64 numbers) or from pcommon (AsRaw).
func MatchAny(tool string, v any) uint64 {
	if s, ok := v.(string); ok {
		if inner, ok := decodeArgs([]byte(s)); ok {
			v = inner
		}
	}
	return matchHash(tool, v)
}

// decodeArgs decodes JSON text; empty text is the empty object, and a JSON string whose
// content is itself a JSON object or array is that object or array.
func decodeArgs(data []byte) (any, bool) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return map[string]any{}, true
	}
	v, ok := DecodeJSON(data)
	if !ok {
		return nil, false
	}
	if s, isStr := v.(string); isStr {
		inner := bytes.TrimSpace([]byte(s))
		if len(inner) == 0 {
			return map[string]any{}, true
		}
		if inner[0] == '{' || inner[0] == '[' {
			if iv, ok := DecodeJSON(inner); ok {
				return iv, true
			}
		}
	}
	return v, true
}

// DecodeJSON decodes data, which must be exactly one JSON value (surrounding whitespace
// aside), into the types encoding/json gives an any (map[string]any, []any, string, bool,
// nil), with numbers as json.Number so that no precision is lost before a match hash reads
// them; ok is false when data is not one valid JSON value. data is only read.
func DecodeJSON(data []byte) (any, bool) {
	if !json.Valid(data) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	return v, true
}

func matchHash(tool string, v any) uint64 {
	h := fnv.New64a()
	writeStr(h, tool)
	writeCanonical(h, v)
	if s := h.Sum64(); s != 0 {
		return s
	}
	return 1
}

func writeStr(h hash.Hash64, s string) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
	h.Write(n[:])
	h.Write([]byte(s))
}

// writeCanonical writes v in a canonical form: a type tag, then its content.
func writeCanonical(h hash.Hash64, v any) {
	switch x := v.(type) {
	case nil:
		h.Write([]byte{'n'})
	case bool:
		if x {
			h.Write([]byte{'t'})
		} else {
			h.Write([]byte{'f'})
		}
	case string:
		h.Write([]byte{'s'})
		writeStr(h, x)
	case json.Number:
		if f, err := strconv.ParseFloat(string(x), 64); err == nil {
			writeNumber(h, f)
		} else {
			h.Write([]byte{'N'})
			writeStr(h, string(x))
		}
	case float64:
		writeNumber(h, x)
	case int64:
		writeNumber(h, float64(x))
	case []byte:
		h.Write([]byte{'b'})
		writeStr(h, string(x))
	case []any:
		h.Write([]byte{'a'})
		writeStr(h, strconv.Itoa(len(x)))
		for _, e := range x {
			writeCanonical(h, e)
		}
	case map[string]any:
		h.Write([]byte{'o'})
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		writeStr(h, strconv.Itoa(len(keys)))
		for _, k := range keys {
			writeStr(h, k)
			writeCanonical(h, x[k])
		}
	default:
		h.Write([]byte{'?'})
	}
}

func writeNumber(h hash.Hash64, f float64) {
	h.Write([]byte{'d'})
	writeStr(h, strconv.FormatFloat(f, 'g', -1, 64))
}
