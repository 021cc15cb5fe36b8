// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSkip(t *testing.T) {
	tests := []struct {
		in   string
		ok   bool
		rest string // what follows the skipped value
	}{
		{`"a\"b\\" ,x`, true, ` ,x`},
		{`"\\\\"]`, true, `]`},
		{`{"k":[1,{"s":"}]"}],"t":true} tail`, true, ` tail`},
		{`[[[]]]`, true, ``},
		{`-12.5e3,`, true, `,`},
		{`true}`, true, `}`},
		{`null`, true, ``},
		{`nul`, false, ``},
		{`"open`, false, ``},
		{`{"k":"v"`, false, ``},
		{`"ends in escape\"`, false, ``},
		{``, false, ``},
		{`,`, false, ``},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var s Scanner
			s.Reset([]byte(tt.in))
			assert.Equal(t, tt.ok, s.Skip())
			if tt.ok {
				assert.NoError(t, s.Err())
				assert.Equal(t, tt.rest, tt.in[s.Offset():])
			} else {
				assert.ErrorIs(t, s.Err(), ErrSyntax)
			}
		})
	}
}

func TestWalkObject(t *testing.T) {
	var s Scanner
	s.Reset([]byte(` { "a" : 1 , "b\u0021" : "x\"y" , "c" : [ ] } `))
	require.True(t, s.Enter(Object))
	var keys, values []string
	for first := true; ; first = false {
		k, esc, more := s.Key(first)
		if !more {
			break
		}
		key, err := Unquote(k, esc)
		require.NoError(t, err)
		keys = append(keys, key)
		if s.Peek() == String {
			raw, esc, ok := s.String()
			require.True(t, ok)
			v, err := Unquote(raw, esc)
			require.NoError(t, err)
			values = append(values, v)
		} else {
			require.True(t, s.Skip())
		}
	}
	require.NoError(t, s.Err())
	assert.Equal(t, []string{"a", "b!", "c"}, keys)
	assert.Equal(t, []string{`x"y`}, values)
}

func TestStructureErrors(t *testing.T) {
	for _, in := range []string{`{"a" 1}`, `{"a":1 "b":2}`, `{"a":1,}`, `[1 2]`, `[1,]`, `{1:2}`, `[`, `{`} {
		t.Run(in, func(t *testing.T) {
			var s Scanner
			s.Reset([]byte(in))
			walk(&s)
			assert.ErrorIs(t, s.Err(), ErrSyntax)
		})
	}
}

// walk visits every member and element of the value at the cursor with Enter, Key and
// Elem, skipping scalars.
func walk(s *Scanner) {
	switch s.Peek() {
	case Object:
		s.Enter(Object)
		for first := true; ; first = false {
			if _, _, more := s.Key(first); !more {
				return
			}
			walk(s)
		}
	case Array:
		s.Enter(Array)
		for first := true; s.Elem(first); first = false {
			walk(s)
		}
	default:
		s.Skip()
	}
}

// FuzzScanner checks that neither Skip nor a full walk panics or loops, and that both accept
// every valid JSON document whole.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{`{"a":[1,"x\"",{"b":null}],"c":true}`, `"\\"`, `[{"parts":[{"type":"tool_call","id":"c"}]}]`, `{"a" 1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var s Scanner
		s.Reset([]byte(in))
		skipped := s.Skip()
		s.skipSpace()
		var w Scanner
		w.Reset([]byte(in))
		walk(&w)
		w.skipSpace()
		if json.Valid([]byte(in)) {
			if !skipped || s.Offset() != len(in) {
				t.Fatalf("Skip stopped at %d of valid %q: %v", s.Offset(), in, s.Err())
			}
			if w.Err() != nil || w.Offset() != len(in) {
				t.Fatalf("walk stopped at %d of valid %q: %v", w.Offset(), in, w.Err())
			}
		}
	})
}

// TestLoose: Skip accepts a number holding other bytes and brackets that do not pair, as it
// did, and says so; valid JSON is never loose below 64 levels.
func TestLoose(t *testing.T) {
	for _, tt := range []struct {
		in    string
		loose bool
	}{
		{`{"a":[1,-2.5e+3,{"b":[]}],"c":"]}{["}`, false},
		{`[1e5, 0.5, -1]`, false},
		{`1"a"`, true},
		{`{"a":[}]`, true},
		{`[{]}`, true},
		{`{"x":{"y":[}, "type":"user"]}`, true},
		{strings.Repeat("[", 64) + strings.Repeat("]", 64), false},
		{strings.Repeat("[", 65) + strings.Repeat("]", 65), true},
	} {
		var s Scanner
		s.Reset([]byte(tt.in))
		require.True(t, s.Skip(), tt.in)
		require.Equal(t, tt.loose, s.Loose(), tt.in)
		if !tt.loose {
			require.True(t, json.Valid([]byte(tt.in)), tt.in)
		}
		s.Reset(nil)
		require.False(t, s.Loose(), "Reset clears it")
	}
	// A number walked to as a member's value.
	var s Scanner
	s.Reset([]byte(`{"a":1"b":2}`))
	require.True(t, s.Enter(Object))
	_, _, more := s.Key(true)
	require.True(t, more)
	require.True(t, s.Skip())
	require.True(t, s.Loose())
}
