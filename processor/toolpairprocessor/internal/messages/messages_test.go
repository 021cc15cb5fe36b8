// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package messages

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

func collect(t *testing.T, s string) ([]Part, error) {
	t.Helper()
	var parts []Part
	err := ScanString(s, func(p Part) { parts = append(parts, p) })
	return parts, err
}

func TestScan(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []Part
		wantErr bool
	}{
		{
			name: "AI SDK v7 output messages with two parallel calls",
			in:   `[{"role":"assistant","parts":[{"type":"tool_call","id":"call_mock_parallel_01","name":"run_shell","arguments":{"command":"echo hello"}},{"type":"tool_call","id":"call_mock_parallel_02","name":"read_file","arguments":{"file_path":"/tmp/notes.txt"}}],"finish_reason":"tool_call"}]`,
			want: []Part{
				{Type: ToolCall, ID: "call_mock_parallel_01", Name: "run_shell", Arguments: []byte(`{"command":"echo hello"}`)},
				{Type: ToolCall, ID: "call_mock_parallel_02", Name: "read_file", Arguments: []byte(`{"file_path":"/tmp/notes.txt"}`)},
			},
		},
		{
			name: "input history with a response, text parts skipped",
			in:   `[{"role":"user","parts":[{"type":"text","content":"hi \"there\" [x]"}]},{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":{"id":"not me","type":"tool_call"}}]}]`,
			want: []Part{{Type: ToolCallResponse, ID: "c1"}},
		},
		{
			name: "single message object",
			in:   `{"role":"assistant","parts":[{"name":"ls","id":"c2","type":"tool_call"}]}`,
			want: []Part{{Type: ToolCall, ID: "c2", Name: "ls"}},
		},
		{
			name: "null, missing, empty and numeric ids",
			in:   `[{"parts":[{"type":"tool_call","id":null,"name":"a"},{"type":"tool_call","name":"b"},{"type":"tool_call","id":"","name":"c"},{"type":"tool_call","id":7,"name":"d"}]}]`,
			want: []Part{
				{Type: ToolCall, IDState: IDNull, Name: "a"},
				{Type: ToolCall, IDState: IDMissing, Name: "b"},
				{Type: ToolCall, IDState: IDMissing, Name: "c"},
				{Type: ToolCall, IDState: IDWrongType, Name: "d"},
			},
		},
		{
			name: "escaped id and name",
			in:   `[{"parts":[{"type":"tool_call","id":"c\u0031\"x","name":"r\\n"}]}]`,
			want: []Part{{Type: ToolCall, ID: "c1\"x", Name: `r\n`}},
		},
		{
			name: "arguments as a string, passed on raw",
			in:   `[{"parts":[{"type":"tool_call","id":"c3","arguments":"{\"a\": 1}","name":"x"}]}]`,
			want: []Part{{Type: ToolCall, ID: "c3", Name: "x", Arguments: []byte(`"{\"a\": 1}"`)}},
		},
		{name: "no parts", in: `[{"role":"user","content":"x"},{"role":"assistant","parts":"oops"}]`},
		{name: "empty", in: ``},
		{name: "empty array", in: ` [ ] `},
		{name: "not JSON", in: `hello`, wantErr: true},
		{name: "truncated", in: `[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"x"},{"type":"tool_c`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := collect(t, tt.in)
			if tt.wantErr {
				require.ErrorIs(t, err, ErrMalformed)
			} else {
				require.NoError(t, err)
			}
			if !tt.wantErr || tt.want != nil {
				assert.Equal(t, tt.want, got)
			}
		})
	}
}

func TestScanValueStructured(t *testing.T) {
	v := pcommon.NewValueSlice()
	msg := v.Slice().AppendEmpty().SetEmptyMap()
	msg.PutStr("role", "assistant")
	parts := msg.PutEmptySlice("parts")
	p := parts.AppendEmpty().SetEmptyMap()
	p.PutStr("type", "tool_call")
	p.PutStr("id", "c9")
	p.PutStr("name", "grep")
	p.PutEmptyMap("arguments").PutStr("pattern", "x")
	p2 := parts.AppendEmpty().SetEmptyMap()
	p2.PutStr("type", "tool_call_response")
	p2.PutInt("id", 3)
	parts.AppendEmpty().SetStr("not a map")

	var got []Part
	require.NoError(t, ScanValue(v, func(p Part) { got = append(got, p) }))
	require.Len(t, got, 2)
	assert.Equal(t, map[string]any{"pattern": "x"}, got[0].ArgumentsValue.AsRaw())
	got[0].ArgumentsValue = pcommon.Value{}
	assert.Equal(t, []Part{{Type: ToolCall, ID: "c9", Name: "grep"}, {Type: ToolCallResponse, IDState: IDWrongType}}, got)

	assert.ErrorIs(t, ScanValue(pcommon.NewValueInt(3), func(Part) {}), ErrWrongType)
	assert.NoError(t, ScanValue(pcommon.NewValueEmpty(), func(Part) {}))
}

func TestScanLargeContentIsSkipped(t *testing.T) {
	big := strings.Repeat(`{\"k\":[1,2,3],\"s\":\"xx\"}`, 100_000)
	in := `[{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":"` + big + `"}]},{"role":"assistant","parts":[{"type":"tool_call","id":"c2","name":"n"}]}]`
	got, err := collect(t, in)
	require.NoError(t, err)
	assert.Equal(t, []Part{{Type: ToolCallResponse, ID: "c1"}, {Type: ToolCall, ID: "c2", Name: "n"}}, got)
}

// FuzzScan checks that no input panics, and that whatever Scan reports agrees with a full
// encoding/json decode whenever the input is valid JSON.
func FuzzScan(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var got []Part
		err := ScanString(s, func(p Part) { got = append(got, p) })
		if err != nil || hasDuplicateKeys(s) {
			return // encoding/json keeps the last of duplicate keys, Scan the first "parts"
		}
		var msgs []map[string]any
		if json.Unmarshal([]byte(s), &msgs) != nil {
			return
		}
		var want int
		for _, m := range msgs {
			parts, _ := m["parts"].([]any)
			for _, p := range parts {
				if pm, ok := p.(map[string]any); ok && (pm["type"] == "tool_call" || pm["type"] == "tool_call_response") {
					want++
				}
			}
		}
		if len(got) != want {
			t.Fatalf("Scan found %d tool parts, encoding/json %d, in %q", len(got), want, s)
		}
	})
}

// hasDuplicateKeys reports whether any JSON object in s repeats a key (or s is not JSON).
func hasDuplicateKeys(s string) bool {
	dec := json.NewDecoder(strings.NewReader(s))
	type frame struct {
		keys   map[string]bool
		object bool
		expect bool // the next string token of an object is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return err.Error() != "EOF"
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.expect {
			if k, ok := tok.(string); ok {
				if top.keys[k] {
					return true
				}
				top.keys[k] = true
				top.expect = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]bool{}, object: true, expect: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].expect = true
		}
	}
}

var seeds = []string{
	`[{"role":"assistant","parts":[{"type":"tool_call","id":"call_mock_normal_01","name":"run_shell","arguments":{"command":"echo hello"}}],"finish_reason":"tool_call"}]`,
	`[{"role":"user","parts":[{"type":"text","content":"Run it"}]},{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"run_shell","arguments":{"command":"echo hello"}}]},{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":"hello\n"}]}]`,
	`{"parts":[{"type":"tool_call","id":null}]}`,
	`[1,"x",null,{"parts":{}}]`,
	`[{"parts":[{"type":"tool_call","id":"\ud83d\ude00"}]}]`,
}
