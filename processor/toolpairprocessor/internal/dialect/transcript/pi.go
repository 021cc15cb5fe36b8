// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package transcript

import (
	"errors"
	"strings"
	"time"

	"github.com/buger/jsonparser"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// pi and OpenClaw session files (pi coding agent 0.73, ~/.pi/agent/sessions/*/*.jsonl;
// OpenClaw 2026.9, which embeds pi's agent core and writes the same entries) hold one entry
// per line: a {"type":"session","id"} header, then {"type":"message","id","timestamp"
// (ISO 8601),"message":{...}} entries. Fields read:
//
//   - message.role "assistant": each message.content[] {"type":"toolCall","id","name"} is a
//     tool_use; the entry is a step boundary whose step is its id (every assistant entry
//     is a new model response);
//   - message.role "toolResult": message.toolCallId is a tool_result; OpenClaw's
//     message.details.openclawSyntheticMissingToolResult = true (a result OpenClaw made up
//     to repair the history of an interrupted call) makes it a KindAbort;
//   - time: message.timestamp (Unix ms; for an assistant message the start of its request,
//     for a result the time it was made), else the entry's timestamp;
//   - scope: the lines carry no session ID (only the header does), so the scope is the file
//     the line came from: the log.file.path attribute the filelog receiver sets (with
//     include_file_path), else log.file.name, else a sessionId on the line. A line with none
//     of these is keyed by scope_attributes like any other record.
//
// Entries of other types and messages of other roles (user) are not transcript tool lines.
const (
	// AttrFilePath and AttrFileName are the attributes the filelog receiver writes the
	// source file's path and name under.
	AttrFilePath = "log.file.path"
	AttrFileName = "log.file.name"
)

// piLine is what the dialect needs of one pi/OpenClaw entry.
type piLine struct {
	id, timestamp, sessionID string
	role, toolCallID         string
	toolCallIDType           jsonparser.ValueType
	toolCallIDFound          bool
	msTime                   int64
	synthetic                bool
	// runMs is message.details.durationMs, the tool's own run time, when hasRun.
	runMs  int64
	hasRun bool
}

// piConversation returns the scope attribute and value of a pi/OpenClaw line.
func piConversation(lr plog.LogRecord, sessionID string) (attr, value string) {
	for _, k := range []string{AttrFilePath, AttrFileName} {
		if v, ok := fields.Get(lr.Attributes(), k); ok && v.Type() == pcommon.ValueTypeStr && v.Str() != "" {
			return k, v.Str()
		}
	}
	if sessionID != "" {
		return ScopeAttr, sessionID
	}
	return "", ""
}

// piTime is the log record's time when it has one, else the message's ms timestamp, else the
// entry's ISO timestamp, else the record's observed time.
func piTime(lr plog.LogRecord, ms int64, iso string) int64 {
	if t := lr.Timestamp(); t != 0 {
		return int64(t)
	}
	if ms > 0 {
		return ms * int64(time.Millisecond)
	}
	return itemTime(lr, iso)
}

// extractPiJSON reads a pi/OpenClaw entry given as JSON text; data starts with '{' and has
// no sessionId-led Claude Code shape. It reports whether the line is a pi tool line.
func extractPiJSON(data []byte, lr plog.LogRecord, f *dialect.Found) bool {
	if typ, err := jsonparser.GetUnsafeString(data, "type"); err != nil || typ != "message" {
		f.Line = piTimeoutLine(typ, err)
		return false
	}
	var l piLine
	var content []byte
	var contentType jsonparser.ValueType
	err := jsonparser.ObjectEach(data, func(k, v []byte, dt jsonparser.ValueType, _ int) error {
		switch string(k) {
		case "id":
			l.id = str(v, dt)
		case "timestamp":
			l.timestamp = str(v, dt)
		case "sessionId":
			l.sessionID = str(v, dt)
		case "message":
			if dt != jsonparser.Object {
				return nil
			}
			return jsonparser.ObjectEach(v, func(k, v []byte, dt jsonparser.ValueType, _ int) error {
				switch string(k) {
				case "role":
					l.role = str(v, dt)
				case "toolCallId":
					l.toolCallIDFound = true
					l.toolCallIDType = dt
					l.toolCallID = str(v, dt)
				case "timestamp":
					if dt == jsonparser.Number {
						l.msTime, _ = jsonparser.ParseInt(v)
					}
				case "details":
					if dt == jsonparser.Object {
						l.synthetic, _ = jsonparser.GetBoolean(v, "openclawSyntheticMissingToolResult")
						l.runMs, l.hasRun = runOf(v)
					}
				case "content":
					content, contentType = v, dt
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		f.Skip(dialect.ReasonInvalidJSON)
		return true
	}
	f.Line = dialect.LineMayTimeout // the classifier reads the message's role and error itself
	switch l.role {
	case "assistant", "toolResult":
	default:
		return false
	}
	scopeAttr, scope := piConversation(lr, l.sessionID)
	t := piTime(lr, l.msTime, l.timestamp)
	if l.role == "toolResult" {
		addPiResult(f, &l, t, scopeAttr, scope)
		return true
	}
	f.AddStep(pairing.KindBoundary, "", "", t, scopeAttr, scope, l.id)
	if contentType != jsonparser.Array {
		return true
	}
	_, err = jsonparser.ArrayEach(content, func(block []byte, dt jsonparser.ValueType, _ int, e error) {
		if e != nil || dt != jsonparser.Object {
			return
		}
		if bt, err := jsonparser.GetUnsafeString(block, "type"); err != nil || bt != "toolCall" {
			return
		}
		name, _ := jsonparser.GetString(block, "name")
		v, vt, _, err := jsonparser.Get(block, "id")
		switch {
		case errors.Is(err, jsonparser.KeyPathNotFoundError):
			f.Skip(dialect.ReasonMissingCallID)
		case err != nil || vt != jsonparser.String:
			f.Skip(dialect.ReasonInvalidCallID)
		default:
			id := str(v, vt)
			if id == "" {
				f.Skip(dialect.ReasonMissingCallID)
				return
			}
			f.AddStep(pairing.KindUse, id, name, t, scopeAttr, scope, l.id)
		}
	})
	if err != nil {
		f.Skip(dialect.ReasonInvalidJSON)
	}
	return true
}

// piTimeoutLine is what the classifier is told of a line that is not a pi message entry,
// from the type member as the classifier reads it (the same jsonparser lookup, which does
// not unescape it: an escaped value is left to the classifier): LineNoTimeout when there is none or it is none of the line types the
// classifier reads, LineUnread otherwise (a Claude Code line without a sessionId, or an
// escaped value).
func piTimeoutLine(typ string, err error) dialect.Line {
	if err != nil {
		return dialect.LineNoTimeout
	}
	switch {
	case strings.IndexByte(typ, '\\') >= 0:
		return dialect.LineUnread
	case typ == "user", typ == "system", typ == "assistant": // "message" is a pi message entry
		return dialect.LineUnread
	}
	return dialect.LineNoTimeout
}

func addPiResult(f *dialect.Found, l *piLine, t int64, scopeAttr, scope string) {
	switch {
	case !l.toolCallIDFound || (l.toolCallIDType == jsonparser.String && l.toolCallID == ""):
		f.Skip(dialect.ReasonMissingCallID)
	case l.toolCallIDType != jsonparser.String:
		f.Skip(dialect.ReasonInvalidCallID)
	default:
		kind := pairing.KindResult
		if l.synthetic {
			kind = pairing.KindAbort
		}
		f.AddStep(kind, l.toolCallID, "", t, scopeAttr, scope, "")
		f.RunMs, f.HasRun = l.runMs, l.hasRun
	}
}

// extractPiMap reads a pi/OpenClaw entry already parsed into a map body.
func extractPiMap(m pcommon.Map, lr plog.LogRecord, f *dialect.Found) bool {
	if v, ok := fields.Get(m, "type"); !ok || v.Type() != pcommon.ValueTypeStr || v.Str() != "message" {
		return false
	}
	mv, ok := fields.Get(m, "message")
	if !ok || mv.Type() != pcommon.ValueTypeMap {
		return false
	}
	msg := mv.Map()
	getStr := func(m pcommon.Map, k string) string {
		if v, ok := fields.Get(m, k); ok && v.Type() == pcommon.ValueTypeStr {
			return v.Str()
		}
		return ""
	}
	l := piLine{id: getStr(m, "id"), timestamp: getStr(m, "timestamp"), sessionID: getStr(m, "sessionId"), role: getStr(msg, "role")}
	switch l.role {
	case "assistant", "toolResult":
	default:
		return false
	}
	if v, ok := fields.Get(msg, "timestamp"); ok {
		switch v.Type() {
		case pcommon.ValueTypeInt:
			l.msTime = v.Int()
		case pcommon.ValueTypeDouble:
			l.msTime = int64(v.Double())
		}
	}
	scopeAttr, scope := piConversation(lr, l.sessionID)
	t := piTime(lr, l.msTime, l.timestamp)
	if l.role == "toolResult" {
		if v, ok := fields.Get(msg, "toolCallId"); ok {
			l.toolCallIDFound = true
			l.toolCallIDType = jsonparser.Unknown
			if v.Type() == pcommon.ValueTypeStr {
				l.toolCallIDType, l.toolCallID = jsonparser.String, v.Str()
			}
		}
		if d, ok := fields.Get(msg, "details"); ok && d.Type() == pcommon.ValueTypeMap {
			if s, ok := fields.Get(d.Map(), "openclawSyntheticMissingToolResult"); ok && s.Type() == pcommon.ValueTypeBool {
				l.synthetic = s.Bool()
			}
			l.runMs, l.hasRun = runOfMap(d.Map())
		}
		addPiResult(f, &l, t, scopeAttr, scope)
		return true
	}
	f.AddStep(pairing.KindBoundary, "", "", t, scopeAttr, scope, l.id)
	content, ok := fields.Get(msg, "content")
	if !ok || content.Type() != pcommon.ValueTypeSlice {
		return true
	}
	blocks := content.Slice()
	for i := 0; i < blocks.Len(); i++ {
		b := blocks.At(i)
		if b.Type() != pcommon.ValueTypeMap {
			continue
		}
		bm := b.Map()
		if getStr(bm, "type") != "toolCall" {
			continue
		}
		id, ok := fields.Get(bm, "id")
		switch {
		case !ok || (id.Type() == pcommon.ValueTypeStr && id.Str() == ""):
			f.Skip(dialect.ReasonMissingCallID)
		case id.Type() != pcommon.ValueTypeStr:
			f.Skip(dialect.ReasonInvalidCallID)
		default:
			f.AddStep(pairing.KindUse, id.Str(), getStr(bm, "name"), t, scopeAttr, scope, l.id)
		}
	}
	return true
}
