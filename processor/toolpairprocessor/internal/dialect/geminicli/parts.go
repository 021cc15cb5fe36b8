// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package geminicli

import (
	"bytes"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/jsonscan"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/readonly"
)

// partKind names the parts scanParts looks for: the Gemini API's key of the part's object
// and the semconv part type.
type partKind struct{ geminiKey, semconvType string }

var (
	callParts     = partKind{geminiKey: "functionCall", semconvType: "tool_call"}
	responseParts = partKind{geminiKey: "functionResponse", semconvType: "tool_call_response"}
)

// JSON keys of the messages read.
const (
	keyParts = "parts"
	keyType  = "type"
	keyID    = "id"
	keyName  = "name"
)

// scanParts calls fn for each part of kind k in an llm_call's messages: a JSON array of
// Gemini Content objects ({"role","parts":[...]}) or a single one. A part is of kind k when
// it holds a k.geminiKey object ({"functionCall":{"id","name",...}}), or has "type" equal to
// k.semconvType ({"type":"tool_call","id","name"}). The messages are read in one forward
// pass (package jsonscan): everything but the parts' IDs, names and types is skipped
// undecoded, so a long history costs one scan. A part without a usable ID is reported in f
// (missing, null or wrong type, as dialect.Found.JSONCallID does); a value of the wrong type
// once per array; JSON that does not parse as ReasonInvalidJSON, the parts before the error
// still reported.
func scanParts(v pcommon.Value, f *dialect.Found, k partKind, fn func(id, name string)) {
	if v.Type() != pcommon.ValueTypeStr {
		f.Skip(dialect.ReasonInvalidType)
		return
	}
	data := readonly.Bytes(v.Str())
	var sc jsonscan.Scanner
	sc.Reset(data)
	switch sc.Peek() {
	case jsonscan.Array:
		sc.Enter(jsonscan.Array)
		wrong := false
		for first := true; sc.Elem(first); first = false {
			if sc.Peek() == jsonscan.Object {
				scanContent(&sc, f, k, fn)
				continue
			}
			if !wrong {
				f.Skip(dialect.ReasonInvalidType)
			}
			wrong = true
			if !sc.Skip() {
				break
			}
		}
	case jsonscan.Object:
		scanContent(&sc, f, k, fn)
	default:
		f.Skip(dialect.ReasonInvalidJSON)
		return
	}
	if sc.Err() != nil || len(bytes.TrimSpace(data[sc.Offset():])) != 0 {
		f.Skip(dialect.ReasonInvalidJSON)
	}
}

// scanContent reads one Content object at the cursor: the parts of its "parts" array.
func scanContent(sc *jsonscan.Scanner, f *dialect.Found, k partKind, fn func(id, name string)) {
	sc.Enter(jsonscan.Object)
	for first := true; ; first = false {
		key, esc, more := sc.Key(first)
		if !more {
			return
		}
		if !jsonscan.Equal(key, esc, keyParts) {
			if !sc.Skip() {
				return
			}
			continue
		}
		switch sc.Peek() {
		case jsonscan.Array:
			sc.Enter(jsonscan.Array)
			wrong := false
			for pfirst := true; sc.Elem(pfirst); pfirst = false {
				if sc.Peek() == jsonscan.Object {
					scanPart(sc, f, k, fn)
					continue
				}
				if !wrong {
					f.Skip(dialect.ReasonInvalidType)
				}
				wrong = true
				if !sc.Skip() {
					return
				}
			}
			if sc.Err() != nil {
				return
			}
		case jsonscan.Null:
			sc.Skip()
		default:
			f.Skip(dialect.ReasonInvalidType)
			if !sc.Skip() {
				return
			}
		}
	}
}

// partID is what a part said of its call ID.
type partID struct {
	id     string
	reason string // "" when id is usable
}

// scanPart reads one part object at the cursor and reports it when it is of kind k: from its
// k.geminiKey object when it has one, else from its own "id" and "name" when its "type" is
// k.semconvType. Of repeated keys the last is read.
func scanPart(sc *jsonscan.Scanner, f *dialect.Found, k partKind, fn func(id, name string)) {
	sc.Enter(jsonscan.Object)
	var nested, top partID
	var nestedName, topName string
	hasNested, typed := false, false
	top.reason = dialect.ReasonMissingCallID
	for first := true; ; first = false {
		key, esc, more := sc.Key(first)
		if !more {
			break
		}
		switch {
		case jsonscan.Equal(key, esc, k.geminiKey) && sc.Peek() == jsonscan.Object:
			hasNested = true
			nested, nestedName = readIDName(sc)
		case jsonscan.Equal(key, esc, keyType) && sc.Peek() == jsonscan.String:
			raw, tesc, _ := sc.String()
			typed = jsonscan.Equal(raw, tesc, k.semconvType)
		case jsonscan.Equal(key, esc, keyID):
			top = readID(sc)
		case jsonscan.Equal(key, esc, keyName) && sc.Peek() == jsonscan.String:
			topName = readString(sc)
		default:
			sc.Skip()
		}
		if sc.Err() != nil {
			return
		}
	}
	if sc.Err() != nil {
		return
	}
	switch {
	case hasNested:
		report(f, nested, nestedName, fn)
	case typed:
		report(f, top, topName, fn)
	}
}

func report(f *dialect.Found, p partID, name string, fn func(id, name string)) {
	if p.reason != "" {
		f.Skip(p.reason)
		return
	}
	fn(p.id, name)
}

// readIDName reads the "id" and "name" of the object at the cursor, skipping its other
// members.
func readIDName(sc *jsonscan.Scanner) (p partID, name string) {
	p.reason = dialect.ReasonMissingCallID
	sc.Enter(jsonscan.Object)
	for first := true; ; first = false {
		key, esc, more := sc.Key(first)
		if !more {
			return p, name
		}
		switch {
		case jsonscan.Equal(key, esc, keyID):
			p = readID(sc)
		case jsonscan.Equal(key, esc, keyName) && sc.Peek() == jsonscan.String:
			name = readString(sc)
		default:
			if !sc.Skip() {
				return p, name
			}
		}
	}
}

// readID reads a call ID value at the cursor: a non-empty string, else the reason it is not
// usable.
func readID(sc *jsonscan.Scanner) partID {
	switch sc.Peek() {
	case jsonscan.String:
		if id := readString(sc); id != "" {
			return partID{id: id}
		}
		return partID{reason: dialect.ReasonMissingCallID}
	case jsonscan.Null:
		sc.Skip()
		return partID{reason: dialect.ReasonNullCallID}
	default:
		sc.Skip()
		return partID{reason: dialect.ReasonInvalidCallID}
	}
}

// readString reads the string at the cursor, unescaped and copied ("" when it does not
// decode).
func readString(sc *jsonscan.Scanner) string {
	raw, esc, ok := sc.String()
	if !ok {
		return ""
	}
	s, err := jsonscan.Unquote(raw, esc) // a copy: it never aliases raw
	if err != nil {
		return ""
	}
	return s
}
