// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package dialect

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEachArrayObject(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		objects   []string
		malformed []string
	}{
		{"objects", ` [{"a":1}, {"b":[2]}] `, []string{`{"a":1}`, `{"b":[2]}`}, nil},
		{"empty array", `[]`, nil, nil},
		{"non-objects reported once", `[1, {"a":1}, "x", null]`, []string{`{"a":1}`}, []string{ReasonInvalidType}},
		{"object, not an array", `{"a":1}`, nil, []string{ReasonInvalidJSON}},
		{"empty", `  `, nil, []string{ReasonInvalidJSON}},
		{"not JSON", `call_1`, nil, []string{ReasonInvalidJSON}},
		{"truncated after an object", `[{"a":1},{"b"`, []string{`{"a":1}`}, []string{ReasonInvalidJSON}},
		{"bad element", `[{"a":1}, tru]`, []string{`{"a":1}`}, []string{ReasonInvalidJSON}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f Found
			var got []string
			f.EachArrayObject([]byte(tt.in), func(obj []byte) { got = append(got, string(obj)) })
			assert.Equal(t, tt.objects, got)
			assert.Equal(t, tt.malformed, f.Malformed)
		})
	}
}
