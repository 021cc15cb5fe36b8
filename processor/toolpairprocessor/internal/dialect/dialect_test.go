// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package dialect

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/messages"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

func TestSkipHistory(t *testing.T) {
	noop := func(messages.Part) {}
	tests := []struct {
		name string
		err  error
		want []string
	}{
		{"scanned", messages.ScanValue(pcommon.NewValueStr(`[{"role":"user","parts":[]}]`), noop), nil},
		{"wrong type", messages.ScanValue(pcommon.NewValueInt(3), noop), []string{ReasonInvalidType}},
		{"unreadable JSON", messages.ScanValue(pcommon.NewValueStr(`[{"role":`), noop), []string{ReasonInvalidJSON}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f Found
			f.SkipHistory(tt.err)
			assert.Equal(t, tt.want, f.Malformed)
		})
	}
}

func TestAddLogCall(t *testing.T) {
	tests := []struct {
		name      string
		attrs     map[string]any
		added     bool
		want      []Item
		malformed []string
	}{
		{"call", map[string]any{"id": "c1", "tool": "Bash"}, true,
			[]Item{{Kind: pairing.KindResult, CallID: "c1", ToolName: "Bash", Time: 42}}, nil},
		{"no tool name", map[string]any{"id": "c1"}, true,
			[]Item{{Kind: pairing.KindResult, CallID: "c1", Time: 42}}, nil},
		{"tool name not a string", map[string]any{"id": "c1", "tool": 7}, true,
			[]Item{{Kind: pairing.KindResult, CallID: "c1", ToolName: "7", Time: 42}}, nil},
		{"missing call ID", map[string]any{"tool": "Bash"}, false, nil, []string{ReasonMissingCallID}},
		{"empty call ID", map[string]any{"id": ""}, false, nil, []string{ReasonMissingCallID}},
		{"call ID not a string", map[string]any{"id": 3}, false, nil, []string{ReasonInvalidCallID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lr := plog.NewLogRecord()
			lr.SetObservedTimestamp(42)
			assert.NoError(t, lr.Attributes().FromRaw(tt.attrs))
			var f Found
			assert.Equal(t, tt.added, f.AddLogCall(lr, pairing.KindResult, "id", "tool"))
			assert.Equal(t, tt.want, f.Items)
			assert.Equal(t, tt.malformed, f.Malformed)
		})
	}
}

// TestFoundText: the bytes Text hands out never overlap, across Reset, copies of the Found
// and new blocks, so the strings made of them keep their values.
func TestFoundText(t *testing.T) {
	var f Found
	var got [][]byte
	for i := range 1000 {
		n := 1 + i%70
		b := f.Text(n)
		require.Len(t, b, n)
		for j := range b {
			b[j] = byte(i)
		}
		got = append(got, b)
		if i%7 == 0 {
			f.Reset()
		}
		if i%11 == 0 {
			g := f // a copy shares the blocks: what it hands out is not handed out again
			b := g.Text(3)
			for j := range b {
				b[j] = 0xff
			}
		}
	}
	for i, b := range got {
		for _, c := range b {
			require.Equal(t, byte(i), c, "bytes of call %d overwritten", i)
		}
	}
	assert.Len(t, f.Text(textChunk), textChunk, "a long string gets its own allocation")
}
