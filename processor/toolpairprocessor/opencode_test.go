// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// TestGoldenOpencodeCapture runs opencode's real AI SDK 6 spans (ai_sdk; the capture trimmed to
// its ai.* spans and its own Tool.execute span, see testdata/README.md): the call the
// ai.streamText.doStream span announced is paired on its ai.toolCall span, scoped by the
// session.id opencode adds. opencode runs the tool while the model's stream is still open,
// so the doStream span, the announcing record, ends after the tool span: the use time is the
// tool span's start, the earliest time of the call, and the duration is the tool span's own.
// opencode's Tool.execute span (tool.call_id) is no dialect's and passes unmarked.
func TestGoldenOpencodeCapture(t *testing.T) {
	in, err := golden.ReadTraces(filepath.Join("..", "..", "testdata", "opencode", "normal", "traces.json"))
	require.NoError(t, err)
	announced := aisdk6Announcements(t, in)
	require.Equal(t, []string{"call_mock_normal_01"}, keysOf(announced))
	use := announced["call_mock_normal_01"]
	n := in.SpanCount()
	pl := newRig(t, tracesOnly())
	pl.consume(in)
	pl.advance(11 * time.Minute)
	pl.shutdown()
	got := pl.output()

	var tools []ptrace.Span
	for _, s := range allSpans(got) {
		if v, _ := s.Attributes().Get(synth.AttrSynthetic); v.Bool() {
			t.Errorf("synthetic span %s", s.Name())
			continue
		}
		if s.Name() != "ai.toolCall" {
			assert.Empty(t, strAttr(s, "toolpair.outcome"), s.Name())
			continue
		}
		tools = append(tools, s)
	}
	require.Len(t, tools, 1)
	s := tools[0]
	assert.Equal(t, "call_mock_normal_01", strAttr(s, "ai.toolCall.id"))
	assert.Equal(t, "ses_de1b75864ffe4GFJmioOraY0xW", strAttr(s, "session.id"))
	assert.Equal(t, "paired", strAttr(s, "toolpair.outcome"))
	require.Greater(t, use.EndTimestamp(), s.EndTimestamp(), "the stream outlives the tool")
	d, ok := s.Attributes().Get("toolpair.call.duration_ms")
	require.True(t, ok)
	assert.Equal(t, (int64(s.EndTimestamp())-int64(s.StartTimestamp()))/1e6, d.Int())
	assert.Equal(t, n, got.SpanCount(), "nothing added, nothing dropped")

	assertGoldenTraces(t, got, "opencode", "normal")
}
