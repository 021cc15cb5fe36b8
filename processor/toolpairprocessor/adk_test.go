// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/internal/otlpsplit"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// adkToolCallID is the ID ADK made for the capture's call and wrote on its execute_tool span.
const adkToolCallID = "adk-8482c766-2302-4179-b924-14e08836175f"

// runADK sends the spans of td through a traces-only component, in the capture's batch, or one
// span per batch in reverse order (the tool span last, after the call_llm span that announced
// its call), and returns the output and the engine's counters.
func runADK(t *testing.T, td ptrace.Traces, reversed bool) (ptrace.Traces, pairing.Stats) {
	t.Helper()
	b := newRig(t, tracesOnly())
	if reversed {
		one := otlpsplit.Spans(td)
		slices.Reverse(one)
		for _, s := range one {
			b.consume(s)
		}
	} else {
		b.consume(td)
	}
	b.advance(11 * time.Minute)
	st := b.stats()
	b.shutdown()
	return mergedTraces(b), st
}

// TestGoldenADKCapture runs Google ADK for JS 2.0.0's real spans in both orders. The Gemini API
// gives the call no ID and ADK writes the one it makes (adk-<uuid>) only on the tool's span, so
// the adk dialect names the call from the call_llm span that announced it (the tool span's
// parent), the tool name and the arguments: the first call_llm span's functionCall is the use,
// and the execute_tool run_shell span, which keeps ADK's gen_ai.tool.call.id, is paired and
// counts the call (without the dialect it was standalone). The call_llm spans' starts are step
// boundaries and close nothing; nothing is added or dropped. The variant "bare" is the same
// capture with the execute_tool span's attributes removed, what ADK leaves of a tool that threw
// (failed, timed out or aborted by the run's signal, as in the corpus' interrupt_sigterm): the
// span is matched by its name under its call_llm span, paired, and gets the call's derived ID.
func TestGoldenADKCapture(t *testing.T) {
	in, err := golden.ReadTraces(filepath.Join("..", "..", "testdata", "adk", "normal", "traces.json"))
	require.NoError(t, err)
	for _, variant := range []string{"normal", "bare"} {
		t.Run(variant, func(t *testing.T) {
			var first []string
			for _, reversed := range []bool{false, true} {
				t.Run(map[bool]string{false: "batch_order", true: "reversed_one_per_batch"}[reversed], func(t *testing.T) {
					td := ptrace.NewTraces()
					in.CopyTo(td)
					if variant == "bare" {
						for _, s := range allSpans(td) {
							if s.Name() == "execute_tool run_shell" {
								s.Attributes().Clear()
							}
						}
					}
					n := td.SpanCount()
					got, st := runADK(t, td, reversed)
					require.Equal(t, n, got.SpanCount(), "nothing added, nothing dropped")
					var tool ptrace.Span
					for _, s := range allSpans(got) {
						if v, _ := s.Attributes().Get(synth.AttrSynthetic); v.Bool() {
							t.Errorf("synthetic span %s", s.Name())
						}
						if s.Name() == "execute_tool run_shell" {
							tool = s
						} else {
							assert.Empty(t, strAttr(s, "toolpair.outcome"), s.Name())
						}
					}
					require.NotEqual(t, ptrace.Span{}, tool)
					assert.Equal(t, "paired", strAttr(tool, "toolpair.outcome"))
					assert.Equal(t, int64(1), intAttr(tool, synth.AttrCallCounted))
					_, hasDuration := tool.Attributes().Get("toolpair.call.duration_ms")
					assert.True(t, hasDuration)
					id := strAttr(tool, "gen_ai.tool.call.id")
					if variant == "normal" {
						assert.Equal(t, adkToolCallID, id, "ADK's own ID is kept")
					} else {
						assert.True(t, strings.HasPrefix(id, "adk-derived-"), "the matched span gets the call's derived ID: %q", id)
					}
					assert.Equal(t, uint64(1), st.UsesSeen)
					assert.Equal(t, uint64(1), st.Paired)
					assert.Zero(t, st.Standalone)
					assert.Zero(t, st.Orphan)
					assert.Zero(t, st.Duplicate)
					assert.Zero(t, st.InterruptedTotal())

					texts := recordTexts(t, withoutOrder(got), plog.NewLogs())
					slices.Sort(texts)
					if !reversed {
						first = texts
						if variant == "normal" {
							assertGoldenTraces(t, got, "adk", "normal")
						}
						return
					}
					assert.Equal(t, first, texts, "the same records in both orders")
				})
			}
		})
	}
}

// TestADKWithoutItsDialect: with the adk dialect disabled, genai reads ADK's execute_tool span
// by the ID ADK made, which no use carries: it stands alone.
func TestADKWithoutItsDialect(t *testing.T) {
	in, err := golden.ReadTraces(filepath.Join("..", "..", "testdata", "adk", "normal", "traces.json"))
	require.NoError(t, err)
	b := newRig(t, tracesOnly(), withConfig(func(c *Config) { c.Dialects = without(knownDialects, "adk") }))
	b.consume(in)
	b.advance(11 * time.Minute)
	b.shutdown()
	found := 0
	for _, s := range allSpans(mergedTraces(b)) {
		if s.Name() == "execute_tool run_shell" {
			found++
			assert.Equal(t, "standalone", strAttr(s, "toolpair.outcome"))
		}
	}
	assert.Equal(t, 1, found)
}

// withoutOrder returns a copy of td with the attributes of each span in key order.
func withoutOrder(td ptrace.Traces) ptrace.Traces {
	out, _ := withoutAttr(td, plog.NewLogs(), "")
	return out
}
