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
//   - a tool_result block whose content (a string, or the first text block) starts with
//     InterruptMarker is a KindAbort: the user interrupted the call. Claude Code's
//     "The user doesn't want to proceed with this tool use..." results stay ordinary
//     results: Claude Code writes them for refused calls as well, and the call was answered.
//
// Lines without a top-level sessionId are read as pi/OpenClaw entries (see pi.go).
//
// Only these fields are decoded (package jsonscan, one pass over a Claude Code line and its
// content blocks); tool inputs and outputs are skipped. A line that is neither (not a JSON object, another entry type) is not a
// transcript line.
// A tool block whose ID is missing, empty or not a string is skipped and reported as
// malformed, and so is a transcript line that is not valid JSON where it is read (the blocks
// of message.content before the first invalid one still count).
package transcript

import (
	"bytes"
	"strings"
	"time"
	"unsafe"

	"github.com/buger/jsonparser"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/jsonscan"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
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

// line is what the dialect needs of one transcript line.
type line struct {
	typ, sessionID, agentID, timestamp, messageID string
}

// ExtractLog appends to f the tool calls a transcript log record announces or resolves, and
// the step boundary an assistant line is, and reports whether it found any of these (or a
// malformed tool block).
func ExtractLog(lr plog.LogRecord, f *dialect.Found) bool {
	body := lr.Body()
	switch body.Type() {
	case pcommon.ValueTypeStr:
		s := body.Str()
		if s == "" {
			return false
		}
		return extractJSON(unsafe.Slice(unsafe.StringData(s), len(s)), lr, f)
	case pcommon.ValueTypeMap:
		return extractMap(body.Map(), lr, f)
	default:
		return false
	}
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
			if kind == pairing.KindResult && interruptedContent(b.content, b.contentKind) {
				k = pairing.KindAbort
			}
			f.AddStep(k, id, name, t, ScopeAttr, scope, l.messageID)
		}
	}
	if sc.Err() != nil {
		f.Skip(dialect.ReasonInvalidJSON)
	}
	return len(f.Items)+len(f.Malformed) > n
}

func extractMap(m pcommon.Map, lr plog.LogRecord, f *dialect.Found) bool {
	get := func(k string) string {
		if v, ok := m.Get(k); ok && v.Type() == pcommon.ValueTypeStr {
			return v.Str()
		}
		return ""
	}
	l := line{typ: get("type"), sessionID: get("sessionId"), agentID: get("agentId"), timestamp: get("timestamp")}
	if l.sessionID == "" {
		return extractPiMap(m, lr, f)
	}
	kind, want := blockKind(l.typ)
	if kind == 0 {
		return false
	}
	msg, ok := m.Get("message")
	if !ok || msg.Type() != pcommon.ValueTypeMap {
		return false
	}
	content, ok := msg.Map().Get("content")
	if !ok || content.Type() != pcommon.ValueTypeSlice {
		return false
	}
	t := itemTime(lr, l.timestamp)
	scope := scopeOf(l)
	if id, ok := msg.Map().Get("id"); ok && kind == pairing.KindUse && id.Type() == pcommon.ValueTypeStr && id.Str() != "" {
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
		if bt, ok := bm.Get("type"); !ok || bt.AsString() != string(want) {
			continue
		}
		found = true
		idKey, name := "id", ""
		if kind == pairing.KindResult {
			idKey = "tool_use_id"
		} else if n, ok := bm.Get("name"); ok {
			name = n.AsString()
		}
		id, ok := bm.Get(idKey)
		switch {
		case !ok || (id.Type() == pcommon.ValueTypeStr && id.Str() == ""):
			f.Skip(dialect.ReasonMissingCallID)
		case id.Type() != pcommon.ValueTypeStr:
			f.Skip(dialect.ReasonInvalidCallID)
		default:
			k := kind
			if kind == pairing.KindResult && interruptedMap(bm) {
				k = pairing.KindAbort
			}
			f.AddStep(k, id.Str(), name, t, ScopeAttr, scope, l.messageID)
		}
	}
	return found
}

// readLine reads the fields of a Claude Code line the dialect needs in one pass over the
// line's object (see package jsonscan): type, sessionId, agentId, timestamp, message.id, and
// the raw message.content with its kind. Strings are unescaped copies; a field of another type
// reads as "". Of repeated keys the last wins at the top level, the first within message.
// ok is false when the line is not a JSON object.
func readLine(data []byte) (l line, content []byte, contentKind jsonscan.Kind, ok bool) {
	var sc jsonscan.Scanner
	sc.Reset(data)
	if !sc.Enter(jsonscan.Object) {
		return l, nil, jsonscan.Invalid, false
	}
	for first := true; ; first = false {
		key, esc, more := sc.Key(first)
		if !more {
			break
		}
		var dst *string
		switch lineKey(key, esc) {
		case "type":
			dst = &l.typ
		case "sessionId":
			dst = &l.sessionID
		case "agentId":
			dst = &l.agentID
		case "timestamp":
			dst = &l.timestamp
		case "message":
			if sc.Peek() == jsonscan.Object {
				content, contentKind = readMessage(&sc, &l)
				continue
			}
		}
		if dst != nil {
			*dst = scanString(&sc)
		} else {
			sc.Skip()
		}
	}
	return l, content, contentKind, sc.Err() == nil
}

// readMessage reads message.id into l and returns the raw message.content.
func readMessage(sc *jsonscan.Scanner, l *line) (content []byte, kind jsonscan.Kind) {
	sc.Enter(jsonscan.Object)
	seenContent, seenID := false, false
	for first := true; ; first = false {
		key, esc, more := sc.Key(first)
		if !more {
			return content, kind
		}
		switch k := lineKey(key, esc); {
		case k == "content" && !seenContent:
			seenContent = true
			content, kind, _ = sc.Raw()
		case k == "id" && !seenID:
			seenID = true
			l.messageID = scanString(sc)
		default:
			sc.Skip()
		}
	}
}

// block is what the dialect reads of one content block: the first "type", call ID ("id", or
// "tool_use_id" in a result), "name" and "content" members, raw (strings between their
// quotes, escapes not decoded).
type block struct {
	typ, id, name, content  []byte
	idKind, contentKind     jsonscan.Kind
	idEsc, nameEsc          bool
	hasType, hasID, hasName bool
	seenName, hasContent    bool
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
			k, err := jsonscan.Unquote(key, true)
			if err != nil {
				k = "" // a key with a bad escape is none of ours, as in lineKey
			}
			key = []byte(k)
		}
		switch {
		case !b.hasType && string(key) == "type":
			b.hasType = true
			if sc.Peek() == jsonscan.String {
				if b.typ, _, ok = sc.String(); !ok {
					return b, false
				}
				continue
			}
		case !b.hasID && string(key) == idKey:
			b.hasID = true
			b.idKind = sc.Peek()
			if b.idKind == jsonscan.String {
				if b.id, b.idEsc, ok = sc.String(); !ok {
					return b, false
				}
				continue
			}
		case !result && !b.seenName && string(key) == "name":
			b.seenName = true
			if sc.Peek() == jsonscan.String {
				if b.name, b.nameEsc, ok = sc.String(); !ok {
					return b, false
				}
				b.hasName = true
				continue
			}
		case result && !b.hasContent && string(key) == "content":
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
	case "message":
		return "message"
	case "content":
		return "content"
	case "id":
		return "id"
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

// interruptedMap is interruptedContent for a block of a parsed map body.
func interruptedMap(block pcommon.Map) bool {
	v, ok := block.Get("content")
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
		t, ok := v.Slice().At(0).Map().Get("text")
		return ok && t.Type() == pcommon.ValueTypeStr && strings.HasPrefix(t.Str(), InterruptMarker)
	}
	return false
}
