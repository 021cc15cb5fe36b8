// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// timeoutline.go holds what the dialect tells the timeout classifier of each line
// (dialect.Line): from the fields readLine reads of a JSON line (lineTimeout), or from the
// members of a map body as the classifier would read its JSON text.

package transcript

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
)

// lineTimeout is what readLine reads of a Claude Code line for the timeout classifier (see
// dialect.Line), as the classifier's reader (github.com/buger/jsonparser) reads it: the first
// "subtype" and "isApiErrorMessage" members, and how many "type" and "message" members the
// line has (the dialect and the classifier read the same one only when there is one).
type lineTimeout struct {
	types, messages int
	subtype         string
	hasSubtype      bool
	apiError        bool // the first isApiErrorMessage is true
	hasAPIError     bool
	// strict: the line is one JSON object (nothing but white space after it) that the scanner
	// read without a loose value (jsonscan.Scanner.Loose), and none of the members it read has
	// an escaped key or, for type and subtype, an escaped value.
	strict bool
}

// timeoutLine is what the classifier is told of a Claude Code line read by readLine, before
// its content blocks are: LineNoTimeout for a line of a type that is never a timeout, a
// system line other than an api_error, an assistant line not marked isApiErrorMessage, and
// (until a block says otherwise) a user line; LineMayTimeout for the others; LineUnread when
// the line was not read strictly or repeats its type or message.
func (l *line) timeoutLine() dialect.Line {
	t := &l.tmo
	if !t.strict || t.types != 1 || t.messages > 1 {
		return dialect.LineUnread
	}
	switch l.typ {
	case "user":
		return dialect.LineNoTimeout // until a tool_result block marked is_error
	case "system":
		if !t.hasSubtype || t.subtype != "api_error" {
			return dialect.LineNoTimeout
		}
	case "assistant":
		if !t.hasAPIError || !t.apiError {
			return dialect.LineNoTimeout
		}
	case "message":
	default:
		return dialect.LineNoTimeout
	}
	return dialect.LineMayTimeout
}

// mapTimeoutLine is what the timeout classifier is told of a map body (see dialect.Line). The
// classifier reads a map body as its JSON text (pcommon.Value.AsString, where the last of
// repeated keys wins and keys are unique), so the members are taken as that text holds them:
// the last of each, and only values whose JSON is the string or the true the classifier looks
// for.
func mapTimeoutLine(m pcommon.Map) dialect.Line {
	var typ, sub, apiErr, msg pcommon.Value
	hasTyp, hasSub, hasAPIErr, hasMsg := false, false, false, false
	m.Range(func(k string, v pcommon.Value) bool {
		switch k {
		case "type":
			typ, hasTyp = v, true
		case "subtype":
			sub, hasSub = v, true
		case "isApiErrorMessage":
			apiErr, hasAPIErr = v, true
		case "message":
			msg, hasMsg = v, true
		}
		return true
	})
	if !hasTyp {
		return dialect.LineNoTimeout // the classifier reads no map body without a type
	}
	if typ.Type() != pcommon.ValueTypeStr {
		return dialect.LineNoTimeout
	}
	switch typ.Str() {
	case "user":
		if hasMsg && msg.Type() == pcommon.ValueTypeMap && mapToolError(msg.Map()) {
			return dialect.LineMayTimeout
		}
	case "system":
		if hasSub && sub.Type() == pcommon.ValueTypeStr && sub.Str() == "api_error" {
			return dialect.LineMayTimeout
		}
	case "assistant":
		if hasAPIErr && apiErr.Type() == pcommon.ValueTypeBool && apiErr.Bool() {
			return dialect.LineMayTimeout
		}
	case "message":
		return dialect.LineMayTimeout
	}
	return dialect.LineNoTimeout
}

// mapToolError reports whether a message map's content (the last) holds a map block whose
// type (the last) is "tool_result" and whose is_error (the last) is true.
func mapToolError(msg pcommon.Map) bool {
	var content pcommon.Value
	found := false
	msg.Range(func(k string, v pcommon.Value) bool {
		if k == "content" {
			content, found = v, true
		}
		return true
	})
	if !found || content.Type() != pcommon.ValueTypeSlice {
		return false
	}
	blocks := content.Slice()
	for i := 0; i < blocks.Len(); i++ {
		if blocks.At(i).Type() != pcommon.ValueTypeMap {
			continue
		}
		var isResult, isError bool
		blocks.At(i).Map().Range(func(k string, v pcommon.Value) bool {
			switch k {
			case "type":
				isResult = v.Type() == pcommon.ValueTypeStr && v.Str() == "tool_result"
			case "is_error":
				isError = v.Type() == pcommon.ValueTypeBool && v.Bool()
			}
			return true
		})
		if isResult && isError {
			return true
		}
	}
	return false
}
