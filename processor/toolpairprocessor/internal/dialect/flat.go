// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package dialect

import (
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// FlatLayout names the flattened attributes in which a source records the tool calls of a
// chat history, one attribute per field: {Messages}{i}.{Calls}{j}.{ID|Name|Arguments} for the
// calls a message makes, and {Messages}{i}.{ResultID} for the call a tool message answers.
// OpenInference writes llm.output_messages.0.message.tool_calls.0.tool_call.id; older
// OpenLLMetry releases gen_ai.completion.0.tool_calls.0.id.
type FlatLayout struct {
	// Messages is the prefix of the message attributes, ending in ".".
	Messages string
	// Calls is the prefix of a message's tool call attributes after "{i}.", ending in ".";
	// "" when the layout records no calls.
	Calls string
	// ID, Name and Arguments are the fields of a call after "{j}.".
	ID, Name, Arguments string
	// ResultID is the field of a tool message after "{i}." that holds the ID of the call it
	// answers; "" when the layout records no results.
	ResultID string
}

// FlatCall is one tool call, or one tool result when ResultOnly, read from flattened
// attributes.
type FlatCall struct {
	// Msg and Call are the indexes {i} and {j}; Call is -1 for a result.
	Msg, Call int
	// ID is the call ID attribute (Empty when missing).
	ID pcommon.Value
	// Name is the tool name, "" when missing or not a string.
	Name string
	// Arguments is the arguments attribute (Empty when missing).
	Arguments pcommon.Value
}

// IsResult reports whether the call is a tool message's answer ({Messages}{i}.{ResultID}).
func (c *FlatCall) IsResult() bool { return c.Call < 0 }

// ScanFlat returns the tool calls and results that attrs records in layout l, ordered by
// message and call index; buf is reused. Of repeated keys the last occurrence counts. A key
// whose indexes are not decimal numbers is ignored.
func ScanFlat(attrs pcommon.Map, l *FlatLayout, buf []FlatCall) []FlatCall {
	calls := buf[:0]
	var at map[[2]int]int // index in calls by (msg, call), made at the first call
	find := func(msg, call int) *FlatCall {
		if at == nil {
			at = make(map[[2]int]int)
		}
		if i, ok := at[[2]int{msg, call}]; ok {
			return &calls[i]
		}
		at[[2]int{msg, call}] = len(calls)
		calls = append(calls, FlatCall{Msg: msg, Call: call, ID: pcommon.NewValueEmpty(), Arguments: pcommon.NewValueEmpty()})
		return &calls[len(calls)-1]
	}
	for k, v := range attrs.All() {
		rest, ok := strings.CutPrefix(k, l.Messages)
		if !ok {
			continue
		}
		msg, rest, ok := index(rest)
		if !ok {
			continue
		}
		if l.ResultID != "" && rest == l.ResultID {
			find(msg, -1).ID = v
			continue
		}
		if l.Calls == "" {
			continue
		}
		rest, ok = strings.CutPrefix(rest, l.Calls)
		if !ok {
			continue
		}
		call, field, ok := index(rest)
		if !ok {
			continue
		}
		switch field {
		case l.ID:
			find(msg, call).ID = v
		case l.Name:
			c := find(msg, call)
			c.Name = ""
			if v.Type() == pcommon.ValueTypeStr {
				c.Name = v.Str()
			}
		case l.Arguments:
			find(msg, call).Arguments = v
		}
	}
	slices.SortFunc(calls, func(a, b FlatCall) int {
		if a.Msg != b.Msg {
			return a.Msg - b.Msg
		}
		return a.Call - b.Call
	})
	return calls
}

// index splits "{n}.rest" into n and rest; ok is false unless n is a decimal number of at
// most 9 digits followed by a dot.
func index(s string) (n int, rest string, ok bool) {
	i := 0
	for i < len(s) && i < 10 && s[i] >= '0' && s[i] <= '9' {
		n = n*10 + int(s[i]-'0')
		i++
	}
	if i == 0 || i > 9 || i >= len(s) || s[i] != '.' {
		return 0, "", false
	}
	return n, s[i+1:], true
}

// FlatCallID reads the call ID of c: a missing or empty value is skipped as
// ReasonMissingCallID and a value that is not a string as ReasonInvalidCallID; then ok is
// false.
func (f *Found) FlatCallID(c *FlatCall) (id string, ok bool) {
	if c.ID.Type() == pcommon.ValueTypeEmpty {
		f.Skip(ReasonMissingCallID)
		return "", false
	}
	return f.ValueCallID(c.ID)
}

// AddFlatHistory appends the tool calls of the flattened chat history that span's attributes
// record: each call laid out as uses is a use at the span's end, of step step, whose match
// hash (MatchValue of its name and arguments, bound to the span's trace by InTrace) lets a
// result without a call ID find it; each result laid out as echoes is an echo at the span's
// start. Call IDs are read as FlatCallID reads them: a missing or wrong one is skipped and
// reported. A nil uses (or echoes) reads no uses (or echoes).
func (f *Found) AddFlatHistory(span ptrace.Span, uses, echoes *FlatLayout, step string) {
	attrs := span.Attributes()
	end, start := int64(span.EndTimestamp()), int64(span.StartTimestamp())
	var buf [4]FlatCall
	if uses != nil {
		for _, c := range ScanFlat(attrs, uses, buf[:0]) {
			if c.IsResult() {
				continue
			}
			if id, ok := f.FlatCallID(&c); ok {
				h, _ := MatchValue(c.Name, c.Arguments)
				f.AddMatch(pairing.KindUse, id, c.Name, end, step, InTrace(h, span.TraceID()))
			}
		}
	}
	if echoes == nil {
		return
	}
	for _, c := range ScanFlat(attrs, echoes, buf[:0]) {
		if !c.IsResult() {
			continue
		}
		if id, ok := f.FlatCallID(&c); ok {
			f.Add(pairing.KindEcho, id, "", start)
		}
	}
}
