// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package distribution

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/internal/distrotest"
)

// TestRecordAnnouncingManyCallsIsBounded: one chat span announcing 20,000 calls that never
// run, sent over OTLP/HTTP to the built binary's default configuration with a 2 s
// pairing_timeout. The span passes; max_calls_per_record (1024) calls are tracked, each closed
// by one synthetic span; the other 18,976 are counted in otelcol_processor_toolpair_malformed
// with reason too_many_calls (specification section 6).
func TestRecordAnnouncingManyCallsIsBounded(t *testing.T) {
	const announced, bound = 20_000, 1024
	ids := make([]string, announced)
	for i := range ids {
		ids[i] = fmt.Sprintf("call_%05d", i)
	}
	body, err := (&ptrace.JSONMarshaler{}).MarshalTraces(chatTraces("flood", "conv-flood", 0xf1, [][]string{ids}, nil))
	require.NoError(t, err)

	out := t.TempDir()
	port, metricsPort := distrotest.FreePort(t), distrotest.FreePort(t)
	c := distrotest.StartCollector(t, "default.yaml",
		[]string{"OTELCOL_AGENT_OUT=" + out, "OTELCOL_AGENT_REPLAY=" + filepath.Join(out, "none", "*.json"), fmt.Sprintf("OTELCOL_AGENT_METRICS_PORT=%d", metricsPort)},
		fmt.Sprintf("--set=receivers::otlp::protocols::http::endpoint=127.0.0.1:%d", port),
		fmt.Sprintf("--set=receivers::otlp::protocols::grpc::endpoint=127.0.0.1:%d", distrotest.FreePort(t)),
		"--set=processors::toolpair::pairing_timeout=2s",
		"--set=exporters::debug::verbosity=basic")
	url := fmt.Sprintf("http://127.0.0.1:%d/v1/traces", port)
	c.WaitFor(func() bool { return distrotest.PostOTLP(url, body) }, "the OTLP/HTTP receiver accepts the span")

	tracesFile := filepath.Join(out, "traces.jsonl")
	count := func() (chat, synthetic int) {
		for _, s := range readSpans(t, tracesFile) {
			switch {
			case attr(s, "toolpair.synthetic") == "true":
				synthetic++
			case s.Name() == "chat m":
				chat++
			}
		}
		return chat, synthetic
	}
	c.WaitFor(func() bool { _, n := count(); return n >= bound }, "the tracked calls' synthetic spans")
	malformed := scrapeSum(t, metricsPort, "otelcol_processor_toolpair_malformed", `reason="too_many_calls"`)
	c.Stop()

	chat, synthetic := count()
	assert.Equal(t, 1, chat, "the record passes")
	assert.Equal(t, bound, synthetic, "one synthetic span per tracked call, none for the others")
	assert.Equal(t, float64(announced-bound), malformed)
}

// scrapeSum returns the sum of the samples of the collector's own metric name (any suffix
// Prometheus gives it) whose labels contain label, read from its Prometheus endpoint.
func scrapeSum(t *testing.T, port int, name, label string) float64 {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	require.NoError(t, err)
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) || !strings.Contains(line, label) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		require.NoError(t, err, line)
		sum += v
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return sum
}

// chatTraces returns one batch of chat spans of service svc in conversation conv, one span
// per slice of ids (each span announcing its calls), and execute_tool spans for results.
func chatTraces(svc, conv string, trace byte, calls [][]string, results []string) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", svc)
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	at := pcommon.Timestamp(1_900_000_000_000_000_000)
	for i, ids := range calls {
		s := spans.AppendEmpty()
		s.SetName("chat m")
		s.SetTraceID(pcommon.TraceID{trace})
		s.SetSpanID(pcommon.SpanID{trace, byte(i + 1)})
		s.SetStartTimestamp(at)
		s.SetEndTimestamp(at + 1_000_000)
		var msg strings.Builder
		msg.WriteString(`[{"role":"assistant","parts":[`)
		for j, id := range ids {
			if j > 0 {
				msg.WriteByte(',')
			}
			fmt.Fprintf(&msg, `{"type":"tool_call","id":%q,"name":"run_shell","arguments":{}}`, id)
		}
		msg.WriteString(`]}]`)
		s.Attributes().PutStr("gen_ai.operation.name", "chat")
		s.Attributes().PutStr("gen_ai.conversation.id", conv)
		s.Attributes().PutStr("gen_ai.output.messages", msg.String())
	}
	for i, id := range results {
		s := spans.AppendEmpty()
		s.SetName("execute_tool run_shell")
		s.SetTraceID(pcommon.TraceID{trace})
		s.SetSpanID(pcommon.SpanID{trace, 0xf0, byte(i)})
		s.SetStartTimestamp(at + 2_000_000)
		s.SetEndTimestamp(at + 3_000_000)
		s.Attributes().PutStr("gen_ai.operation.name", "execute_tool")
		s.Attributes().PutStr("gen_ai.tool.name", "run_shell")
		s.Attributes().PutStr("gen_ai.tool.call.id", id)
		s.Attributes().PutStr("gen_ai.conversation.id", conv)
	}
	return td
}

// TestTenantFloodThroughTheBinary: with max_pending_calls 1000 and 500 per tenant, tenant-a
// announces three calls, tenant-b then announces 5,000 (ten times its bound), then tenant-a's
// results arrive: every call of tenant-a pairs and none of its records is synthetic or
// orphan; tenant-b's 4,500 evictions are counted (specification section 6).
func TestTenantFloodThroughTheBinary(t *testing.T) {
	out := t.TempDir()
	port, metricsPort := distrotest.FreePort(t), distrotest.FreePort(t)
	c := distrotest.StartCollector(t, "default.yaml",
		[]string{"OTELCOL_AGENT_OUT=" + out, "OTELCOL_AGENT_REPLAY=" + filepath.Join(out, "none", "*.json"), fmt.Sprintf("OTELCOL_AGENT_METRICS_PORT=%d", metricsPort)},
		fmt.Sprintf("--set=receivers::otlp::protocols::http::endpoint=127.0.0.1:%d", port),
		fmt.Sprintf("--set=receivers::otlp::protocols::grpc::endpoint=127.0.0.1:%d", distrotest.FreePort(t)),
		"--set=processors::toolpair::max_pending_calls=1000",
		"--set=processors::toolpair::max_pending_calls_per_tenant=500",
		"--set=exporters::debug::verbosity=basic")
	url := fmt.Sprintf("http://127.0.0.1:%d/v1/traces", port)
	post := func(td ptrace.Traces) {
		t.Helper()
		body, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		require.NoError(t, err)
		c.WaitFor(func() bool { return distrotest.PostOTLP(url, body) }, "the OTLP/HTTP receiver accepts the spans")
	}
	aCalls := []string{"a1", "a2", "a3"}
	post(chatTraces("tenant-a", "conv-a", 0xa, [][]string{aCalls}, nil))
	var flood [][]string
	for s := range 5 {
		ids := make([]string, 1000)
		for i := range ids {
			ids[i] = fmt.Sprintf("b%d_%d", s, i)
		}
		flood = append(flood, ids)
	}
	post(chatTraces("tenant-b", "conv-b", 0xb, flood, nil))
	post(chatTraces("tenant-a", "conv-a", 0xa, nil, aCalls))

	tracesFile := filepath.Join(out, "traces.jsonl")
	aSpans := func() (paired, other int) {
		for _, s := range readSpans(t, tracesFile) {
			if attr(s, "gen_ai.conversation.id") != "conv-a" || attr(s, "gen_ai.operation.name") != "execute_tool" {
				continue
			}
			if attr(s, "toolpair.outcome") == "paired" && attr(s, "toolpair.synthetic") == "" {
				paired++
			} else {
				other++
			}
		}
		return paired, other
	}
	c.WaitFor(func() bool { p, _ := aSpans(); return p == len(aCalls) }, "tenant-a's calls paired")
	evicted := scrapeSum(t, metricsPort, "otelcol_processor_toolpair_outcomes", `toolpair_interrupt_reason="evicted"`)
	c.Stop()

	paired, other := aSpans()
	assert.Equal(t, len(aCalls), paired)
	assert.Zero(t, other, "no synthetic or orphan record of tenant-a")
	assert.Equal(t, float64(4500), evicted, "tenant-b's calls beyond its 500 are evicted, and counted")
}
