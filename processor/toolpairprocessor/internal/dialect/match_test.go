// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package dialect

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

func TestMatchJSON(t *testing.T) {
	base, ok := MatchJSON("run_shell", []byte(`{"command":"echo hello","timeout":2}`))
	assert.True(t, ok)
	assert.NotZero(t, base)
	tests := []struct {
		name string
		tool string
		args string
		same bool
		bad  bool
	}{
		{name: "keys in another order, other spacing", tool: "run_shell", args: `{ "timeout": 2, "command": "echo hello" }`, same: true},
		{name: "a number written otherwise", tool: "run_shell", args: `{"command":"echo hello","timeout":2.0}`, same: true},
		{name: "arguments held in a JSON string", tool: "run_shell", args: `"{\"command\": \"echo hello\", \"timeout\": 2}"`, same: true},
		{name: "another tool", tool: "read_file", args: `{"command":"echo hello","timeout":2}`},
		{name: "another value", tool: "run_shell", args: `{"command":"echo hullo","timeout":2}`},
		{name: "a number as a string", tool: "run_shell", args: `{"command":"echo hello","timeout":"2"}`},
		{name: "an extra key", tool: "run_shell", args: `{"command":"echo hello","timeout":2,"x":null}`},
		{name: "a key moved into the tool name", tool: "run_shellcommand", args: `{"":"echo hello","timeout":2}`},
		{name: "not JSON", tool: "run_shell", args: `{"command":`, bad: true},
		{name: "two values", tool: "run_shell", args: `{} {}`, bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, ok := MatchJSON(tt.tool, []byte(tt.args))
			assert.Equal(t, !tt.bad, ok)
			if tt.bad {
				return
			}
			assert.Equal(t, tt.same, h == base)
		})
	}
}

func TestMatchEmptyArguments(t *testing.T) {
	empty, ok := MatchJSON("ls", nil)
	assert.True(t, ok)
	for _, args := range []string{`{}`, ` `, `""`, `" {} "`} {
		h, ok := MatchJSON("ls", []byte(args))
		assert.True(t, ok, args)
		assert.Equal(t, empty, h, args)
	}
	assert.Equal(t, empty, mustValue(t, "ls", pcommon.NewValueEmpty()))
	assert.Equal(t, empty, MatchAny("ls", map[string]any{}))
}

func TestMatchValueAgreesWithJSON(t *testing.T) {
	want, _ := MatchJSON("read_file", []byte(`{"file_path":"/tmp/a","limit":10,"opts":[true,null,1.5]}`))
	m := pcommon.NewValueMap()
	m.Map().PutStr("file_path", "/tmp/a")
	m.Map().PutInt("limit", 10)
	s := m.Map().PutEmptySlice("opts")
	s.AppendEmpty().SetBool(true)
	s.AppendEmpty()
	s.AppendEmpty().SetDouble(1.5)
	assert.Equal(t, want, mustValue(t, "read_file", m))
	assert.Equal(t, want, mustValue(t, "read_file", pcommon.NewValueStr(`{"opts":[true,null,1.5],"limit":10,"file_path":"/tmp/a"}`)))
	assert.Equal(t, want, MatchAny("read_file", `{"limit":10,"file_path":"/tmp/a","opts":[true,null,1.5]}`))
	_, ok := MatchValue("read_file", pcommon.NewValueStr("not json"))
	assert.False(t, ok)
}

func mustValue(t *testing.T, tool string, v pcommon.Value) uint64 {
	t.Helper()
	h, ok := MatchValue(tool, v)
	assert.True(t, ok)
	return h
}

func TestInTrace(t *testing.T) {
	h, _ := MatchJSON("ls", []byte(`{}`))
	a, b := InTrace(h, pcommon.TraceID{1}), InTrace(h, pcommon.TraceID{2})
	assert.NotEqual(t, a, b, "another trace, another hash")
	assert.NotEqual(t, h, a)
	assert.Equal(t, a, InTrace(h, pcommon.TraceID{1}))
	assert.Zero(t, InTrace(0, pcommon.TraceID{1}), "nothing to match stays nothing")
}

func TestDecodeJSON(t *testing.T) {
	tests := []struct {
		in   string
		want any
		ok   bool
	}{
		{` {"a": 1.0, "b": [true, null, "x"]} `, map[string]any{"a": json.Number("1.0"), "b": []any{true, nil, "x"}}, true},
		{`12345678901234567890`, json.Number("12345678901234567890"), true},
		{`"s"`, "s", true},
		{``, nil, false},
		{`1 2`, nil, false},
		{`{"a":1}}`, nil, false},
		{`{"a":`, nil, false},
	}
	for _, tt := range tests {
		got, ok := DecodeJSON([]byte(tt.in))
		assert.Equal(t, tt.ok, ok, "%q", tt.in)
		assert.Equal(t, tt.want, got, "%q", tt.in)
	}
}
