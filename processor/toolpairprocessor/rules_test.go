// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// chatSpan is a GenAI chat span of trace ending at endMs (after ctBase) whose output
// messages announce a run_shell call for each of ids.
func chatSpan(trace byte, endMs int64, ids ...string) ctSpan {
	msg := `[{"role":"assistant","parts":[`
	for i, id := range ids {
		if i > 0 {
			msg += ","
		}
		msg += `{"type":"tool_call","id":"` + id + `","name":"run_shell","arguments":{"command":"ls"}}`
	}
	msg += `]}]`
	return ctSpan{trace: trace, name: "chat m", start: endMs - 10, end: endMs, attrs: map[string]any{
		"gen_ai.operation.name": "chat", "gen_ai.output.messages": msg,
	}}
}

// toolSpan is the execute_tool span of call id in trace, ending at endMs (after ctBase).
func toolSpan(trace byte, id string, endMs int64) ctSpan {
	return ctSpan{trace: trace, name: "execute_tool run_shell", start: endMs - 5, end: endMs, attrs: map[string]any{
		"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "run_shell", "gen_ai.tool.call.id": id,
	}}
}

// spanBatchOf is ctTraces of specs, each span without an ID of its own given its place in
// the batch (1, 2, ...).
func spanBatchOf(specs ...ctSpan) ptrace.Traces {
	for i := range specs {
		if specs[i].id == 0 {
			specs[i].id = byte(i + 1)
		}
	}
	return ctTraces(specs...)
}

// toolSpans returns the non-synthetic execute_tool spans of the output by call ID.
func toolSpans(td ptrace.Traces) map[string][]ptrace.Span {
	m := map[string][]ptrace.Span{}
	for _, s := range allSpans(td) {
		if strAttr(s, "gen_ai.operation.name") == "execute_tool" && strAttr(s, "toolpair.synthetic") == "" {
			id := strAttr(s, "gen_ai.tool.call.id")
			m[id] = append(m[id], s)
		}
	}
	return m
}

func intAttr(s ptrace.Span, k string) int64 {
	v, _ := s.Attributes().Get(k)
	return v.Int()
}

func TestResultBeforeUseIsHeldThenPaired(t *testing.T) {
	pl := newRig(t, tracesOnly())
	pl.consume(spanBatchOf(toolSpan(1, "c1", 1500)))
	assert.Zero(t, pl.tsink.SpanCount(), "the result waits for its use")
	pl.advance(10 * time.Second)
	pl.consume(spanBatchOf(chatSpan(1, 1000, "c1")))
	got := toolSpans(pl.output())["c1"]
	require.Len(t, got, 1)
	assert.Equal(t, "paired", strAttr(got[0], "toolpair.outcome"))
	assert.Equal(t, roundedMs(int64(got[0].EndTimestamp()-got[0].StartTimestamp())), intAttr(got[0], "toolpair.call.duration_ms"), "the tool span's own length")
	assert.Equal(t, int64(500), intAttr(got[0], "toolpair.call.elapsed_ms"), "from the chat span's end")
	assert.Equal(t, 2, pl.output().SpanCount())
}

func TestDispositions(t *testing.T) {
	tests := []struct {
		name       string
		mutate     func(*Config)
		wantDupes  int
		wantOrphan int
	}{
		{name: "defaults: orphans marked, duplicates dropped", wantDupes: 0, wantOrphan: 1},
		{name: "orphans dropped, duplicates marked", mutate: func(c *Config) {
			c.Orphans, c.Duplicates = DispositionDrop, DispositionMark
		}, wantDupes: 1, wantOrphan: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := newRig(t, withConfig(tt.mutate), tracesOnly())
			pl.consume(spanBatchOf(chatSpan(1, 1000, "c1"), toolSpan(1, "c1", 1200)))
			pl.consume(spanBatchOf(toolSpan(1, "c1", 1200)))    // an export retry
			pl.consume(spanBatchOf(toolSpan(1, "ghost", 1300))) // no use will come
			pl.advance(31 * time.Second)
			spans := toolSpans(pl.output())
			require.Len(t, spans["c1"], 1+tt.wantDupes)
			assert.Equal(t, "paired", strAttr(spans["c1"][0], "toolpair.outcome"))
			if tt.wantDupes > 0 {
				assert.Equal(t, "duplicate", strAttr(spans["c1"][1], "toolpair.outcome"))
				_, hasDuration := spans["c1"][1].Attributes().Get("toolpair.call.duration_ms")
				assert.False(t, hasDuration)
			}
			require.Len(t, spans["ghost"], tt.wantOrphan)
			if tt.wantOrphan > 0 {
				assert.Equal(t, "orphan", strAttr(spans["ghost"][0], "toolpair.outcome"))
			}
		})
	}
}

func TestStandaloneWhenNoUseIsVisible(t *testing.T) {
	pl := newRig(t, tracesOnly())
	// Message content not captured: the chat span has no output messages.
	pl.consume(spanBatchOf(ctSpan{trace: 2, name: "chat m", start: 0, end: 10, attrs: map[string]any{"gen_ai.operation.name": "chat"}}, toolSpan(2, "c1", 50)))
	pl.advance(30 * time.Second)
	got := toolSpans(pl.output())["c1"]
	require.Len(t, got, 1)
	assert.Equal(t, "standalone", strAttr(got[0], "toolpair.outcome"))
	_, hasDuration := got[0].Attributes().Get("toolpair.call.duration_ms")
	assert.False(t, hasDuration, "a standalone result keeps its own timing")
}

func TestCallKeysSeparateTenantsAndScopes(t *testing.T) {
	pl := newRig(t, withConfig(func(c *Config) { c.PairingTimeout = time.Minute }), tracesOnly())
	use := chatSpan(1, 1000, "c1")
	otherTrace := toolSpan(2, "c1", 1100)  // same call ID, other trace: other scope
	otherTenant := toolSpan(1, "c1", 1100) // same trace, other service
	otherTenant.service = "other-app"
	pl.consume(spanBatchOf(use, otherTrace, otherTenant))
	pl.advance(time.Minute)
	out := pl.output()
	for _, s := range toolSpans(out)["c1"] {
		assert.Equal(t, "standalone", strAttr(s, "toolpair.outcome"))
	}
	synthetic := 0
	for _, s := range allSpans(out) {
		if strAttr(s, "toolpair.synthetic") == "true" {
			synthetic++
			assert.Equal(t, "expired", strAttr(s, "toolpair.interrupt.reason"))
		}
	}
	assert.Equal(t, 1, synthetic, "the use in trace 1 of app never got its result")
}

func TestScopeAttributeKeysAcrossTraces(t *testing.T) {
	pl := newRig(t, tracesOnly())
	use := chatSpan(1, 1000, "c1")
	use.attrs["gen_ai.conversation.id"] = "conv-1"
	res := toolSpan(2, "c1", 1300) // another trace of the same conversation
	res.attrs["gen_ai.conversation.id"] = "conv-1"
	pl.consume(spanBatchOf(use, res))
	got := toolSpans(pl.output())["c1"]
	require.Len(t, got, 1)
	assert.Equal(t, "paired", strAttr(got[0], "toolpair.outcome"))
}

func TestEvictionSynthesizesTheOldestCall(t *testing.T) {
	pl := newRig(t, withConfig(func(c *Config) { c.MaxPendingCalls = 2 }), tracesOnly())
	pl.consume(spanBatchOf(chatSpan(1, 1000, "c1", "c2")))
	pl.consume(spanBatchOf(chatSpan(1, 2000, "c3")))
	var reasons []string
	for _, s := range allSpans(pl.output()) {
		if strAttr(s, "toolpair.synthetic") == "true" {
			reasons = append(reasons, strAttr(s, "gen_ai.tool.call.id")+":"+strAttr(s, "toolpair.interrupt.reason"))
		}
	}
	assert.Equal(t, []string{"c1:evicted"}, reasons)
}

func TestEchoInLaterModelInputPairsWithoutToolSpan(t *testing.T) {
	pl := newRig(t, tracesOnly())
	next := ctSpan{trace: 1, name: "chat m", start: 1400, end: 1600, attrs: map[string]any{
		"gen_ai.operation.name": "chat",
		"gen_ai.input.messages": `[{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":"ok"}]}]`,
	}}
	pl.consume(spanBatchOf(chatSpan(1, 1000, "c1"), next))
	pl.shutdown()
	for _, s := range allSpans(pl.output()) {
		assert.Empty(t, strAttr(s, "toolpair.synthetic"), "the tool ran without a span: not interrupted")
	}
}
