// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package dialect

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

func TestScanFlat(t *testing.T) {
	l := FlatLayout{Messages: "m.", Calls: "calls.", ID: "id", Name: "name", Arguments: "args", ResultID: "answers"}
	attrs := pcommon.NewMap()
	require.NoError(t, attrs.FromRaw(map[string]any{
		"m.10.calls.0.id":      "late",
		"m.2.calls.1.id":       "b",
		"m.2.calls.1.name":     "grep",
		"m.2.calls.1.args":     `{"q":1}`,
		"m.2.calls.0.id":       "a",
		"m.2.calls.0.name":     7, // not a string: no name
		"m.3.answers":          "a",
		"m.x.calls.0.id":       "bad index",
		"m.4.calls.y.id":       "bad call index",
		"m.5.calls.0.other":    "unknown field",
		"m.6.calls.0.name":     "ls",
		"m.1234567890.answers": "index too long",
		"other.0.calls.0.id":   "other prefix",
	}))
	got := ScanFlat(attrs, &l, nil)
	type flat struct {
		msg, call int
		id, name  string
		result    bool
	}
	var simple []flat
	for _, c := range got {
		simple = append(simple, flat{c.Msg, c.Call, c.ID.AsString(), c.Name, c.IsResult()})
	}
	assert.Equal(t, []flat{
		{2, 0, "a", "", false},
		{2, 1, "b", "grep", false},
		{3, -1, "a", "", true},
		{6, 0, "", "ls", false},
		{10, 0, "late", "", false},
	}, simple)
	assert.Equal(t, `{"q":1}`, got[1].Arguments.Str())

	var f Found
	_, ok := f.FlatCallID(&got[3])
	assert.False(t, ok)
	id, ok := f.FlatCallID(&got[0])
	assert.True(t, ok)
	assert.Equal(t, "a", id)
	assert.Equal(t, []string{ReasonMissingCallID}, f.Malformed)
}

func TestAddFlatHistory(t *testing.T) {
	uses := FlatLayout{Messages: "out.", Calls: "calls.", ID: "id", Name: "name", Arguments: "args"}
	echoes := FlatLayout{Messages: "in.", ResultID: "answers"}
	span := ptrace.NewSpan()
	span.SetStartTimestamp(100)
	span.SetEndTimestamp(200)
	tid := pcommon.TraceID{1, 2, 3}
	span.SetTraceID(tid)
	require.NoError(t, span.Attributes().FromRaw(map[string]any{
		"out.0.calls.1.id":   "b",
		"out.0.calls.1.name": "ls",
		"out.0.calls.0.id":   "a",
		"out.0.calls.0.name": "grep",
		"out.0.calls.0.args": `{"q": 1.0}`,
		"out.1.calls.0.id":   7, // not a string
		"out.1.calls.1.name": "no id",
		"in.0.answers":       "z",
		"in.1.answers":       "",
		"in.2.calls.0.id":    "not an echo",
	}))
	var f Found
	f.AddFlatHistory(span, &uses, &echoes, "step-1")

	grep, ok := MatchJSON("grep", []byte(`{"q":1}`))
	require.True(t, ok)
	ls, ok := MatchJSON("ls", nil)
	require.True(t, ok)
	assert.Equal(t, []Item{
		{Kind: pairing.KindUse, CallID: "a", ToolName: "grep", Time: 200, Step: "step-1", Match: InTrace(grep, tid)},
		{Kind: pairing.KindUse, CallID: "b", ToolName: "ls", Time: 200, Step: "step-1", Match: InTrace(ls, tid)},
		{Kind: pairing.KindEcho, CallID: "z", Time: 100},
	}, f.Items)
	assert.Equal(t, []string{ReasonInvalidCallID, ReasonMissingCallID, ReasonMissingCallID}, f.Malformed)
}
