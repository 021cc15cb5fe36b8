// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/internal/otlpsplit"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
)

// attrCounted is the mark of the one record that counts a call (specification section 3).
const attrCounted = "toolpair.call.counted"

func readVoltAgent(t *testing.T, scenario string) (ptrace.Traces, plog.Logs) {
	t.Helper()
	dir := filepath.Join("..", "..", "testdata", "voltagent", scenario)
	td, err := golden.ReadTraces(filepath.Join(dir, "traces.json"))
	require.NoError(t, err)
	ld, err := golden.ReadLogs(filepath.Join(dir, "logs.json"))
	require.NoError(t, err)
	return td, ld
}

// withoutAttr returns copies of td and ld without attribute key on any span or log record,
// and with the attributes of each in key order (the processor writes its marks in an order
// that depends on whether the record was held).
func withoutAttr(td ptrace.Traces, ld plog.Logs, key string) (ptrace.Traces, plog.Logs) {
	t2, l2 := ptrace.NewTraces(), plog.NewLogs()
	td.CopyTo(t2)
	ld.CopyTo(l2)
	for _, s := range dialecttest.SpansOf(t2) {
		s.Attributes().Remove(key)
		sortAttrs(s.Attributes())
	}
	for _, lr := range dialecttest.LogRecordsOf(l2) {
		lr.Attributes().Remove(key)
		sortAttrs(lr.Attributes())
	}
	return t2, l2
}

// sortAttrs puts the entries of m in key order (stable for repeated keys).
func sortAttrs(m pcommon.Map) {
	sorted := pcommon.NewMap()
	var keys []string
	for k := range m.All() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	for _, k := range keys {
		for k2, v := range m.All() {
			if k2 == k {
				v.CopyTo(sorted.PutEmpty(k))
			}
		}
	}
	sorted.MoveTo(m)
}

// recordTexts returns each span and log record of td and ld, with its resource and scope, as
// the OTLP JSON of a request holding it alone: records compared whatever batch they came in.
func recordTexts(t *testing.T, td ptrace.Traces, ld plog.Logs) []string {
	t.Helper()
	var out []string
	var tm ptrace.JSONMarshaler
	for _, one := range otlpsplit.Spans(td) {
		data, err := tm.MarshalTraces(one)
		require.NoError(t, err)
		out = append(out, string(data))
	}
	var lm plog.JSONMarshaler
	for _, one := range otlpsplit.Logs(ld) {
		data, err := lm.MarshalLogs(one)
		require.NoError(t, err)
		out = append(out, string(data))
	}
	return out
}

// countedCalls sums toolpair.call.counted over the spans and log records.
func countedCalls(spans []ptrace.Span, logs []plog.LogRecord) (n int64) {
	for _, s := range spans {
		if v, ok := s.Attributes().Get(attrCounted); ok {
			n += v.Int()
		}
	}
	for _, lr := range logs {
		if v, ok := lr.Attributes().Get(attrCounted); ok {
			n += v.Int()
		}
	}
	return n
}

// TestGoldenVoltAgentCaptures runs VoltAgent 2.10.0's real captures, spans and logs, through one
// component in both orders. VoltAgent announces its calls in its step log records only
// (agent.step.tool_call, then tool.execution.started, a repeat), which share the run's trace
// with its spans. In normal the tool.execution:run_shell span and the agent.step.tool_result
// record, two sources of one result, are both paired, and the call is counted once over both
// signals. In interrupt_sigterm the span (status Error "Command aborted: ...") and the step
// result (hasError, result.message "Command aborted: ...") both report the abort: interrupted,
// aborted, with no synthetic record; the root agent span's end (a session end, ended at the
// signal before the step records were written) closes nothing. Each record gets the same
// outcome in both orders; only the record that counts the call differs (the first to report
// it). Nothing is added or dropped. The spans-first output is the golden one.
func TestGoldenVoltAgentCaptures(t *testing.T) {
	for _, scenario := range []string{"normal", "interrupt_sigterm"} {
		t.Run(scenario, func(t *testing.T) {
			var goldenTraces ptrace.Traces
			var goldenLogs plog.Logs
			for _, logsFirst := range []bool{false, true} {
				t.Run(map[bool]string{false: "traces_first", true: "logs_first"}[logsFirst], func(t *testing.T) {
					b := newRig(t)
					td, ld := readVoltAgent(t, scenario)
					nSpans, nLogs := td.SpanCount(), ld.LogRecordCount()
					b.consumeBoth(td, ld, logsFirst)
					b.advance(11 * time.Minute)
					st := b.stats()
					b.shutdown()
					gotTraces, gotLogs := mergedTraces(b), mergedLogs(b)
					spans, logs := allSpans(gotTraces), dialecttest.LogRecordsOf(gotLogs)
					require.Len(t, spans, nSpans)
					require.Len(t, logs, nLogs)

					outcomes, synthetic := recordOutcomes(spans, logs, "event")
					assert.Zero(t, synthetic)
					assert.Equal(t, uint64(1), st.UsesSeen)
					assert.Equal(t, uint64(1), st.UsesRepeated, "tool.execution.started repeats the call")
					assert.Equal(t, uint64(1), st.Reports, "the other signal's result is a further report")
					assert.Zero(t, st.Duplicate)
					assert.Zero(t, st.Orphan)
					assert.Zero(t, st.Standalone)
					assert.Equal(t, int64(1), countedCalls(spans, logs), "the call is counted once")
					if scenario == "normal" {
						assert.Equal(t, map[string]string{"span tool.execution:run_shell": "paired", "log agent.step.tool_result": "paired"}, outcomes)
						assert.Equal(t, uint64(1), st.Paired)
						assert.Zero(t, st.InterruptedTotal())
					} else {
						assert.Equal(t, map[string]string{
							"span tool.execution:run_shell": "interrupted/aborted", "log agent.step.tool_result": "interrupted/aborted",
						}, outcomes)
						assert.Zero(t, st.Paired)
						assert.Equal(t, uint64(1), st.Aborted)
						assert.Equal(t, uint64(1), st.InterruptedTotal())
					}
					for _, s := range spans {
						if s.Name() == "tool.execution:run_shell" {
							_, ok := s.Attributes().Get("toolpair.call.duration_ms")
							assert.Equal(t, scenario == "normal", ok, "only a paired result has a duration")
						}
					}

					if !logsFirst {
						assertGoldenTraces(t, gotTraces, "voltagent", scenario)
						assertGoldenLogs(t, gotLogs, "voltagent", scenario)
						goldenTraces, goldenLogs = gotTraces, gotLogs
						return
					}
					// The same records but for the one that counts the call (a held record leaves in
					// a delivery of its own, so the export groups may differ).
					require.NotEqual(t, ptrace.Traces{}, goldenTraces, "traces_first ran first")
					wantT, wantL := withoutAttr(goldenTraces, goldenLogs, attrCounted)
					gotT, gotL := withoutAttr(gotTraces, gotLogs, attrCounted)
					want, got := recordTexts(t, wantT, wantL), recordTexts(t, gotT, gotL)
					slices.Sort(want)
					slices.Sort(got)
					assert.Equal(t, want, got)
				})
			}
		})
	}
}
