// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package transcript

import (
	"bytes"

	"github.com/buger/jsonparser"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/readonly"
)

// LineConversation returns the scope of a transcript line whether or not it holds tool items: the
// scope ExtractLog gives the items of such a line, found by the same functions (scopeOf for
// a Claude Code line, piScope for a pi/OpenClaw entry). A Claude Code line is a JSON object
// with a top-level string sessionId; any other JSON object with a string type member is read
// as a pi/OpenClaw entry, whose scope is the file it came from. ok is false for a body that
// is neither, and for an entry with no scope to give (no file attribute, no session ID).
//
// It is what a toolpair in route mode reads for a log record none of whose dialects found
// items: a transcript line that is not a tool line still belongs to its session (a timeout
// line is classified against the session's calls in flight).
func LineConversation(lr plog.LogRecord) (attr, scope string, ok bool) {
	body := lr.Body()
	switch body.Type() {
	case pcommon.ValueTypeStr:
		s := body.Str()
		data := bytes.TrimSpace(readonly.Bytes(s))
		if len(data) == 0 || data[0] != '{' {
			return "", "", false
		}
		if bytes.Contains(data, markerSessionID) {
			if l, _, _, read := readLine(data); read && l.sessionID != "" {
				return ScopeAttr, conversationOf(l), true
			}
		}
		if _, dt, _, err := jsonparser.Get(data, "type"); err != nil || dt != jsonparser.String {
			return "", "", false
		}
		sid, _ := jsonparser.GetString(data, "sessionId")
		attr, scope = piConversation(lr, sid)
	case pcommon.ValueTypeMap:
		m := body.Map()
		get := func(k string) (string, bool) {
			if v, found := fields.Get(m, k); found && v.Type() == pcommon.ValueTypeStr {
				return v.Str(), true
			}
			return "", false
		}
		sid, _ := get("sessionId")
		if sid != "" {
			aid, _ := get("agentId")
			return ScopeAttr, conversationOf(line{sessionID: sid, agentID: aid}), true
		}
		if _, typed := get("type"); !typed {
			return "", "", false
		}
		attr, scope = piConversation(lr, "")
	default:
		return "", "", false
	}
	return attr, scope, scope != ""
}

// FileConversation is the scope of a transcript line that names no session (pi, OpenClaw): the file
// it came from, log.file.path else log.file.name as the filelog receiver sets them
// (specification section 8); "" when neither is set.
func FileConversation(attrs pcommon.Map) string {
	for _, k := range [...]string{AttrFilePath, AttrFileName} {
		if v, ok := fields.Get(attrs, k); ok && v.Str() != "" {
			return v.Str()
		}
	}
	return ""
}
