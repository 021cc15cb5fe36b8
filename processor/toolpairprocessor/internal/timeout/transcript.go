package timeout

import (
	"bytes"
	"time"

	"github.com/buger/jsonparser"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/readonly"
)

// TranscriptLine reads a log body holding one transcript line (a JSONL string, or a map the
// filelog receiver parsed) and reports whether the line is a timeout, with its kind, time
// and, for Claude Code lines, scope. Lines read:
//
//   - Claude Code (2.1): a "user" line's tool_result blocks with is_error true and a content
//     line starting with "Command timed out" (the Bash tool's timeout) are a tool timeout; a
//     "system" line with subtype "api_error" whose error.status is 408/504 or whose
//     error.message matches MessagePattern, and an "assistant" line with isApiErrorMessage
//     true whose text matches, are a model call timeout. Time: the line's timestamp.
//   - pi (0.73) and OpenClaw (2026.9), "message" entries: a toolResult message with isError
//     true whose text has a line starting with "Command timed out", or whose details say
//     timedOut true or failureKind/exitReason "overall-timeout" (OpenClaw exec), is a tool
//     timeout; an assistant message with stopReason "error" or "aborted" and an errorMessage
//     matching MessagePattern is a model call timeout. Time: the message's timestamp (ms),
//     else the entry's.
//
// Only lines containing one of a few timeout spellings (see mayMention) or the digits of a
// timeout status code (see mayStatus) are decoded at all.
func TranscriptLine(body pcommon.Value) (Record, bool) {
	var data []byte
	switch body.Type() {
	case pcommon.ValueTypeStr:
		s := body.Str()
		if len(s) < 2 || s[0] != '{' {
			return Record{}, false
		}
		data = readonly.Bytes(s)
	case pcommon.ValueTypeMap:
		if _, ok := body.Map().Get("type"); !ok {
			return Record{}, false
		}
		data = []byte(body.AsString())
	default:
		return Record{}, false
	}
	if !mayMention(data) && !mayStatus(data) {
		return Record{}, false
	}
	return transcriptJSON(data)
}

// Status digits mayStatus looks for.
var (
	digits408 = []byte("408")
	digits504 = []byte("504")
)

// mayStatus reports whether a line may hold a timeout status code (408 or 504, specification
// section 4) whose message spells no timeout, such as a Claude Code api_error line
// {"error":{"message":"Bad gateway","status":504}}: whether it holds the digits "408" or
// "504" anywhere. Identifiers and timestamps hold them too now and then; such lines are
// decoded to no avail, which costs time, not a wrong answer.
func mayStatus(data []byte) bool {
	return bytes.Contains(data, digits504) || bytes.Contains(data, digits408)
}

// mayMention reports whether a line may hold a timeout: a spelling MessagePattern matches
// ("timed out", "timeout", "time out", "timedout", "deadline exceeded"), in any case, or one of
// the agents' other spellings ("Time-out" of "504 Gateway Time-out", "timed-out"); only such
// lines are decoded. It looks for the rare letters of the two phrases, 'm' and 'x' in either
// case, with bytes.IndexByte (vectorised), and checks the letters around each: four scans of
// the line, each a few times faster than a substring search for "ime" or "eadline", whose
// first letters are among the most frequent of English and JSON.
func mayMention(data []byte) bool {
	return around(data, 'm', timeAt) || around(data, 'M', timeAt) ||
		around(data, 'x', deadlineAt) || around(data, 'X', deadlineAt)
}

// around reports whether at reports true at any index of data holding c.
func around(data []byte, c byte, at func(data []byte, i int) bool) bool {
	for i := 0; i < len(data); i++ {
		j := bytes.IndexByte(data[i:], c)
		if j < 0 {
			return false
		}
		i += j
		if at(data, i) {
			return true
		}
	}
	return false
}

// lower is b in lower case when it is an ASCII letter; any other byte stays apart from
// the letters (b|0x20 of a non-letter is never a lower-case letter it was not).
func lower(b byte) byte { return b | 0x20 }

// timeAt reports whether the 'm' at data[i] is that of "time", followed by an optional 'd',
// an optional space or hyphen, and "out", in any case.
func timeAt(data []byte, i int) bool {
	if i < 2 || i+4 >= len(data) || lower(data[i-2]) != 't' || lower(data[i-1]) != 'i' || lower(data[i+1]) != 'e' {
		return false
	}
	k := i + 2
	if lower(data[k]) == 'd' {
		k++
	}
	if k < len(data) && (data[k] == ' ' || data[k] == '-') {
		k++
	}
	return k+3 <= len(data) && lower(data[k]) == 'o' && lower(data[k+1]) == 'u' && lower(data[k+2]) == 't'
}

// deadlineAt reports whether the 'x' at data[i] is that of "deadline exceeded", in any
// case.
func deadlineAt(data []byte, i int) bool {
	const before, after = "deadline e", "ceeded"
	if i < len(before) || i+1+len(after) > len(data) {
		return false
	}
	for n := 0; n < len(before); n++ {
		if lower(data[i-len(before)+n]) != before[n]|0x20 {
			return false
		}
	}
	for n := 0; n < len(after); n++ {
		if lower(data[i+1+n]) != after[n] {
			return false
		}
	}
	return true
}

func transcriptJSON(data []byte) (Record, bool) {
	typ, _ := jsonparser.GetString(data, "type")
	// The time is read once the line is known to be a timeout: most lines that mention one
	// are not, and "timestamp" comes after the message, at the end of a long line.
	r := Record{Transcript: true}
	switch typ {
	case "user":
		r.Kind = KindTool
		r.Timeout = claudeToolTimeout(data)
	case "system":
		if sub, _ := jsonparser.GetString(data, "subtype"); sub != "api_error" {
			return Record{}, false
		}
		r.Kind = KindModel
		status, _, _, _ := jsonparser.Get(data, "error", "status")
		msg, _ := jsonparser.GetString(data, "error", "message")
		r.Timeout = StatusCode(string(status)) || Message(msg)
	case "assistant":
		if apiErr, _ := jsonparser.GetBoolean(data, "isApiErrorMessage"); !apiErr {
			return Record{}, false
		}
		r.Kind = KindModel
		r.Timeout = anyText(data, Message, "message", "content")
	case "message":
		// pi and OpenClaw: the message's own time (ms) first, as the transcript dialect times
		// the entry (specification section 8).
		if ms, err := jsonparser.GetInt(data, "message", "timestamp"); err == nil && ms > 0 {
			r.End = ms * int64(time.Millisecond) // else the entry's timestamp, below
		}
		role, _ := jsonparser.GetString(data, "message", "role")
		switch role {
		case "toolResult":
			r.Kind = KindTool
			r.Timeout = piToolTimeout(data)
		case "assistant":
			r.Kind = KindModel
			stop, _ := jsonparser.GetString(data, "message", "stopReason")
			msg, _ := jsonparser.GetString(data, "message", "errorMessage")
			r.Timeout = (stop == "error" || stop == "aborted") && Message(msg)
		}
	}
	if !r.Timeout {
		return Record{}, false
	}
	if r.End == 0 {
		r.End = isoTime(data, "timestamp")
	}
	if sid, _ := jsonparser.GetString(data, "sessionId"); sid != "" {
		r.Scope, r.ScopeAttr = sid, "session.id"
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
		found = anyText(block, ToolOutput, "content")
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
	return anyText(data, ToolOutput, "message", "content")
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
