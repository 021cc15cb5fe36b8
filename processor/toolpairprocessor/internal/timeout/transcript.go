// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package timeout

import (
	"bytes"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/registry"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/readonly"
)

// TranscriptLine reads a log body holding one transcript line (a JSONL string, or a map the
// filelog receiver parsed) and reports whether the line is a timeout, with its kind, time
// and scope: the first built-in dialect whose TimeoutLine (dialect.Entry) reads it as a
// timeout line says so (the transcript dialect reads Claude Code's, pi's and OpenClaw's
// lines). A map body is read as its JSON text, and only when it has a "type" member.
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
	for _, read := range timeoutLines {
		if l, ok := read(data); ok {
			r := Record{Timeout: true, Kind: KindTool, End: l.End, Scope: l.Scope, ScopeAttr: l.ScopeAttr, Transcript: true}
			if l.Model {
				r.Kind = KindModel
			}
			return r, true
		}
	}
	return Record{}, false
}

// timeoutLines are the TimeoutLine readers of the built-in dialects (dialect.Entry), in
// trial order.
var timeoutLines = func() []func([]byte) (dialect.TimeoutLine, bool) {
	var out []func([]byte) (dialect.TimeoutLine, bool)
	for _, e := range registry.Entries() {
		if e.TimeoutLine != nil {
			out = append(out, e.TimeoutLine)
		}
	}
	return out
}()

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
// ("timed out", "timeout", "time out", "timedout", "deadline exceeded", "deadlineexceeded"),
// in any case, wherever it stands (MessagePattern also asks it to stand as a word), or one of
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

// deadlineAt reports whether the 'x' at data[i] is that of "deadline exceeded" or
// "deadlineexceeded", in any case.
func deadlineAt(data []byte, i int) bool {
	const before, after = "deadline", "ceeded"
	if i < 1+len(before) || i+1+len(after) > len(data) || lower(data[i-1]) != 'e' {
		return false
	}
	for n := 0; n < len(after); n++ {
		if lower(data[i+1+n]) != after[n] {
			return false
		}
	}
	k := i - 1 // the 'e' before the 'x'
	if data[k-1] == ' ' {
		k--
	}
	if k < len(before) {
		return false
	}
	for n := 0; n < len(before); n++ {
		if lower(data[k-len(before)+n]) != before[n] {
			return false
		}
	}
	return true
}
