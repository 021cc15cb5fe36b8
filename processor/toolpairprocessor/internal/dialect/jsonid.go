// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package dialect

import (
	"bytes"
	"errors"
	"strings"

	"github.com/buger/jsonparser"
)

// JSONCallID reads the call ID at the key path of a JSON object. A missing or empty value is
// skipped as ReasonMissingCallID, JSON null as ReasonNullCallID, a value that is not a string
// as ReasonInvalidCallID, and unreadable JSON as ReasonInvalidJSON; then ok is false and the
// call must not pair. The returned string is a copy: it aliases no byte of obj.
func (f *Found) JSONCallID(obj []byte, keys ...string) (id string, ok bool) {
	v, dt, _, err := jsonparser.Get(obj, keys...)
	switch {
	case errors.Is(err, jsonparser.KeyPathNotFoundError):
		f.Skip(ReasonMissingCallID)
	case err != nil:
		f.Skip(ReasonInvalidJSON)
	case dt == jsonparser.Null:
		f.Skip(ReasonNullCallID)
	case dt != jsonparser.String:
		f.Skip(ReasonInvalidCallID)
	default:
		s, err := jsonparser.ParseString(v)
		switch {
		case err != nil:
			f.Skip(ReasonInvalidJSON)
		case s == "":
			f.Skip(ReasonMissingCallID)
		default:
			return strings.Clone(s), true
		}
	}
	return "", false
}

// JSONString returns the string at the key path of a JSON object, unescaped and copied, or
// "" when it is missing, not a string or unreadable (tool names and statuses, which are not
// needed to pair).
func JSONString(obj []byte, keys ...string) string {
	s, err := jsonparser.GetString(obj, keys...)
	if err != nil {
		return ""
	}
	return strings.Clone(s)
}

// EachArrayObject calls fn for each element of the JSON array text array that is an object,
// in order; obj aliases array. Elements that are not objects are skipped and reported once
// per array as ReasonInvalidType, however many there are; text that is not a JSON array
// (surrounding whitespace aside), or an array that does not parse, is reported once as
// ReasonInvalidJSON, and fn may already have been called for the objects before the fault.
func (f *Found) EachArrayObject(array []byte, fn func(obj []byte)) {
	array = bytes.TrimSpace(array)
	if len(array) == 0 || array[0] != '[' {
		f.Skip(ReasonInvalidJSON)
		return
	}
	wrong := false
	_, err := jsonparser.ArrayEach(array, func(el []byte, dt jsonparser.ValueType, _ int, err error) {
		if err != nil {
			return
		}
		if dt != jsonparser.Object {
			if !wrong {
				f.Skip(ReasonInvalidType)
			}
			wrong = true
			return
		}
		fn(el)
	})
	if err != nil {
		f.Skip(ReasonInvalidJSON)
	}
}
