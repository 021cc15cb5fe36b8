// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadatatest"
)

// badSpans builds a batch of spans whose tool input is malformed in every way the genai
// dialect can meet, plus one span that has nothing to do with tools.
func badSpans() ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "bad-app")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	add := func(name string, attrs func(pcommon.Map)) {
		s := spans.AppendEmpty()
		s.SetName(name)
		s.SetTraceID(pcommon.TraceID{1, 2, 3})
		s.SetSpanID(pcommon.SpanID{byte(spans.Len())})
		s.SetStartTimestamp(1_000_000_000)
		s.SetEndTimestamp(2_000_000_000)
		attrs(s.Attributes())
	}
	add("chat not-json", func(m pcommon.Map) {
		m.PutStr("gen_ai.operation.name", "chat")
		m.PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"tool_call","id":"c1"`)
	})
	add("chat wrong type", func(m pcommon.Map) {
		m.PutStr("gen_ai.operation.name", "chat")
		m.PutInt("gen_ai.output.messages", 42)
	})
	add("chat null and missing ids", func(m pcommon.Map) {
		m.PutStr("gen_ai.operation.name", "chat")
		m.PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"tool_call","id":null,"name":"a"},{"type":"tool_call","name":"b"},{"type":"tool_call","id":5,"name":"c"}]}]`)
	})
	add("execute_tool int id", func(m pcommon.Map) {
		m.PutStr("gen_ai.operation.name", "execute_tool")
		m.PutInt("gen_ai.tool.call.id", 7)
	})
	add("execute_tool empty id", func(m pcommon.Map) {
		m.PutStr("gen_ai.operation.name", "execute_tool")
		m.PutStr("gen_ai.tool.call.id", "")
	})
	add("execute_tool no id", func(m pcommon.Map) {
		m.PutStr("gen_ai.operation.name", "execute_tool")
	})
	add("chat giant text, no tool call", func(m pcommon.Map) {
		m.PutStr("gen_ai.operation.name", "chat")
		m.PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"`+strings.Repeat("x", 8<<20)+`"}]}]`)
	})
	add("GET /unrelated", func(m pcommon.Map) {
		m.PutStr("http.request.method", "GET")
	})
	return td
}

func TestBadTelemetryPassesThroughAndIsCounted(t *testing.T) {
	pl := newRig(t, tracesOnly())

	want := badSpans()
	pl.consume(badSpans())
	pl.advance(time.Hour)
	pl.shutdown()
	require.NoError(t, ptracetest.CompareTraces(want, pl.output()), "passed through unchanged, nothing added")

	point := func(reason string, n int64) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{
			Attributes: attribute.NewSet(attribute.String("toolpair.dialect", "genai"), attribute.String("reason", reason)),
			Value:      n,
		}
	}
	metadatatest.AssertEqualProcessorToolpairMalformed(t, pl.tel, []metricdata.DataPoint[int64]{
		point("invalid_json", 1),
		point("invalid_type", 1),
		point("null_call_id", 1),
		point("missing_call_id", 3),
		point("invalid_call_id", 2),
	}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorToolpairRecordsUnrecognized(t, pl.tel, []metricdata.DataPoint[int64]{{
		Attributes: attribute.NewSet(attribute.String("otel.signal", "traces")),
		Value:      1, // the unrelated span (a chat span announcing no call is still a step boundary)
	}}, metricdatatest.IgnoreTimestamp())
}

// TestTelemetryFollowsTheEngine checks the use, result and outcome metrics on a real capture:
// the AI SDK parallel run announces two calls (repeated by its invoke_agent span) and runs
// both.
func TestTelemetryFollowsTheEngine(t *testing.T) {
	pl := newRig(t, tracesOnly())
	pl.consume(readCapture(t, "parallel"))
	pl.consume(readCapture(t, "killed_during_tool"))
	pl.advance(11 * time.Minute)

	one := func(n int64) []metricdata.DataPoint[int64] { return []metricdata.DataPoint[int64]{{Value: n}} }
	metadatatest.AssertEqualProcessorToolpairUses(t, pl.tel, one(3), metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorToolpairUsesRepeated(t, pl.tel, one(2), metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorToolpairResults(t, pl.tel, one(2), metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorToolpairPendingCalls(t, pl.tel, one(0), metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorToolpairOutcomes(t, pl.tel, []metricdata.DataPoint[int64]{
		{Attributes: attribute.NewSet(attribute.String("toolpair.outcome", "paired")), Value: 2},
		{Attributes: attribute.NewSet(attribute.String("toolpair.outcome", "interrupted"), attribute.String("toolpair.interrupt.reason", "expired")), Value: 1},
	}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorToolpairSyntheticRecords(t, pl.tel, []metricdata.DataPoint[int64]{{
		Attributes: attribute.NewSet(attribute.String("otel.signal", "traces")), Value: 1,
	}}, metricdatatest.IgnoreTimestamp())
}
