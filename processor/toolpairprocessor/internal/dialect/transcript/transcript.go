// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

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
//
// A Claude Code line given as JSON text is read by claudeline.go, one given as a map by
// claudemap.go; what the timeout classifier is told of a line is decided in timeoutline.go.
package transcript

import (
	"bytes"
	"time"

	"github.com/buger/jsonparser"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
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

// InterruptMarker starts the content Claude Code writes as the result of a tool call the user
// interrupted ("[Request interrupted by user for tool use]"): the call was aborted, it has no
// real result.
const InterruptMarker = "[Request interrupted by user"

var interruptMarker = []byte(InterruptMarker)

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

// extractJSON is ExtractLog for a body given as JSON text: a Claude Code line, else a
// pi/OpenClaw entry.
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
	scope := conversationOf(l)
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
	if kind == pairing.KindResult {
		f.RunMs, f.HasRun = l.runMs, l.hasRun
	}
	return len(f.Items)+len(f.Malformed) > n
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

// conversationOf is sessionId, or sessionId/agentId for a subagent's line.
func conversationOf(l line) string {
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
