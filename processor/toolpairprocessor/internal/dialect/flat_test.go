package dialect

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
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
