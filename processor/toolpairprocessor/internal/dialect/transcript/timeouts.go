// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package transcript

import (
	"time"

	"github.com/buger/jsonparser"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
)

// TimeoutLine reads one transcript line (a JSON object's text) for the timeout classifier
// (specification section 4) and reports whether it is a timeout line, with its kind, its time
// and, for Claude Code lines, its scope. Lines read:
//
//   - Claude Code (2.1): a "user" line's tool_result blocks with is_error true and a content
//     line starting with "Command timed out" (the Bash tool's timeout,
//     dialect.CommandTimedOut) are a tool timeout; a "system" line with subtype "api_error"
//     whose error.status is 408/504 or whose error.message matches dialect.TimeoutMessage, and
//     an "assistant" line with isApiErrorMessage true whose text matches, are a model call
//     timeout. Time: the line's timestamp. Scope: sessionId, or sessionId/agentId for a
//     subagent, reported as session.id.
//   - pi (0.73) and OpenClaw (2026.9), "message" entries: a toolResult message with isError
//     true whose text has a line starting with "Command timed out", or whose details say
//     timedOut true or failureKind/exitReason "overall-timeout" (OpenClaw exec), is a tool
//     timeout; an assistant message with stopReason "error" or "aborted" and an errorMessage
//     matching dialect.TimeoutMessage is a model call timeout. Time: the message's timestamp
//     (ms), else the entry's.
//
// It is what timeoutline.go's dialect.Line tells the classifier about, read by the
// classifier's reader (github.com/buger/jsonparser).
func TimeoutLine(data []byte) (dialect.TimeoutLine, bool) {
	typ, _ := jsonparser.GetString(data, "type")
	// The time is read once the line is known to be a timeout: most lines that mention one
	// are not, and "timestamp" comes after the message, at the end of a long line.
	var r dialect.TimeoutLine
	timedOut := false
	switch typ {
	case "user":
		timedOut = claudeToolTimeout(data)
	case "system":
		if sub, _ := jsonparser.GetString(data, "subtype"); sub != "api_error" {
			return dialect.TimeoutLine{}, false
		}
		r.Model = true
		status, _, _, _ := jsonparser.Get(data, "error", "status")
		msg, _ := jsonparser.GetString(data, "error", "message")
		timedOut = dialect.TimeoutStatus(string(status)) || dialect.TimeoutText(msg)
	case "assistant":
		if apiErr, _ := jsonparser.GetBoolean(data, "isApiErrorMessage"); !apiErr {
			return dialect.TimeoutLine{}, false
		}
		r.Model = true
		timedOut = anyText(data, dialect.TimeoutText, "message", "content")
	case "message":
		// pi and OpenClaw: the message's own time (ms) first, as the transcript dialect times
		// the entry (specification section 8).
		if ms, err := jsonparser.GetInt(data, "message", "timestamp"); err == nil && ms > 0 {
			r.End = ms * int64(time.Millisecond) // else the entry's timestamp, below
		}
		role, _ := jsonparser.GetString(data, "message", "role")
		switch role {
		case "toolResult":
			timedOut = piToolTimeout(data)
		case "assistant":
			r.Model = true
			stop, _ := jsonparser.GetString(data, "message", "stopReason")
			msg, _ := jsonparser.GetString(data, "message", "errorMessage")
			timedOut = (stop == "error" || stop == "aborted") && dialect.TimeoutText(msg)
		}
	}
	if !timedOut {
		return dialect.TimeoutLine{}, false
	}
	if r.End == 0 {
		r.End = isoTime(data, "timestamp")
	}
	if sid, _ := jsonparser.GetString(data, "sessionId"); sid != "" {
		r.Scope, r.ScopeAttr = sid, ScopeAttr
		if aid, _ := jsonparser.GetString(data, "agentId"); aid != "" {
			r.Scope = sid + "/" + aid
		}
	}
	return r, true
}

// claudeToolTimeout reports whether a Claude Code user line holds a tool_result block marked
// is_error whose content says the command timed out.
func claudeToolTimeout(data []byte) bool {
	found := false
	_, _ = jsonparser.ArrayEach(data, func(block []byte, dt jsonparser.ValueType, _ int, err error) {
		if found || err != nil || dt != jsonparser.Object {
			return
		}
		if bt, _ := jsonparser.GetString(block, "type"); bt != "tool_result" {
			return
		}
		if isErr, _ := jsonparser.GetBoolean(block, "is_error"); !isErr {
			return
		}
		found = anyText(block, dialect.CommandTimedOut, "content")
	}, "message", "content")
	return found
}

// piToolTimeout reports whether a pi or OpenClaw toolResult message says its command timed
// out.
func piToolTimeout(data []byte) bool {
	if timedOut, _ := jsonparser.GetBoolean(data, "message", "details", "timedOut"); timedOut {
		return true
	}
	for _, k := range [...]string{"failureKind", "exitReason"} {
		if v, _ := jsonparser.GetString(data, "message", "details", k); v == "overall-timeout" {
			return true
		}
	}
	if isErr, _ := jsonparser.GetBoolean(data, "message", "isError"); !isErr {
		return false
	}
	return anyText(data, dialect.CommandTimedOut, "message", "content")
}

// anyText applies match to the text at path: a string, or an array of {"type":"text","text"}
// parts (each part's text).
func anyText(data []byte, match func(string) bool, path ...string) bool {
	v, dt, _, err := jsonparser.Get(data, path...)
	if err != nil {
		return false
	}
	switch dt {
	case jsonparser.String:
		s, err := jsonparser.ParseString(v)
		return err == nil && match(s)
	case jsonparser.Array:
		found := false
		_, _ = jsonparser.ArrayEach(v, func(part []byte, pt jsonparser.ValueType, _ int, err error) {
			if found || err != nil || pt != jsonparser.Object {
				return
			}
			if s, err := jsonparser.GetString(part, "text"); err == nil {
				found = match(s)
			}
		})
		return found
	}
	return false
}

// isoTime reads an ISO 8601 timestamp at key, in Unix nanoseconds, or 0.
func isoTime(data []byte, key string) int64 {
	s, err := jsonparser.GetString(data, key)
	if err != nil {
		return 0
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0
	}
	return t.UnixNano()
}
