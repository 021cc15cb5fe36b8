// Package transcript is the dialect of agent session transcripts read line by line, as the
// filelog receiver produces them: one JSONL line per log record, the body being the line as
// a string or an already-parsed map.
//
// Two formats are read: Claude Code's and pi's (which OpenClaw shares, see pi.go).
//
// Claude Code transcripts (~/.claude/projects/<project>/<session>.jsonl, Claude Code 2.1)
// write one line per content block: an assistant message with several blocks is several
// lines sharing message.id. Fields read:
//
//   - type: "assistant" lines may hold tool_use blocks, "user" lines tool_result blocks;
//   - message.content[]: {"type":"tool_use","id","name"} is a tool_use,
//     {"type":"tool_result","tool_use_id"} a tool_result;
//   - sessionId and agentId: the scope is sessionId, or sessionId/agentId for a subagent
//     (subagent lines share their parent's sessionId and carry isSidechain: true);
//   - timestamp (ISO 8601): the item's time when the log record carries none;
//   - message.id of assistant lines: the step. Each assistant line is a step boundary of its
//     scope; calls announced by an earlier message that are still pending when a new
//     message begins are interrupted with reason next_step;
//   - a tool_result block marked is_error: true on a line whose top-level toolUseResult is
//     the string UserRejected and which carries a toolDenialKind (not null) is a
//     KindRefused: the user refused the call, at the permission prompt or by interrupting
//     the running tool, and the call is rejected;
//   - otherwise a tool_result block whose content (a string, or the first text block) starts
//     with InterruptMarker is a KindAbort: the user interrupted the call. Claude Code's
//     "The user doesn't want to proceed with this tool use..." results without a
//     toolDenialKind (Claude Code 2.1.39 and earlier) stay ordinary results.
//
// Lines without a top-level sessionId are read as pi/OpenClaw entries (see pi.go).
//
// Only these fields are decoded (package jsonscan, one pass over a Claude Code line and its
// content blocks); tool inputs and outputs are skipped. A line that is neither (not a JSON object, another entry type) is not a
// transcript line.
//
// In the same pass the dialect tells the timeout classifier (package timeout), in
// dialect.Found.Line, whether the line can be a timeout line, from the fields the classifier
// decides from as its reader (github.com/buger/jsonparser) reads them: the line's type, the
// first subtype and isApiErrorMessage, and the first type and is_error of each content block
// of a user line; of a pi/OpenClaw line, the type (the classifier reads pi messages itself).
// A Claude Code line is told LineUnread unless it is one JSON object read without a loose
// value (jsonscan.Scanner.Loose), without escaped keys, and with one type and one message. A
// map body is told from the same fields, read from the map (see mapTimeoutLine).
// A tool block whose ID is missing, empty or not a string is skipped and reported as
// malformed, and so is a transcript line that is not valid JSON where it is read (the blocks
// of message.content before the first invalid one still count).
package transcript

import (
	"bytes"
	"strings"
	"time"

	"github.com/buger/jsonparser"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/jsonscan"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/readonly"
)

// Name is the dialect's configuration name.
const Name = "transcript"

// ScopeAttr is the attribute the scope of a transcript call is reported under on synthetic
// records: the session ID is Claude Code's session.id.
const ScopeAttr = "session.id"

var (
	markerSessionID = []byte(`"sessionId"`)
	typeToolUse     = []byte("tool_use")
	typeToolResult  = []byte("tool_result")
)

// UserRejected is the top-level toolUseResult Claude Code writes on the line of a tool_result
// the user refused (with a toolDenialKind saying how).
const UserRejected = "User rejected tool use"

// line is what the dialect needs of one transcript line.
type line struct {
	typ, sessionID, agentID, timestamp, messageID string
	// rejected: toolUseResult is UserRejected; denial: a toolDenialKind is present, not null.
	rejected, denial bool
	tmo              lineTimeout
}

// refused reports whether the line says its tool_result blocks marked is_error are the
// user's refusals.
func (l *line) refused() bool { return l.rejected && l.denial }

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

// ExtractLog appends to f the tool calls a transcript log record announces or resolves, and
// the step boundary an assistant line is, and reports whether it found any of these (or a
// malformed tool block).
// It sets f.Line for the bodies it reads (see dialect.Line), whatever it reports.
func ExtractLog(lr plog.LogRecord, f *dialect.Found) bool {
	body := lr.Body()
	switch body.Type() {
	case pcommon.ValueTypeStr:
		s := body.Str()
		if s == "" {
			return false
		}
		return extractJSON(readonly.Bytes(s), lr, f)
	case pcommon.ValueTypeMap:
		f.Line = mapTimeoutLine(body.Map())
		return extractMap(body.Map(), lr, f)
	default:
		return false
	}
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

func extractJSON(data []byte, lr plog.LogRecord, f *dialect.Found) bool {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return false
	}
	if !bytes.Contains(data, markerSessionID) {
		return extractPiJSON(data, lr, f)
	}
	l, content, contentType, ok := readLine(data)
	if !ok {
		f.Skip(dialect.ReasonInvalidJSON)
		return true
	}
	if l.sessionID == "" {
		return extractPiJSON(data, lr, f) // a sessionId nested deeper (OpenClaw custom entries)
	}
	f.Line = l.timeoutLine()
	if contentType != jsonscan.Array {
		return false
	}
	kind, want := blockKind(l.typ)
	if kind == 0 {
		return false
	}
	t := itemTime(lr, l.timestamp)
	scope := scopeOf(l)
	n := len(f.Items) + len(f.Malformed)
	if kind == pairing.KindUse && l.messageID != "" {
		// Every assistant line is a step boundary of its scope: lines of one message share
		// its message.id, so only a new message closes the calls of earlier ones.
		f.AddStep(pairing.KindBoundary, "", "", t, ScopeAttr, scope, l.messageID)
	}
	var sc jsonscan.Scanner
	sc.Reset(content)
	sc.Enter(jsonscan.Array)
	for first := true; sc.Elem(first); first = false {
		if sc.Peek() != jsonscan.Object {
			if !sc.Skip() {
				break
			}
			continue
		}
		b, ok := readBlock(&sc, kind == pairing.KindResult)
		if !ok {
			break
		}
		switch {
		case b.escKey:
			f.Line = dialect.LineUnread
		case f.Line == dialect.LineNoTimeout && kind == pairing.KindResult && b.isError && (b.typEsc || string(b.typ) == string(typeToolResult)):
			f.Line = dialect.LineMayTimeout // a tool_result marked is_error
		}
		if !b.hasType || string(b.typ) != string(want) {
			continue
		}
		switch {
		case !b.hasID:
			f.Skip(dialect.ReasonMissingCallID)
		case b.idKind != jsonscan.String:
			f.Skip(dialect.ReasonInvalidCallID)
		default:
			id, err := jsonscan.Unquote(b.id, b.idEsc)
			if err != nil || id == "" {
				f.Skip(dialect.ReasonMissingCallID)
				continue
			}
			name := ""
			if b.hasName {
				if v, err := jsonscan.Unquote(b.name, b.nameEsc); err == nil {
					name = v
				}
			}
			k := kind
			switch {
			case kind != pairing.KindResult:
			case b.lastIsError && l.refused():
				k = pairing.KindRefused
			case interruptedContent(b.content, b.contentKind):
				k = pairing.KindAbort
			}
			f.AddStep(k, id, name, t, ScopeAttr, scope, l.messageID)
		}
	}
	if sc.Err() != nil {
		f.Skip(dialect.ReasonInvalidJSON)
	}
	if sc.Err() != nil || sc.Loose() {
		f.Line = dialect.LineUnread
	}
	return len(f.Items)+len(f.Malformed) > n
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

func extractMap(m pcommon.Map, lr plog.LogRecord, f *dialect.Found) bool {
	get := func(k string) string {
		if v, ok := fields.Get(m, k); ok && v.Type() == pcommon.ValueTypeStr {
			return v.Str()
		}
		return ""
	}
	l := line{typ: get("type"), sessionID: get("sessionId"), agentID: get("agentId"), timestamp: get("timestamp")}
	l.rejected = get("toolUseResult") == UserRejected
	if v, ok := fields.Get(m, "toolDenialKind"); ok && v.Type() != pcommon.ValueTypeEmpty {
		l.denial = true
	}
	if l.sessionID == "" {
		return extractPiMap(m, lr, f)
	}
	kind, want := blockKind(l.typ)
	if kind == 0 {
		return false
	}
	msg, ok := fields.Get(m, "message")
	if !ok || msg.Type() != pcommon.ValueTypeMap {
		return false
	}
	content, ok := fields.Get(msg.Map(), "content")
	if !ok || content.Type() != pcommon.ValueTypeSlice {
		return false
	}
	t := itemTime(lr, l.timestamp)
	scope := scopeOf(l)
	if id, ok := fields.Get(msg.Map(), "id"); ok && kind == pairing.KindUse && id.Type() == pcommon.ValueTypeStr && id.Str() != "" {
		l.messageID = id.Str()
		f.AddStep(pairing.KindBoundary, "", "", t, ScopeAttr, scope, l.messageID)
	}
	found := l.messageID != ""
	blocks := content.Slice()
	for i := 0; i < blocks.Len(); i++ {
		b := blocks.At(i)
		if b.Type() != pcommon.ValueTypeMap {
			continue
		}
		bm := b.Map()
		if bt, ok := fields.Get(bm, "type"); !ok || bt.AsString() != string(want) {
			continue
		}
		found = true
		idKey, name := "id", ""
		if kind == pairing.KindResult {
			idKey = "tool_use_id"
		} else if n, ok := fields.Get(bm, "name"); ok {
			name = n.AsString()
		}
		id, ok := fields.Get(bm, idKey)
		switch {
		case !ok || (id.Type() == pcommon.ValueTypeStr && id.Str() == ""):
			f.Skip(dialect.ReasonMissingCallID)
		case id.Type() != pcommon.ValueTypeStr:
			f.Skip(dialect.ReasonInvalidCallID)
		default:
			k := kind
			switch {
			case kind != pairing.KindResult:
			case l.refused() && isErrorMap(bm):
				k = pairing.KindRefused
			case interruptedMap(bm):
				k = pairing.KindAbort
			}
			f.AddStep(k, id.Str(), name, t, ScopeAttr, scope, l.messageID)
		}
	}
	return found
}

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
			l.rejected = false
			if sc.Peek() == jsonscan.String {
				raw, esc, ok := sc.String()
				l.rejected = ok && jsonscan.Equal(raw, esc, UserRejected)
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

// blockKind maps a line type to the kind of tool block it may hold.
func blockKind(typ string) (pairing.Kind, []byte) {
	switch typ {
	case "assistant":
		return pairing.KindUse, typeToolUse
	case "user":
		return pairing.KindResult, typeToolResult
	}
	return 0, nil
}

// scopeOf is sessionId, or sessionId/agentId for a subagent's line.
func scopeOf(l line) string {
	if l.agentID == "" {
		return l.sessionID
	}
	return l.sessionID + "/" + l.agentID
}

// itemTime is the log record's time when it has one, else the line's timestamp, else the
// record's observed time.
func itemTime(lr plog.LogRecord, ts string) int64 {
	if t := lr.Timestamp(); t != 0 {
		return int64(t)
	}
	if ts != "" {
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			return t.UnixNano()
		}
	}
	return int64(lr.ObservedTimestamp())
}

// str returns a JSON string value unescaped (as a copy), or "" for other types.
func str(v []byte, dt jsonparser.ValueType) string {
	if dt != jsonparser.String {
		return ""
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v)
	}
	s, err := jsonparser.ParseString(v)
	if err != nil {
		return ""
	}
	return s
}

// InterruptMarker starts the content Claude Code writes as the result of a tool call the user
// interrupted ("[Request interrupted by user for tool use]"): the call was aborted, it has no
// real result.
const InterruptMarker = "[Request interrupted by user"

var interruptMarker = []byte(InterruptMarker)

// isErrorMap reports whether a block of a parsed map body is marked is_error: true.
func isErrorMap(block pcommon.Map) bool {
	v, ok := fields.Get(block, "is_error")
	return ok && v.Type() == pcommon.ValueTypeBool && v.Bool()
}

// interruptedMap is interruptedContent for a block of a parsed map body.
func interruptedMap(block pcommon.Map) bool {
	v, ok := fields.Get(block, "content")
	if !ok {
		return false
	}
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return strings.HasPrefix(v.Str(), InterruptMarker)
	case pcommon.ValueTypeSlice:
		if v.Slice().Len() == 0 || v.Slice().At(0).Type() != pcommon.ValueTypeMap {
			return false
		}
		t, ok := fields.Get(v.Slice().At(0).Map(), "text")
		return ok && t.Type() == pcommon.ValueTypeStr && strings.HasPrefix(t.Str(), InterruptMarker)
	}
	return false
}
