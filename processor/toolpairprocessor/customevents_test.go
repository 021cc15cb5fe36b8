// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/internal/otlpsplit"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/custom"
)

// strandsByHand declares AWS Strands Agents in two custom dialects, as an operator would
// before the genai dialect read span events: its chat spans' gen_ai.choice events announce
// the calls (a spanevent dialect, the message's toolUse blocks), its execute_tool spans
// resolve them. Both are tried before the built-in dialects, on Strands' spans only.
func strandsByHand() []custom.Config {
	const strands = `resource.attributes["service.name"] == "strands-agents"`
	return []custom.Config{
		{
			Name: "strands_uses", Context: custom.ContextSpanEvent, Precedence: custom.PrecedenceBeforeBuiltin,
			Where:      strands + ` and span.attributes["gen_ai.operation.name"] == "chat"`,
			Use:        `name == "gen_ai.choice" and attributes["finish_reason"] == "toolUse"`,
			Calls:      `ParseJSON(attributes["message"])`,
			CallsMatch: map[string]string{"type": "toolUse"}, CallIDPath: "toolUseId", ToolNamePath: "name",
		},
		{
			Name: "strands_tools", Context: custom.ContextSpan, Precedence: custom.PrecedenceBeforeBuiltin,
			Where:  strands + ` and attributes["gen_ai.operation.name"] == "execute_tool"`,
			Result: `true`, CallID: `attributes["gen_ai.tool.call.id"]`, ToolName: `attributes["gen_ai.tool.name"]`,
		},
	}
}

// TestCustomDialectReadsSpanEvents runs the real Strands captures (testdata/strands) through
// the custom dialects of strandsByHand, in two arrival orders (as exported; one span per
// batch, reversed): the use announced in a chat span's gen_ai.choice event pairs with the
// execute_tool span in normal, and the tool span ended by "Command aborted: ..." is
// interrupted/aborted in interrupt_sigterm; every span gets the same outcome in both orders
// and nothing is added or dropped.
func TestCustomDialectReadsSpanEvents(t *testing.T) {
	for _, tc := range []struct {
		scenario, callID string
		want             [2]string
	}{
		{"normal", "call_mock_normal_01", [2]string{"paired", ""}},
		{"interrupt_sigterm", "call_mock_interrupt_01", [2]string{"interrupted", "aborted"}},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			var first map[string][2]string
			for _, order := range []string{"as_exported", "one_span_per_batch_reversed"} {
				t.Run(order, func(t *testing.T) {
					in := readOpenCapture(t, "strands", tc.scenario)
					n := in.SpanCount()
					pl := newRig(t, tracesOnly(), withConfig(func(c *Config) { c.CustomDialects = strandsByHand() }))
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
					assert.Equal(t, uint64(1), st.UsesSeen, "the gen_ai.choice event's toolUse")
					assert.Equal(t, uint64(1), st.ResultsSeen)
					if tc.want[0] == "paired" {
						assert.Equal(t, uint64(1), st.Paired)
					} else {
						assert.Equal(t, uint64(1), st.Aborted)
					}
					assert.Zero(t, st.Standalone)
					assert.Zero(t, st.Orphan)
					pl.shutdown()
					require.NoError(t, pl.stats().CheckConservation())
					got := pl.output()
					require.Equal(t, n, got.SpanCount(), "nothing added, nothing dropped")
					outcomes := map[string][2]string{}
					for _, s := range allSpans(got) {
						if o := strAttr(s, "toolpair.outcome"); o != "" {
							outcomes[s.Name()] = [2]string{o, strAttr(s, "toolpair.interrupt.reason")}
							assert.Equal(t, tc.callID, strAttr(s, "gen_ai.tool.call.id"))
						}
					}
					assert.Equal(t, map[string][2]string{"execute_tool run_shell": tc.want}, outcomes)
					if first == nil {
						first = outcomes
					} else {
						assert.Equal(t, first, outcomes, "the same outcome per span in both orders")
					}
				})
			}
		})
	}
}

// TestCustomModelCall: a custom dialect's model_call declares the agent's model request span
// a model call, so its own timeout is phase provider (specification section 4) and a timeout
// of another record of its scope while it ran is provider too; without the declaration the
// same spans are phase unknown.
func TestCustomModelCall(t *testing.T) {
	acme := func(modelCall string) custom.Config {
		return custom.Config{
			Name: "acme_spans", Context: custom.ContextSpan,
			Result: `name == "acme.tool"`, CallID: `attributes["acme.call_id"]`,
			ModelCall: modelCall,
		}
	}
	spans := func(timedOut string) ptrace.Traces {
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", "acme-agent")
		ss := rs.ScopeSpans().AppendEmpty()
		base := time.Now().Add(-time.Minute).UnixNano()
		add := func(name string, id byte, start, end int64, status string) {
			s := ss.Spans().AppendEmpty()
			s.SetName(name)
			s.SetTraceID(pcommon.TraceID{9})
			s.SetSpanID(pcommon.SpanID{id})
			s.SetStartTimestamp(pcommon.Timestamp(base + start))
			s.SetEndTimestamp(pcommon.Timestamp(base + end))
			s.Attributes().PutStr("session.id", "s1") // a scope attribute: one scope for both
			if status != "" {
				s.Status().SetCode(ptrace.StatusCodeError)
				s.Status().SetMessage(status)
			}
		}
		llm, turn := "", ""
		if timedOut == "acme.llm" {
			llm = "The operation was aborted due to timeout"
		} else {
			turn = "Request timed out."
		}
		add("acme.llm", 1, 0, int64(5*time.Second), llm)
		add("acme.turn", 2, int64(time.Second), int64(4*time.Second), turn)
		return td
	}
	for _, tt := range []struct {
		name, modelCall, timedOut, want string
	}{
		{"the model call's own timeout", `name == "acme.llm"`, "acme.llm", "provider"},
		{"another span's timeout while the model call ran", `name == "acme.llm"`, "acme.turn", "provider"},
		{"no model_call: the model call's own timeout", "", "acme.llm", "unknown"},
		{"no model_call: another span's timeout", "", "acme.turn", "unknown"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pl := newRig(t, tracesOnly(), withConfig(func(c *Config) { c.CustomDialects = []custom.Config{acme(tt.modelCall)} }))
			pl.consume(spans(tt.timedOut))
			phases := map[string]string{}
			for _, s := range allSpans(pl.output()) {
				if p := strAttr(s, "toolpair.timeout.phase"); p != "" {
					phases[s.Name()] = p
				}
			}
			assert.Equal(t, map[string]string{tt.timedOut: tt.want}, phases)
		})
	}
}
