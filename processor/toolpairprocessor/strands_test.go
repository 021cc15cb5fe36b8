// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"path/filepath"
	"slices"
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

// frameworkOrders are the arrival orders the agent framework captures are replayed in: the
// export batch as captured, and each span in a batch of its own in reverse order (results
// before the records announcing their calls).
var frameworkOrders = []string{"file_order", "reversed_one_per_batch"}

// consumeInOrder sends td through the traces pipeline in the arrival order order (one of
// frameworkOrders).
func consumeInOrder(t *testing.T, b *rig, td ptrace.Traces, order string) {
	t.Helper()
	switch order {
	case "file_order":
		b.consume(td)
	case "reversed_one_per_batch":
		batches := otlpsplit.Spans(td)
		slices.Reverse(batches)
		for _, one := range batches {
			require.NoError(t, b.traces.ConsumeTraces(context.Background(), one))
		}
	default:
		t.Fatalf("order %q", order)
	}
}

// spanMarks returns, by span ID, the toolpair outcome of every marked span that is not
// synthetic ("outcome", "outcome/reason" for an interrupt, with " counted" when the span
// counts its call), and the synthetic spans.
func spanMarks(spans []ptrace.Span) (marks map[string]string, synthetic []ptrace.Span) {
	marks = map[string]string{}
	for _, s := range spans {
		if v, _ := s.Attributes().Get(synth.AttrSynthetic); v.Bool() {
			synthetic = append(synthetic, s)
			continue
		}
		o := strAttr(s, "toolpair.outcome")
		if o == "" {
			continue
		}
		if r := strAttr(s, "toolpair.interrupt.reason"); r != "" {
			o += "/" + r
		}
		if _, counted := s.Attributes().Get(synth.AttrCallCounted); counted {
			o += " counted"
		}
		marks[s.SpanID().String()] = o
	}
	return marks, synthetic
}

// toolSpanMarks returns, by span ID, the mark each execute_tool span of td (the input)
// must get: want, counted.
func toolSpanMarks(td ptrace.Traces, want string) (marks map[string]string, callIDs []string) {
	marks = map[string]string{}
	for _, s := range allSpans(td) {
		if strAttr(s, "gen_ai.operation.name") == "execute_tool" {
			marks[s.SpanID().String()] = want + " counted"
			callIDs = append(callIDs, strAttr(s, "gen_ai.tool.call.id"))
		}
	}
	return marks, callIDs
}

func readFramework(t *testing.T, agent, scenario string, withLogs bool) (ptrace.Traces, plog.Logs) {
	t.Helper()
	dir := filepath.Join("..", "..", "testdata", agent, scenario)
	td, err := golden.ReadTraces(filepath.Join(dir, "traces.json"))
	require.NoError(t, err)
	if !withLogs {
		return td, plog.NewLogs()
	}
	ld, err := golden.ReadLogs(filepath.Join(dir, "logs.json"))
	require.NoError(t, err)
	return td, ld
}

// TestGoldenStrandsCaptures runs AWS Strands Agents TS 1.19.0's real spans (read by genai):
// its chat spans announce the calls only in their gen_ai.choice span event (message JSON
// [{"type":"toolUse","toolUseId",...}]), its execute_tool spans carry gen_ai.tool.call.id. In
// normal the execute_tool span is paired and counts its call; in interrupt_sigterm
// (agent.cancel() on SIGTERM, the tool aborted by its cancel signal) the execute_tool span
// ends with status Error "Command aborted: ..." and is marked interrupted/aborted, with no
// synthetic span. Each chat span is the only model call under its execute_agent_loop_cycle
// span, so no boundary closes anything, and the invoke_agent span's end (its own group)
// closes nothing either. Nothing is added or dropped, and each span gets the same mark in
// both arrival orders.
func TestGoldenStrandsCaptures(t *testing.T) {
	for scenario, want := range map[string]string{"normal": "paired", "interrupt_sigterm": "interrupted/aborted"} {
		var first map[string]string
		for _, order := range frameworkOrders {
			t.Run(scenario+"/"+order, func(t *testing.T) {
				td, _ := readFramework(t, "strands", scenario, false)
				n := td.SpanCount()
				wantMarks, callIDs := toolSpanMarks(td, want)
				require.Len(t, callIDs, 1)
				b := newRig(t, tracesOnly())
				consumeInOrder(t, b, td, order)
				b.advance(11 * time.Minute)
				st := b.stats()
				b.shutdown()
				spans := tracesOut(b)
				require.Len(t, spans, n, "nothing added, nothing dropped")
				marks, synthetic := spanMarks(spans)
				assert.Empty(t, synthetic)
				assert.Equal(t, wantMarks, marks)
				assertEveryCall(t, st, len(callIDs), want)
				if first == nil {
					first = marks
				} else {
					assert.Equal(t, first, marks, "the same marks in both orders")
				}
				if order == "file_order" {
					assertGoldenTraces(t, b.output(), "strands", scenario)
				}
			})
		}
	}
}

// assertEveryCall fails t unless the engine's counters st show calls calls, none standalone or
// duplicate, each with outcome want: "paired", or interrupted/aborted (on its tool span).
func assertEveryCall(t *testing.T, st pairing.Stats, calls int, want string) {
	t.Helper()
	n := uint64(calls)
	assert.Equal(t, n, st.UsesSeen)
	assert.Zero(t, st.Standalone)
	assert.Zero(t, st.Duplicate)
	if want == "paired" {
		assert.Equal(t, n, st.Paired)
		assert.Zero(t, st.InterruptedTotal())
		return
	}
	assert.Zero(t, st.Paired)
	assert.Equal(t, n, st.Aborted)
	assert.Equal(t, n, st.InterruptedTotal())
}
