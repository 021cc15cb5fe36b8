// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

func readQwen(t *testing.T, scenario string) (ptrace.Traces, plog.Logs) {
	t.Helper()
	dir := filepath.Join("..", "..", "testdata", "qwen", scenario)
	td, err := golden.ReadTraces(filepath.Join(dir, "traces.json"))
	require.NoError(t, err)
	ld, err := golden.ReadLogs(filepath.Join(dir, "logs.json"))
	require.NoError(t, err)
	return td, ld
}

// recordOutcomes returns the toolpair outcome (and interrupt reason, after a slash) of every
// marked span and log record, by "span <name>" or "log <value of logKey>" (the attribute that
// names the agent's event: event.name, VoltAgent's event), and the number of synthetic spans
// and log records.
func recordOutcomes(spans []ptrace.Span, logs []plog.LogRecord, logKey string) (outcomes map[string]string, synthetic int) {
	outcomes = map[string]string{}
	mark := func(key, o, reason string) {
		if reason != "" {
			o += "/" + reason
		}
		outcomes[key] = o
	}
	for _, s := range spans {
		if v, _ := s.Attributes().Get(synth.AttrSynthetic); v.Bool() {
			synthetic++
		} else if o := strAttr(s, "toolpair.outcome"); o != "" {
			mark("span "+s.Name(), o, strAttr(s, "toolpair.interrupt.reason"))
		}
	}
	for _, lr := range logs {
		if v, _ := lr.Attributes().Get(synth.AttrSynthetic); v.Bool() {
			synthetic++
		} else if o := logAttr(lr, "toolpair.outcome"); o != "" {
			mark("log "+logAttr(lr, logKey), o, logAttr(lr, "toolpair.interrupt.reason"))
		}
	}
	return outcomes, synthetic
}

// TestGoldenQwenSpans runs Qwen Code's real spans alone. In normal, the call the first
// qwen-code.llm_request announced is paired on its qwen-code.tool span, with Qwen Code's own
// duration_ms as its duration; its qwen-code.tool.execution span and the next
// llm_request's history, sources of their own, are paired too (specification section 2). In
// interrupt_sigterm (SIGTERM 4 s into the tool) the tool span says tool.failure_kind cancelled
// and the execution span execution_status cancelled: both are interrupted, aborted, and no
// synthetic span is made.
func TestGoldenQwenSpans(t *testing.T) {
	for scenario, want := range map[string]map[string]string{
		"normal":            {"span qwen-code.tool": "paired", "span qwen-code.tool.execution": "paired", "span qwen-code.llm_request": "paired"},
		"interrupt_sigterm": {"span qwen-code.tool": "interrupted/aborted", "span qwen-code.tool.execution": "interrupted/aborted"},
	} {
		t.Run(scenario, func(t *testing.T) {
			in, _ := readQwen(t, scenario)
			n := in.SpanCount()
			pl := newRig(t, tracesOnly())
			pl.consume(in)
			pl.advance(11 * time.Minute)
			pl.shutdown()
			got := pl.output()
			spans := allSpans(got)
			outcomes, synthetic := recordOutcomes(spans, nil, "event.name")
			assert.Equal(t, want, outcomes)
			assert.Zero(t, synthetic)
			assert.Equal(t, n, got.SpanCount())
			st := pl.stats()
			assert.Equal(t, uint64(1), st.UsesSeen)
			byName := spansByName(got)
			require.Len(t, byName["qwen-code.tool"], 1)
			tool := byName["qwen-code.tool"][0]
			var use ptrace.Span
			for _, s := range byName["qwen-code.llm_request"] {
				if s.EndTimestamp() <= tool.StartTimestamp() && (use == (ptrace.Span{}) || s.EndTimestamp() > use.EndTimestamp()) {
					use = s
				}
			}
			require.NotEqual(t, ptrace.Span{}, use, "the llm_request before the tool")
			d, ok := tool.Attributes().Get("toolpair.call.duration_ms")
			if scenario != "normal" {
				assert.False(t, ok, "only a paired result has a duration")
			} else {
				require.True(t, ok)
				_ = d
				assertSpanDurations(t, tool, min(int64(use.EndTimestamp()), int64(tool.StartTimestamp())))
			}
			assertGoldenTraces(t, got, "qwen", scenario)
		})
	}
}

// TestQwenSpansAndLogs runs Qwen Code's real captures, spans and logs, through one component in
// both orders. The call is counted once, by the first record to arrive, and each source's first
// record gets its own outcome (specification section 2): the qwen-code.tool span, the
// qwen-code.tool_call event, the execution span and the next request's history are all paired,
// in either order. The interrupted call (status, failure kind and execution status cancelled)
// is interrupted, aborted, on each of its result records, with no synthetic record. The log records the dialect reads as boundaries and the
// session end close nothing. Nothing is added or dropped.
func TestQwenSpansAndLogs(t *testing.T) {
	for _, scenario := range []string{"normal", "interrupt_sigterm"} {
		for _, logsFirst := range []bool{false, true} {
			t.Run(scenario+map[bool]string{false: "/traces_first", true: "/logs_first"}[logsFirst], func(t *testing.T) {
				b := newRig(t)
				td, ld := readQwen(t, scenario)
				nSpans, nLogs := td.SpanCount(), ld.LogRecordCount()
				b.consumeBoth(td, ld, logsFirst)
				b.advance(11 * time.Minute)
				st := b.stats()
				b.shutdown()
				spans, logs := tracesOut(b), allLogs(b.lsink)
				outcomes, synthetic := recordOutcomes(spans, logs, "event.name")
				want := map[string]string{"span qwen-code.tool": "paired", "log qwen-code.tool_call": "paired",
					"span qwen-code.tool.execution": "paired", "span qwen-code.llm_request": "paired"}
				assert.Equal(t, uint64(1), st.UsesSeen)
				assert.Zero(t, st.Duplicate)
				if scenario == "normal" {
					assert.Equal(t, uint64(1), st.Paired)
					assert.Equal(t, uint64(3), st.Reports)
					assert.Zero(t, st.InterruptedTotal())
				} else {
					want = map[string]string{"span qwen-code.tool": "interrupted/aborted", "log qwen-code.tool_call": "interrupted/aborted",
						"span qwen-code.tool.execution": "interrupted/aborted"}
					assert.Equal(t, uint64(2), st.Reports)
					assert.Zero(t, st.Paired)
					assert.Equal(t, uint64(1), st.Aborted)
					assert.Equal(t, uint64(1), st.InterruptedTotal())
				}
				assert.Equal(t, want, outcomes)
				assert.Zero(t, synthetic)
				require.Len(t, spans, nSpans)
				require.Len(t, logs, nLogs)
			})
		}
	}
}

// TestQwenLogsCloseAbandonedCall: the interrupted capture's call, its tool span and tool_call
// event lost (the process killed during the tool), stays pending after the llm_request span
// announced it; a later qwen-code.api_request of a sub-agent closes nothing, one of the main
// agent interrupts it (next_step, at the request's time); in another run session.end does
// (session_end, at its time). Each closing gives the call one synthetic span.
func TestQwenLogsCloseAbandonedCall(t *testing.T) {
	td, ld := readQwen(t, "interrupt_sigterm")
	removeSpans(td, func(s ptrace.Span) bool { return s.Name() != "qwen-code.llm_request" })
	var session string
	var last pcommon.Timestamp
	for _, lr := range dialecttest.LogRecordsOf(ld) {
		last = max(last, lr.Timestamp())
		if s := logAttr(lr, "session.id"); s != "" {
			session = s
		}
	}
	require.NotEmpty(t, session)
	event := func(name string, after time.Duration, attrs map[string]any) plog.Logs {
		out := plog.NewLogs()
		rl := out.ResourceLogs().AppendEmpty()
		ld.ResourceLogs().At(0).Resource().CopyTo(rl.Resource())
		lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
		lr.SetTimestamp(last + pcommon.Timestamp(after))
		lr.Attributes().PutStr("event.name", name)
		lr.Attributes().PutStr("session.id", session)
		for k, v := range attrs {
			lr.Attributes().PutStr(k, v.(string))
		}
		return out
	}
	for _, tc := range []struct {
		name, reason string
		closing      plog.Logs
	}{
		{"api_request", "next_step", event("qwen-code.api_request", 3*time.Second, map[string]any{"subagent_name": ""})},
		{"session.end", "session_end", event("session.end", 3*time.Second, nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newRig(t)
			require.NoError(t, b.traces.ConsumeTraces(context.Background(), td))
			require.NoError(t, b.logs.ConsumeLogs(context.Background(), event("qwen-code.api_request", time.Second, map[string]any{"subagent_name": "reviewer"})))
			b.advance(time.Minute)
			assert.Zero(t, b.stats().InterruptedTotal(), "a sub-agent's request closes nothing")
			require.NoError(t, b.logs.ConsumeLogs(context.Background(), tc.closing))
			b.advance(time.Minute)
			var synthetic []ptrace.Span
			for _, s := range tracesOut(b) {
				if v, _ := s.Attributes().Get(synth.AttrSynthetic); v.Bool() {
					synthetic = append(synthetic, s)
				}
			}
			require.Len(t, synthetic, 1)
			assert.Equal(t, "call_mock_interrupt_01", strAttr(synthetic[0], "gen_ai.tool.call.id"))
			assert.Equal(t, tc.reason, strAttr(synthetic[0], "toolpair.interrupt.reason"))
			assert.Equal(t, last+pcommon.Timestamp(3*time.Second), synthetic[0].EndTimestamp())
		})
	}
}

// removeSpans removes the spans of td for which drop is true.
func removeSpans(td ptrace.Traces, drop func(ptrace.Span) bool) {
	td.ResourceSpans().RemoveIf(func(rs ptrace.ResourceSpans) bool {
		rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool {
			ss.Spans().RemoveIf(drop)
			return ss.Spans().Len() == 0
		})
		return rs.ScopeSpans().Len() == 0
	})
}
