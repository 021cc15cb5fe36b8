// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/internal/otlpsplit"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// regroup returns the spans of td under one ResourceSpans per resource and one ScopeSpans per
// scope (resource attributes, scope name and version), in the order they first appear: the
// output of one capture delivered in one batch or in one batch per span, in one shape.
func regroup(td ptrace.Traces) ptrace.Traces {
	out := ptrace.NewTraces()
	scopes := map[string]ptrace.ScopeSpans{}
	resources := map[string]ptrace.ResourceSpans{}
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		rkey := fmt.Sprint(rs.Resource().Attributes().AsRaw())
		ors, ok := resources[rkey]
		if !ok {
			ors = out.ResourceSpans().AppendEmpty()
			rs.Resource().CopyTo(ors.Resource())
			ors.SetSchemaUrl(rs.SchemaUrl())
			resources[rkey] = ors
		}
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j)
			skey := rkey + "\x00" + ss.Scope().Name() + "\x00" + ss.Scope().Version()
			oss, ok := scopes[skey]
			if !ok {
				oss = ors.ScopeSpans().AppendEmpty()
				ss.Scope().CopyTo(oss.Scope())
				oss.SetSchemaUrl(ss.SchemaUrl())
				scopes[skey] = oss
			}
			for k := 0; k < ss.Spans().Len(); k++ {
				ss.Spans().At(k).CopyTo(oss.Spans().AppendEmpty())
			}
		}
	}
	return out
}

// langGraphRecord is what the processor wrote on one span of a LangGraph capture.
type langGraphRecord struct {
	name, outcome, reason, callID string
	counted, synthetic            bool
}

// langGraphRecords maps each span of td by span ID to what the processor wrote on it.
func langGraphRecords(td ptrace.Traces) map[string]langGraphRecord {
	out := map[string]langGraphRecord{}
	for _, s := range allSpans(td) {
		syn, _ := s.Attributes().Get(synth.AttrSynthetic)
		_, counted := s.Attributes().Get(synth.AttrCallCounted)
		out[s.SpanID().String()] = langGraphRecord{
			name: s.Name(), outcome: strAttr(s, "toolpair.outcome"), reason: strAttr(s, "toolpair.interrupt.reason"),
			callID: strAttr(s, "gen_ai.tool.call.id"), counted: counted, synthetic: syn.Bool(),
		}
	}
	return out
}

// TestGoldenLangGraphCaptures runs LangGraph.js' real spans (OpenInference LangChain 4.1.1,
// read by openinference) in two arrival orders: the capture's batches as exported, and one
// span per batch in reverse. The ChatOpenAI LLM span announces the call in its output.value
// (the flattened attributes carry no call ID); in normal the run_shell TOOL span pairs it by
// the tool_call_id of its ToolMessage output and counts it once; in interrupt_sigterm the
// TOOL span, ended with status Error "interrupted by SIGTERM", has no output and no call ID:
// it resolves the call by tool name and arguments (its input.value is the bare string of the
// one argument) and gets the call's ID written. Its match item is marked aborted (the status
// message is a cancellation marker, specification section 2), so the span is
// interrupted/aborted. The root
// capture_agent span's end (a session end) finds the call resolved; no synthetic span is
// made, nothing is dropped, and every span gets the same outcome in both orders.
func TestGoldenLangGraphCaptures(t *testing.T) {
	for _, tc := range []struct {
		scenario, callID string
		want             [2]string
		matched, aborted bool
	}{
		{scenario: "normal", callID: "call_mock_normal_01", want: [2]string{"paired", ""}},
		{scenario: "interrupt_sigterm", callID: "call_mock_interrupt_01", want: [2]string{"interrupted", "aborted"}, matched: true, aborted: true},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			var first map[string]langGraphRecord
			for _, order := range []string{"as_exported", "one_span_per_batch_reversed"} {
				t.Run(order, func(t *testing.T) {
					in := readOpenCapture(t, "langgraph", tc.scenario)
					n := in.SpanCount()
					pl := newRig(t, tracesOnly())
					if order == "as_exported" {
						pl.consume(in)
					} else {
						parts := otlpsplit.Spans(in)
						slices.Reverse(parts)
						for _, p := range parts {
							pl.consume(p)
						}
					}
					pl.advance(11 * time.Minute)
					st := pl.stats()
					assert.Equal(t, uint64(1), st.UsesSeen, "the ChatOpenAI span's use, from its output.value")
					assert.Equal(t, uint64(1), st.ResultsSeen)
					if tc.aborted {
						assert.Equal(t, uint64(1), st.Aborted, "its TOOL span reports the abort")
						assert.Equal(t, uint64(1), st.InterruptedTotal())
					} else {
						assert.Zero(t, st.InterruptedTotal())
						assert.Equal(t, uint64(1), st.Paired)
					}
					assert.Zero(t, st.Standalone)
					assert.Zero(t, st.Unmatched)
					pl.shutdown()
					require.NoError(t, pl.stats().CheckConservation())
					got := regroup(pl.output())
					require.Equal(t, n, got.SpanCount(), "nothing added, nothing dropped")

					records := langGraphRecords(got)
					var tools []langGraphRecord
					for _, r := range records {
						assert.False(t, r.synthetic, r.name)
						if r.outcome != "" {
							tools = append(tools, r)
						}
					}
					require.Len(t, tools, 1, "only the TOOL span is marked")
					r := tools[0]
					assert.Equal(t, "run_shell", r.name)
					assert.Equal(t, tc.want, [2]string{r.outcome, r.reason})
					assert.True(t, r.counted, "the TOOL span counts the call")
					if tc.matched {
						assert.Equal(t, tc.callID, r.callID, "matched without an ID: the call's ID is written")
					} else {
						assert.Empty(t, r.callID, "paired by its own ID, in output.value: none is written")
					}
					if first == nil {
						first = records
					} else {
						assert.Equal(t, first, records, "the same outcome per span in both orders")
					}
					assertGoldenTraces(t, got, "langgraph", tc.scenario)
				})
			}
		})
	}
}
