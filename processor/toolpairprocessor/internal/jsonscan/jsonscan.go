// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package jsonscan reads JSON text in one forward pass without decoding what the caller does
// not ask for. It is made for picking a few small fields out of large documents (GenAI chat
// histories, agent transcript lines): string contents are skipped with vectorised byte
// searches, and a skipped object or array costs one pass over its bytes and no allocation.
//
// The scanner checks the structure it walks (brackets, colons, commas, string ends) and fails
// on any input that is not JSON there; inside values it skips, it only matches brackets and
// string ends, so some invalid JSON inside a skipped value is accepted (Loose tells when it
// was). On valid JSON it reads exactly what encoding/json would.
package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
)

// ErrSyntax is returned (wrapped, with the offset) when the input is not JSON where the
// scanner reads it.
var ErrSyntax = errors.New("invalid JSON")

// Kind is the kind of the next value, as Peek tells it from the value's first byte.
type Kind uint8

const (
	// Invalid: the input ends, or the next byte starts no JSON value.
	Invalid Kind = iota
	// String: the next byte is '"'.
	String
	// Number: the next byte is '-' or a digit.
	Number
	// Object: the next byte is '{'.
	Object
	// Array: the next byte is '['.
	Array
	// True: the next byte is 't' (the rest of the literal is checked when it is consumed).
	True
	// False: the next byte is 'f' (likewise).
	False
	// Null: the next byte is 'n' (likewise).
	Null
)

// Scanner is a cursor over JSON text. The zero value scans nothing; use Reset.
type Scanner struct {
	data  []byte
	pos   int
	err   error
	loose bool
}

// Reset makes s scan data from its start.
func (s *Scanner) Reset(data []byte) {
	*s = Scanner{data: data}
}

// Err returns the first syntax error met, or nil.
func (s *Scanner) Err() error { return s.err }

// Loose reports whether a value skipped so far (by Skip or Raw) was accepted although it is
// not JSON in a way that can change where another reader finds its end or the members around
// it: a number holding bytes no number has (`1"a"`), or a container whose brackets do not pair
// (`{"a":[}]`, or nested deeper than 64 levels, which are not checked). Inside a container only
// brackets and string ends are looked at. When s is not loose, a reader that skips strings and
// containers as it does (as github.com/buger/jsonparser does) finds the same members at the
// levels s walked.
func (s *Scanner) Loose() bool { return s.loose }

// Offset returns the cursor's offset in the input.
func (s *Scanner) Offset() int { return s.pos }

func (s *Scanner) fail() bool {
	if s.err == nil {
		s.err = &SyntaxError{Offset: s.pos}
	}
	s.pos = len(s.data)
	return false
}

// SyntaxError is the error of a scan that met input that is not JSON.
type SyntaxError struct {
	// Offset is where the scanner stopped, in bytes from the input's start.
	Offset int
}

// Error returns "invalid JSON near offset N", N the byte offset.
func (e *SyntaxError) Error() string { return "invalid JSON near offset " + itoa(e.Offset) }

// Unwrap returns ErrSyntax.
func (e *SyntaxError) Unwrap() error { return ErrSyntax }

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

func (s *Scanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// Peek returns the kind of the next value, after white space, without consuming it.
func (s *Scanner) Peek() Kind {
	s.skipSpace()
	if s.pos >= len(s.data) {
		return Invalid
	}
	switch c := s.data[s.pos]; c {
	case '"':
		return String
	case '{':
		return Object
	case '[':
		return Array
	case 't':
		return True
	case 'f':
		return False
	case 'n':
		return Null
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return Number
		}
		return Invalid
	}
}

// String consumes the next value, which must be a string, and returns its raw contents
// (between the quotes, escapes not decoded; a sub-slice of the input) and whether it holds
// an escape. ok is false on a syntax error.
func (s *Scanner) String() (raw []byte, escaped, ok bool) {
	if s.Peek() != String {
		return nil, false, s.fail()
	}
	start := s.pos + 1
	end, ok := stringEnd(s.data, start)
	if !ok {
		return nil, false, s.fail()
	}
	s.pos = end + 1
	raw = s.data[start:end]
	return raw, bytes.IndexByte(raw, '\\') >= 0, true
}

// stringEnd returns the index of the quote that closes the string whose contents start at
// from: the first quote preceded by an even number of backslashes.
func stringEnd(data []byte, from int) (end int, ok bool) {
	i := from
	for {
		q := bytes.IndexByte(data[i:], '"')
		if q < 0 {
			return 0, false
		}
		end = i + q
		n := 0
		for k := end - 1; k >= from && data[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return end, true
		}
		i = end + 1
	}
}

// Unquote decodes the raw contents of a string as String returned them.
func Unquote(raw []byte, escaped bool) (string, error) {
	if !escaped {
		return string(raw), nil
	}
	q := make([]byte, 0, len(raw)+2)
	q = append(q, '"')
	q = append(q, raw...)
	q = append(q, '"')
	var out string
	if err := json.Unmarshal(q, &out); err != nil {
		return "", errors.Join(ErrSyntax, err)
	}
	return out, nil
}

// Equal reports whether the raw contents of a string equal want (decoding escapes only when
// there are some).
func Equal(raw []byte, escaped bool, want string) bool {
	if !escaped {
		return string(raw) == want
	}
	s, err := Unquote(raw, true)
	return err == nil && s == want
}

// Skip consumes the next value, whatever it is. It returns false on a syntax error.
func (s *Scanner) Skip() bool {
	switch s.Peek() {
	case String:
		// Not s.String: a skipped string needs no search for escapes.
		end, ok := stringEnd(s.data, s.pos+1)
		if !ok {
			return s.fail()
		}
		s.pos = end + 1
		return true
	case Object, Array:
		return s.skipContainer()
	case Number:
		return s.skipScalar()
	case True:
		return s.literal("true")
	case False:
		return s.literal("false")
	case Null:
		return s.literal("null")
	default:
		return s.fail()
	}
}

func (s *Scanner) literal(lit string) bool {
	if !bytes.HasPrefix(s.data[s.pos:], []byte(lit)) {
		return s.fail()
	}
	s.pos += len(lit)
	return true
}

// Raw consumes the next value and returns its bytes (a sub-slice of the input) and kind. ok is
// false on a syntax error.
func (s *Scanner) Raw() (raw []byte, kind Kind, ok bool) {
	kind = s.Peek()
	start := s.pos
	if !s.Skip() {
		return nil, Invalid, false
	}
	return s.data[start:s.pos], kind, true
}

// IsNull consumes the next value when it is null and reports whether it was.
func (s *Scanner) IsNull() bool {
	return s.Peek() == Null && s.literal("null")
}

func (s *Scanner) skipScalar() bool {
	start := s.pos
	for s.pos < len(s.data) {
		switch c := s.data[s.pos]; c {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return s.pos > start || s.fail()
		default:
			if !numberByte(c) {
				s.loose = true
			}
		}
		s.pos++
	}
	return s.pos > start || s.fail()
}

// numberByte reports whether c may appear in a JSON number.
func numberByte(c byte) bool {
	return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// skipContainer skips an object or array by matching brackets, skipping strings whole. A
// closing bracket of the other kind than its opening one still closes it, but makes s loose,
// as does nesting deeper than the 64 levels whose kinds it keeps (in open, one bit a level:
// 1 for an object).
func (s *Scanner) skipContainer() bool {
	depth := 0
	var open uint64
	for s.pos < len(s.data) {
		switch c := s.data[s.pos]; c {
		case '"':
			end, ok := stringEnd(s.data, s.pos+1)
			if !ok {
				return s.fail()
			}
			s.pos = end + 1
			continue
		case '{', '[':
			if depth == 64 {
				s.loose = true
			}
			open = open<<1 | uint64(c>>5&1) // '{' is 0x7b, '[' 0x5b
			depth++
		case '}', ']':
			if depth <= 64 && open&1 != uint64(c>>5&1) {
				s.loose = true
			}
			open >>= 1
			depth--
			if depth == 0 {
				s.pos++
				return true
			}
		}
		s.pos++
	}
	return s.fail()
}

// Enter consumes the opening bracket of the next value, which must be an object (want
// Object) or an array (want Array).
func (s *Scanner) Enter(want Kind) bool {
	if s.Peek() != want || (want != Object && want != Array) {
		return s.fail()
	}
	s.pos++
	return true
}

// Key reads the next member of an object entered with Enter: it returns the member's raw key
// and leaves the cursor on its value, which the caller must consume (read it or Skip it).
// first says whether this is the object's first member. more is false at the closing brace
// (consumed) or on a syntax error (see Err).
func (s *Scanner) Key(first bool) (raw []byte, escaped, more bool) {
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == '}' && first {
		s.pos++
		return nil, false, false
	}
	if !first {
		if s.pos >= len(s.data) {
			return nil, false, s.fail()
		}
		switch s.data[s.pos] {
		case '}':
			s.pos++
			return nil, false, false
		case ',':
			s.pos++
		default:
			return nil, false, s.fail()
		}
	}
	raw, escaped, ok := s.String()
	if !ok {
		return nil, false, false
	}
	s.skipSpace()
	if s.pos >= len(s.data) || s.data[s.pos] != ':' {
		return nil, false, s.fail()
	}
	s.pos++
	return raw, escaped, true
}

// Elem moves to the next element of an array entered with Enter, leaving the cursor on it;
// the caller must consume it. first says whether this is the array's first element. It
// returns false at the closing bracket (consumed) or on a syntax error (see Err).
func (s *Scanner) Elem(first bool) bool {
	s.skipSpace()
	if s.pos >= len(s.data) {
		return s.fail()
	}
	switch c := s.data[s.pos]; {
	case c == ']':
		s.pos++
		return false
	case first:
		return true
	case c == ',':
		s.pos++
		if s.Peek() == Invalid {
			return s.fail()
		}
		return true
	default:
		return s.fail()
	}
}
