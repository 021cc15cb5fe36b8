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

// TestGoldenCopilotCaptures runs GitHub Copilot CLI's real spans (OTel GenAI semantic
// conventions, read by genai): in normal, the call the first chat span announced is paired on
// its execute_tool span, with the time from the chat span's end to the tool span's end; in
// interrupt_sigterm the user's interrupt ended the execute_tool span with error.type=cancelled
// and status Error "Operation aborted": the span reports its call's abort and is marked
// interrupted/aborted, and no synthetic span is made (the invoke_agent span's end, a session
// end, finds the call already resolved).
func TestGoldenCopilotCaptures(t *testing.T) {
	for _, tc := range []struct {
		scenario, callID string
		aborted          bool
	}{
		{scenario: "normal", callID: "call_mock_normal_01"},
		{scenario: "interrupt_sigterm", callID: "call_mock_interrupt_01", aborted: true},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			in, err := golden.ReadTraces(filepath.Join("..", "..", "testdata", "copilot", tc.scenario, "traces.json"))
			require.NoError(t, err)
			announced := announcements(t, in)
			require.Equal(t, []string{tc.callID}, keysOf(announced))
			n := in.SpanCount()
			pl := newRig(t, tracesOnly())
			pl.consume(in)
			pl.advance(11 * time.Minute)
			pl.shutdown()
			got := pl.output()

			var tools []ptrace.Span
			for _, s := range allSpans(got) {
				if v, _ := s.Attributes().Get(synth.AttrSynthetic); v.Bool() {
					t.Errorf("synthetic span %s for call %s", s.Name(), strAttr(s, "gen_ai.tool.call.id"))
					continue
				}
				if strAttr(s, "gen_ai.operation.name") != "execute_tool" {
					if o := strAttr(s, "toolpair.outcome"); o != "" {
						// The next chat span repeating the result in its history: its
						// source's first record, paired, not counting the call (section 2).
						assert.Equal(t, "chat", strAttr(s, "gen_ai.operation.name"), s.Name())
						_, counted := s.Attributes().Get(synth.AttrCallCounted)
						assert.False(t, counted, s.Name())
					}
					continue
				}
				tools = append(tools, s)
			}
			require.Len(t, tools, 1)
			s := tools[0]
			assert.Equal(t, tc.callID, strAttr(s, "gen_ai.tool.call.id"))
			d, hasDuration := s.Attributes().Get("toolpair.call.duration_ms")
			if tc.aborted {
				assert.Equal(t, "cancelled", strAttr(s, "error.type"), "the capture's own marker")
				assert.Equal(t, "Operation aborted", s.Status().Message())
				assert.Equal(t, "interrupted", strAttr(s, "toolpair.outcome"))
				assert.Equal(t, "aborted", strAttr(s, "toolpair.interrupt.reason"))
				assert.False(t, hasDuration)
			} else {
				assert.Equal(t, "paired", strAttr(s, "toolpair.outcome"))
				require.True(t, hasDuration)
				_ = d
				assertSpanDurations(t, s, min(int64(announced[tc.callID]), int64(s.StartTimestamp())))
			}
			assert.Equal(t, n, got.SpanCount(), "nothing added, nothing dropped")

			assertGoldenTraces(t, got, "copilot", tc.scenario)
		})
	}
}

// keysOf returns the keys of m in no particular order (a test's maps of one or two calls).
func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
