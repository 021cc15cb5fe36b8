// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// claudeline.go holds the one-pass reader of a Claude Code line given as JSON text (package
// jsonscan): the line's top-level fields and its message (readLine), each content block
// (readBlock), and whether a tool_result's content starts with InterruptMarker.

package transcript

import (
	"bytes"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/jsonscan"
)

// line is what the dialect needs of one transcript line.
type line struct {
	typ, sessionID, agentID, timestamp, messageID string
	// rejected: toolUseResult is UserRejected; denial: a toolDenialKind is present, not null.
	rejected, denial bool
	// runMs is toolUseResult.durationMs (an int or a number rounded to the ms), the tool's
	// own run time, when hasRun.
	runMs  int64
	hasRun bool
	tmo    lineTimeout
}

// refused reports whether the line says its tool_result blocks marked is_error are the
// user's refusals.
func (l *line) refused() bool { return l.rejected && l.denial }

// readLine reads the fields of a Claude Code line the dialect needs in one pass over the
// line's object (see package jsonscan): type, sessionId, agentId, timestamp, toolUseResult,
// toolDenialKind, message.id, and the raw message.content with its kind. Strings are unescaped
// copies; a field of another type reads as "". Of repeated keys the last wins (specification
// section 2), at the top level and within message (the last message's members).
// ok is false when the line is not a JSON object.
func readLine(data []byte) (l line, content []byte, contentKind jsonscan.Kind, ok bool) {
	var sc jsonscan.Scanner
	sc.Reset(data)
	if !sc.Enter(jsonscan.Object) {
		return l, nil, jsonscan.Invalid, false
	}
	escaped := false // a key or a type or subtype value
	for first := true; ; first = false {
		key, esc, more := sc.Key(first)
		if !more {
			break
		}
		escaped = escaped || esc
		var dst *string
		switch lineKey(key, esc) {
		case "type":
			l.tmo.types++
			escaped = escaped || escapedString(&sc)
			dst = &l.typ
		case "subtype":
			if !l.tmo.hasSubtype {
				l.tmo.hasSubtype = true
				escaped = escaped || escapedString(&sc)
				dst = &l.tmo.subtype
			}
		case "isApiErrorMessage":
			if !l.tmo.hasAPIError {
				l.tmo.hasAPIError = true
				l.tmo.apiError = sc.Peek() == jsonscan.True
			}
		case "toolUseResult":
			l.rejected, l.hasRun = false, false
			switch sc.Peek() {
			case jsonscan.String:
				raw, esc, ok := sc.String()
				l.rejected = ok && jsonscan.Equal(raw, esc, UserRejected)
				continue
			case jsonscan.Object:
				raw, _, ok := sc.Raw()
				if ok {
					l.runMs, l.hasRun = runOf(raw)
				}
				continue
			}
		case "toolDenialKind":
			l.denial = sc.Peek() != jsonscan.Null
		case "sessionId":
			dst = &l.sessionID
		case "agentId":
			dst = &l.agentID
		case "timestamp":
			dst = &l.timestamp
		case "message":
			l.tmo.messages++
			content, contentKind, l.messageID = nil, jsonscan.Invalid, ""
			if sc.Peek() == jsonscan.Object {
				var escKey bool
				content, contentKind, escKey = readMessage(&sc, &l)
				escaped = escaped || escKey
				continue
			}
		}
		if dst != nil {
			*dst = scanString(&sc)
		} else {
			sc.Skip()
		}
	}
	l.tmo.strict = sc.Err() == nil && !sc.Loose() && !escaped && sc.Offset() == len(data)
	return l, content, contentKind, sc.Err() == nil
}

// escapedString reports whether the next value is a string holding an escape, without
// consuming it.
func escapedString(sc *jsonscan.Scanner) bool {
	if sc.Peek() != jsonscan.String {
		return false
	}
	probe := *sc
	_, esc, _ := probe.String()
	return esc
}

// readMessage reads message.id (the last) into l and returns the raw message.content (the
// last), and whether a key of the message is escaped or its content repeated: then the timeout
// classifier, whose reader takes the first, may not read the content the dialect does (see
// dialect.Line).
func readMessage(sc *jsonscan.Scanner, l *line) (content []byte, kind jsonscan.Kind, unsure bool) {
	sc.Enter(jsonscan.Object)
	contents := 0
	for first := true; ; first = false {
		key, esc, more := sc.Key(first)
		if !more {
			return content, kind, unsure || contents > 1
		}
		unsure = unsure || esc
		switch lineKey(key, esc) {
		case "content":
			contents++
			content, kind, _ = sc.Raw()
		case "id":
			l.messageID = scanString(sc)
		default:
			sc.Skip()
		}
	}
}

// lineKey returns the key raw when it is one readLine looks at, else "".
func lineKey(raw []byte, escaped bool) string {
	if escaped {
		k, err := jsonscan.Unquote(raw, true)
		if err != nil {
			return ""
		}
		raw = []byte(k)
	}
	switch string(raw) {
	case "type":
		return "type"
	case "sessionId":
		return "sessionId"
	case "agentId":
		return "agentId"
	case "timestamp":
		return "timestamp"
	case "subtype":
		return "subtype"
	case "isApiErrorMessage":
		return "isApiErrorMessage"
	case "message":
		return "message"
	case "content":
		return "content"
	case "id":
		return "id"
	case "toolUseResult":
		return "toolUseResult"
	case "toolDenialKind":
		return "toolDenialKind"
	}
	return ""
}

// scanString consumes the next value and returns it unescaped when it is a string, else "".
func scanString(sc *jsonscan.Scanner) string {
	if sc.Peek() != jsonscan.String {
		sc.Skip()
		return ""
	}
	raw, esc, ok := sc.String()
	if !ok {
		return ""
	}
	s, err := jsonscan.Unquote(raw, esc)
	if err != nil {
		return ""
	}
	return s
}

// block is what the dialect reads of one content block: the last "type", call ID ("id", or
// "tool_use_id" in a result), "name", "content" and "is_error" members (specification section 2),
// raw (strings between their quotes, escapes not decoded), and for the timeout classifier the
// first "is_error" of a result, whether the type is escaped, and whether a key is escaped or
// one of these members repeated (escKey: then the classifier, whose reader takes the first of
// repeated keys, may not read the block as the dialect does).
type block struct {
	typ, id, name, content  []byte
	idKind, contentKind     jsonscan.Kind
	idEsc, nameEsc          bool
	hasType, hasID, hasName bool
	seenName, hasContent    bool
	typEsc, escKey          bool
	seenIsError, isError    bool
	lastIsError             bool
}

// readBlock reads the content block object at the cursor (of a user line when result), in
// one pass. ok is false on a syntax error.
func readBlock(sc *jsonscan.Scanner, result bool) (b block, ok bool) {
	idKey := "id"
	if result {
		idKey = "tool_use_id"
	}
	sc.Enter(jsonscan.Object)
	for first := true; ; first = false {
		key, esc, more := sc.Key(first)
		if !more {
			return b, sc.Err() == nil
		}
		if esc {
			b.escKey = true
			k, err := jsonscan.Unquote(key, true)
			if err != nil {
				k = "" // a key with a bad escape is none of ours, as in lineKey
			}
			key = []byte(k)
		}
		switch {
		case string(key) == "type":
			b.escKey = b.escKey || b.hasType
			b.hasType, b.typ, b.typEsc = true, nil, false
			if sc.Peek() == jsonscan.String {
				if b.typ, b.typEsc, ok = sc.String(); !ok {
					return b, false
				}
				continue
			}
		case result && string(key) == "is_error":
			b.lastIsError = sc.Peek() == jsonscan.True
			b.escKey = b.escKey || b.seenIsError
			if !b.seenIsError {
				b.seenIsError = true
				b.isError = b.lastIsError
			}
		case string(key) == idKey:
			b.hasID, b.id, b.idEsc = true, nil, false
			b.idKind = sc.Peek()
			if b.idKind == jsonscan.String {
				if b.id, b.idEsc, ok = sc.String(); !ok {
					return b, false
				}
				continue
			}
		case !result && string(key) == "name":
			b.seenName, b.hasName, b.name, b.nameEsc = true, false, nil, false
			if sc.Peek() == jsonscan.String {
				if b.name, b.nameEsc, ok = sc.String(); !ok {
					return b, false
				}
				b.hasName = true
				continue
			}
		case result && string(key) == "content":
			b.escKey = b.escKey || b.hasContent
			b.hasContent = true
			if b.content, b.contentKind, ok = sc.Raw(); !ok {
				return b, false
			}
			if b.contentKind == jsonscan.String {
				b.content = b.content[1 : len(b.content)-1]
			}
			continue
		}
		if !sc.Skip() {
			return b, false
		}
	}
}

// interruptedContent reports whether a tool_result block's content (raw, see block: a
// string, or text blocks of which the first counts) starts with InterruptMarker.
func interruptedContent(content []byte, kind jsonscan.Kind) bool {
	switch kind {
	case jsonscan.String:
		return bytes.HasPrefix(content, interruptMarker)
	case jsonscan.Array:
		var sc jsonscan.Scanner
		sc.Reset(content)
		sc.Enter(jsonscan.Array)
		if !sc.Elem(true) || sc.Peek() != jsonscan.Object {
			return false
		}
		sc.Enter(jsonscan.Object)
		for first := true; ; first = false {
			key, esc, more := sc.Key(first)
			if !more {
				return false
			}
			if jsonscan.Equal(key, esc, "text") {
				if sc.Peek() != jsonscan.String {
					return false
				}
				text, _, ok := sc.String()
				return ok && bytes.HasPrefix(text, interruptMarker)
			}
			if !sc.Skip() {
				return false
			}
		}
	}
	return false
}
