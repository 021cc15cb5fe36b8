// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package distribution

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/internal/distrotest"
)

// The real capture replayed: Claude Code killed (SIGTERM) while its Bash tool ran. The call is
// announced only by a tool_decision log event; the turn's spans are in trace claudeTrace.
const (
	claudeTrace  = "6119b193cd8f58bc28bb4134bc00b3de"
	claudeTurn   = "88f1cddedb2c6769" // claude_code.interaction, the turn span
	claudeCallID = "toolu_mock_interrupt_01"
)

// TestSyntheticSpanInJaeger starts a real Jaeger v2 (in memory, examples/jaeger/jaeger.yaml)
// and bin/otelcol-agent with examples/full.yaml exporting traces to it over OTLP, all on free
// loopback ports; posts the real claude/interrupt_sigterm capture (logs, then traces) as
// Claude Code does; and reads the trace back through Jaeger's query API (api/v3, OTLP JSON):
// it holds exactly one synthetic error span for the killed call, under the turn span, with
// the attributes of specification section 3.
func TestSyntheticSpanInJaeger(t *testing.T) {
	root := distrotest.RepoRoot(t)
	jaegerBin := distrotest.JaegerBinary(t)
	otlpGRPC, queryHTTP := distrotest.FreePort(t), distrotest.FreePort(t)
	// A stand-in for a built Jaeger UI (the module build embeds none): the config serves the
	// directory JAEGER_UI_ASSETS names, as the README tells users to.
	ui := t.TempDir()
	const uiPage = `<html><head><base href="/" data-inject-target="BASE_URL"/><title>ui under test</title></head><body></body></html>`
	require.NoError(t, os.WriteFile(filepath.Join(ui, "index.html"), []byte(uiPage), 0o600))
	j := distrotest.Start(t, "jaeger", jaegerBin, []string{
		"JAEGER_UI_ASSETS=" + ui,
		fmt.Sprintf("JAEGER_OTLP_GRPC_ENDPOINT=127.0.0.1:%d", otlpGRPC),
		fmt.Sprintf("JAEGER_OTLP_HTTP_ENDPOINT=127.0.0.1:%d", distrotest.FreePort(t)),
		fmt.Sprintf("JAEGER_QUERY_HTTP_ENDPOINT=127.0.0.1:%d", queryHTTP),
		fmt.Sprintf("JAEGER_QUERY_GRPC_ENDPOINT=127.0.0.1:%d", distrotest.FreePort(t)),
	}, "--config", filepath.Join(root, "examples", "jaeger", "jaeger.yaml"))
	query := fmt.Sprintf("http://127.0.0.1:%d", queryHTTP)
	j.WaitHTTP(query + "/api/services")
	// The trace's page, where the README sends users, is the UI's.
	resp, err := http.Get(query + "/trace/" + claudeTrace)
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Contains(t, string(page), "ui under test", "the UI of JAEGER_UI_ASSETS")

	httpPort := distrotest.FreePort(t)
	c := distrotest.StartCollector(t, "full.yaml",
		[]string{
			fmt.Sprintf("OTELCOL_AGENT_JAEGER_ENDPOINT=127.0.0.1:%d", otlpGRPC),
			fmt.Sprintf("OTELCOL_AGENT_PROM_PORT=%d", distrotest.FreePort(t)),
			fmt.Sprintf("OTELCOL_AGENT_METRICS_PORT=%d", distrotest.FreePort(t)),
		},
		fmt.Sprintf("--set=receivers::otlp::protocols::http::endpoint=127.0.0.1:%d", httpPort),
		fmt.Sprintf("--set=receivers::otlp::protocols::grpc::endpoint=127.0.0.1:%d", distrotest.FreePort(t)),
		// The turn's end closes the call after orphan_grace: a second instead of 30.
		"--set=processors::toolpair::orphan_grace=1s",
		"--set=exporters::debug::verbosity=basic")

	dir := filepath.Join(root, "testdata", "claude", "interrupt_sigterm")
	// Logs first: the call is known before the turn's end arrives, however slow the machine
	// (the other order is the processor tests' business).
	for _, signal := range []string{"logs", "traces"} {
		body, err := os.ReadFile(filepath.Join(dir, signal+".json"))
		require.NoError(t, err)
		url := fmt.Sprintf("http://127.0.0.1:%d/v1/%s", httpPort, signal)
		c.WaitFor(func() bool { return distrotest.PostOTLP(url, body) }, "the collector accepts "+signal)
	}

	var spans map[string]ptrace.Span // by span ID
	synthetic := func() []ptrace.Span {
		spans = jaegerTrace(t, query, claudeTrace)
		var out []ptrace.Span
		for _, s := range spans {
			if v, ok := s.Attributes().Get("toolpair.synthetic"); ok && v.Bool() {
				out = append(out, s)
			}
		}
		return out
	}
	j.WaitFor(func() bool { return len(synthetic()) > 0 }, "the synthetic span in Jaeger")
	c.Stop()

	syn := synthetic()
	require.Len(t, syn, 1, "one synthetic span for the one killed call")
	s := syn[0]
	assert.Equal(t, "execute_tool Bash", s.Name())
	assert.Equal(t, ptrace.SpanKindInternal, s.Kind())
	assert.Equal(t, ptrace.StatusCodeError, s.Status().Code())
	assert.Equal(t, "tool call interrupted: session_end", s.Status().Message())
	assert.Equal(t, claudeTurn, s.ParentSpanID().String(), "under the turn span")
	if turn, ok := spans[claudeTurn]; assert.True(t, ok, "the turn span is in the trace") {
		assert.Equal(t, "claude_code.interaction", turn.Name())
		assert.GreaterOrEqual(t, s.StartTimestamp(), turn.StartTimestamp(), "the call starts within its turn")
	}
	want := map[string]any{
		"toolpair.synthetic":           true,
		"toolpair.synthetic.companion": true,
		"toolpair.outcome":             "interrupted",
		"toolpair.interrupt.reason":    "session_end",
		"gen_ai.tool.call.id":          claudeCallID,
		"gen_ai.tool.name":             "Bash",
		"gen_ai.operation.name":        "execute_tool",
		"error.type":                   "tool_call_interrupted",
		"session.id":                   "d5b1e536-185e-4707-b0a1-94dd83945366",
	}
	for k, v := range want {
		got, ok := s.Attributes().Get(k)
		if assert.True(t, ok, "attribute %s", k) {
			assert.Equal(t, v, got.AsRaw(), k)
		}
	}
	j.Stop()
}

// jaegerTrace reads one trace through Jaeger's api/v3 (OTLP JSON in "result") and returns its
// spans by span ID; nothing while the trace is not stored yet.
func jaegerTrace(t *testing.T, query, traceID string) map[string]ptrace.Span {
	t.Helper()
	resp, err := http.Get(query + "/api/v3/traces/" + traceID) //nolint:gosec // a loopback URL built by the test
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil
	}
	var envelope struct {
		Result json.RawMessage `json:"result"`
	}
	require.NoError(t, json.Unmarshal(body, &envelope), "api/v3 answer: %s", body)
	var u ptrace.JSONUnmarshaler
	td, err := u.UnmarshalTraces(envelope.Result)
	require.NoError(t, err, "api/v3 result: %s", envelope.Result)
	out := map[string]ptrace.Span{}
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		sss := td.ResourceSpans().At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j).Spans()
			for k := 0; k < ss.Len(); k++ {
				out[ss.At(k).SpanID().String()] = ss.At(k)
			}
		}
	}
	return out
}
