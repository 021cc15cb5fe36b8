// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/batch"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/callkey"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/custom"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadatatest"
)

// The Copilot declarations of these tests: GitHub Copilot CLI's spans are plain GenAI
// semantic-convention spans (genai reads them), and its interrupted tool's execute_tool span
// ends with error.type=cancelled, which genai reads as an ordinary result.
const (
	copilotService   = "github-copilot"
	copilotWhere     = `resource.attributes["service.name"] == "github-copilot"`
	copilotCancelled = `attributes["gen_ai.operation.name"] == "execute_tool" and attributes["error.type"] == "cancelled"`
	copilotCallID    = `attributes["gen_ai.tool.call.id"]`
)

// copilotCapture reads GitHub Copilot CLI's real interrupt capture
// (testdata/custom/copilot_interrupt_sigterm_traces.json): an invoke_agent span, a chat span
// whose gen_ai.output.messages announce call_mock_interrupt_01 after a text part, and the
// execute_tool span the interrupt ended with error.type=cancelled, all of service
// github-copilot. With other, a copy of its spans follows under service.name other-agent:
// another agent, in the same shape, that genai reads.
func copilotCapture(t *testing.T, other bool) ptrace.Traces {
	t.Helper()
	td := loadTraces(t, "custom", "copilot_interrupt_sigterm_traces.json")
	require.Equal(t, 3, td.SpanCount())
	if other {
		n := td.ResourceSpans().Len()
		for i := 0; i < n; i++ {
			rs := td.ResourceSpans().AppendEmpty()
			td.ResourceSpans().At(i).CopyTo(rs)
			rs.Resource().Attributes().PutStr("service.name", "other-agent")
		}
	}
	return td
}

// copilotAbort declares only the abort of Copilot's interrupted tool, with precedence p.
func copilotAbort(p string) custom.Config {
	return custom.Config{
		Name: "copilot_abort", Context: custom.ContextSpan, Precedence: p, Where: copilotWhere,
		Abort: copilotCancelled, CallID: copilotCallID, ToolName: `attributes["gen_ai.tool.name"]`,
	}
}

// executeToolOutcomes returns the outcome (and interrupt reason) each execute_tool span that
// left the component has, by its service name.
func executeToolOutcomes(t *testing.T, b *rig) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, td := range b.tsink.AllTraces() {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			service, _ := rs.Resource().Attributes().Get("service.name")
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				spans := rs.ScopeSpans().At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					sp := spans.At(k)
					if strAttr(sp, "gen_ai.operation.name") == "execute_tool" && strAttr(sp, "toolpair.synthetic") == "" {
						require.NotContains(t, out, service.Str())
						out[service.Str()] = strAttr(sp, "toolpair.outcome") + " " + strAttr(sp, "toolpair.interrupt.reason")
					}
				}
			}
		}
	}
	return out
}

// TestCustomDialectBeforeBuiltinTakesOneAgent: with genai on, a custom dialect with
// precedence before_builtin and a where condition on Copilot's service reads an abort marker
// of Copilot's own on its execute_tool span as the abort of the call genai read in Copilot's
// chat span (the records of Copilot it does not claim still go to genai), while the same
// spans of another service stay genai's and pair. With the default precedence genai claims
// the span first. genai reads the cancellation markers Copilot really writes (error.type
// cancelled, status Error "Operation aborted"), so the capture's span carries, in their place,
// a marker no built-in dialect reads (copilot.interrupted), as an agent's own marker would.
func TestCustomDialectBeforeBuiltinTakesOneAgent(t *testing.T) {
	tests := []struct {
		precedence string
		want       map[string]string
		aborted    uint64
	}{
		{custom.PrecedenceBeforeBuiltin, map[string]string{copilotService: "interrupted aborted", "other-agent": "paired "}, 1},
		{custom.PrecedenceAfterBuiltin, map[string]string{copilotService: "paired ", "other-agent": "paired "}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.precedence, func(t *testing.T) {
			cfg := copilotAbort(tt.precedence)
			cfg.Abort = `attributes["gen_ai.operation.name"] == "execute_tool" and attributes["copilot.interrupted"] == true`
			b := newRig(t, withConfig(func(c *Config) { c.CustomDialects = []custom.Config{cfg} }))
			td := copilotCapture(t, true)
			forEachSpan(td, func(_ pcommon.Resource, s ptrace.Span) {
				if strAttr(s, "gen_ai.operation.name") == "execute_tool" {
					s.Attributes().Remove("error.type")
					s.Status().SetCode(ptrace.StatusCodeUnset)
					s.Status().SetMessage("")
					s.Attributes().PutBool("copilot.interrupted", true)
				}
			})
			require.NoError(t, b.traces.ConsumeTraces(context.Background(), td))
			b.advance(time.Minute)
			b.shutdown()
			assert.Equal(t, tt.want, executeToolOutcomes(t, b))
			stats := b.stats()
			assert.Equal(t, uint64(2), stats.UsesSeen, "both chat spans read by genai")
			assert.Equal(t, tt.aborted, stats.Aborted)
			assert.Zero(t, stats.Orphan+stats.Standalone, "every result met its use")
		})
	}
}

// TestCustomDialectCallsMatchTextParts: a custom dialect that takes all of Copilot's spans
// from genai reads the calls of its chat span through "*.parts" (every message's parts); with
// calls_match on the part type, the text part before the tool_call part is passed over,
// where without it that part is counted malformed (missing_call_id) under the dialect.
func TestCustomDialectCallsMatchTextParts(t *testing.T) {
	for _, match := range []map[string]string{{"type": "tool_call"}, nil} {
		t.Run(map[bool]string{true: "calls_match", false: "unfiltered"}[match != nil], func(t *testing.T) {
			b := newRig(t, withConfig(func(c *Config) {
				c.CustomDialects = []custom.Config{{
					Name: "copilot", Context: custom.ContextSpan,
					Precedence: custom.PrecedenceBeforeBuiltin, Where: copilotWhere,
					Use:          `attributes["gen_ai.operation.name"] == "chat"`,
					StepBoundary: `attributes["gen_ai.operation.name"] == "chat"`,
					Calls:        `attributes["gen_ai.output.messages"]`, CallsPath: "*.parts", CallsMatch: match,
					Abort:      copilotCancelled,
					Result:     `attributes["gen_ai.operation.name"] == "execute_tool"`,
					SessionEnd: `attributes["gen_ai.operation.name"] == "invoke_agent"`,
					CallID:     copilotCallID,
				}}
			}))
			require.NoError(t, b.traces.ConsumeTraces(context.Background(), copilotCapture(t, false)))
			b.advance(time.Minute)
			b.shutdown()

			assert.Equal(t, map[string]string{copilotService: "interrupted aborted"}, executeToolOutcomes(t, b))
			stats := b.stats()
			assert.Equal(t, uint64(1), stats.UsesSeen)
			assert.Equal(t, uint64(1), stats.Aborted)
			if match != nil {
				_, err := b.tel.GetMetric("otelcol_processor_toolpair_malformed")
				assert.Error(t, err, "nothing malformed")
				return
			}
			metadatatest.AssertEqualProcessorToolpairMalformed(t, b.tel, []metricdata.DataPoint[int64]{{
				Attributes: attribute.NewSet(attribute.String("toolpair.dialect", "copilot"), attribute.String("reason", "missing_call_id")),
				Value:      1,
			}}, metricdatatest.IgnoreTimestamp())
		})
	}
}

// TestRouteClaimsBeforeBuiltin: route mode claims records as pair mode does: Copilot's
// execute_tool span is routed by the scope its before_builtin custom dialect gives
// (service.instance.id), the key pair mode pairs it under, and by genai's scope
// (gen_ai.conversation.id) with the default precedence.
func TestRouteClaimsBeforeBuiltin(t *testing.T) {
	for _, p := range []string{custom.PrecedenceBeforeBuiltin, custom.PrecedenceAfterBuiltin} {
		t.Run(p, func(t *testing.T) {
			mutate := func(c *Config) {
				d := copilotAbort(p)
				d.Conversation = `resource.attributes["service.instance.id"]`
				c.CustomDialects = []custom.Config{d}
			}
			td := copilotCapture(t, false)
			keys := pairingKeys(t, mutate, td, plog.Logs{})
			routed := ptrace.NewTraces()
			td.CopyTo(routed)
			_, err := testRouter(t, mutate).processTraces(context.Background(), routed)
			require.NoError(t, err)
			byID := map[[24]byte]string{}
			forEachSpanAt(routed, func(_ batch.Pos, s ptrace.Span) { byID[spanKey(s)] = routeAttr(s.Attributes()) })
			scope := ""
			forEachSpanAt(td, func(pos batch.Pos, s ptrace.Span) {
				for _, key := range keys[pos] {
					assert.Equal(t, callkey.Route(key.Tenant, key.Conversation), byID[spanKey(s)], "span %s", s.Name())
					if strAttr(s, "gen_ai.operation.name") == "execute_tool" {
						scope = key.Conversation
					}
				}
			})
			want := map[string]string{
				custom.PrecedenceBeforeBuiltin: "copilot-otel-18432-0",
				custom.PrecedenceAfterBuiltin:  "5f978187-ad74-450c-97c1-d9266d17e601",
			}[p]
			assert.Equal(t, want, scope)
		})
	}
}

// TestCustomDialectNewKeysFromYAML: precedence, where, calls_path with a wildcard and
// calls_match read from collector YAML as the collector reads them; the paths of calls_match
// keep their dots and their case.
func TestCustomDialectNewKeysFromYAML(t *testing.T) {
	retrieved, err := confmap.NewRetrievedFromYAML([]byte(`
custom_dialects:
  - name: qwen_spans
    context: span
    precedence: before_builtin
    where: resource.attributes["service.name"] == "qwen-code"
    use: name == "qwen-code.llm_request"
    calls: attributes["gen_ai.output.messages"]
    calls_path: "*.parts"
    calls_match:
      type: tool_call
      functionCall.kind: call
`))
	require.NoError(t, err)
	conf, err := retrieved.AsConf()
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, conf.Unmarshal(cfg))
	require.NoError(t, cfg.Validate())
	require.Len(t, cfg.CustomDialects, 1)
	d := cfg.CustomDialects[0]
	assert.Equal(t, custom.PrecedenceBeforeBuiltin, d.Precedence)
	assert.Equal(t, `resource.attributes["service.name"] == "qwen-code"`, d.Where)
	assert.Equal(t, "*.parts", d.CallsPath)
	assert.Equal(t, map[string]string{"type": "tool_call", "functionCall.kind": "call"}, d.CallsMatch)
}

// TestDocsTakeoverExample: the YAML block of the custom dialects page's "Taking records from a
// built-in dialect" is a valid configuration that does what the page says on the real interrupt
// captures of GitHub Copilot CLI and Qwen Code, with genai on: both interrupted tool spans
// leave interrupted/aborted, Qwen Code's tool_call event, named in an event.name attribute and
// arriving second, reports the abort too (its source's first record, specification section
// 2), and no text part is counted malformed.
func TestDocsTakeoverExample(t *testing.T) {
	cfg := docConfig(t, customDialectPage, "## Taking records from a built-in dialect")
	require.Contains(t, cfg.Dialects, "genai")
	b := newRig(t, withConfig(func(c *Config) { *c = *cfg }))
	require.NoError(t, b.traces.ConsumeTraces(context.Background(), copilotCapture(t, false)))
	require.NoError(t, b.traces.ConsumeTraces(context.Background(), loadTraces(t, "custom", "qwen_interrupt_sigterm_traces.json")))
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), loadLogs(t, "custom", "qwen_interrupt_sigterm_logs.json")))
	b.advance(time.Minute)
	b.shutdown()

	assert.Equal(t, map[string]string{copilotService: "interrupted aborted", "qwen-code": "interrupted aborted"}, executeToolOutcomes(t, b))
	var events []string
	for _, lr := range allLogs(b.lsink) {
		if o := logAttr(lr, "toolpair.outcome"); o != "" {
			events = append(events, logAttr(lr, "event.name")+" "+o)
		}
	}
	// Its source's first record of the call, reporting the abort too (specification section 2).
	assert.Equal(t, []string{"qwen-code.tool_call interrupted"}, events)
	stats := b.stats()
	assert.Equal(t, uint64(2), stats.UsesSeen, "Copilot's call read by genai, Qwen Code's by qwen_spans")
	assert.Equal(t, uint64(2), stats.Aborted)
	_, err := b.tel.GetMetric("otelcol_processor_toolpair_malformed")
	assert.Error(t, err, "nothing malformed")
}
