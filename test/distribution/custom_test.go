// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package distribution

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/internal/distrotest"
)

func logAttr(lr plog.LogRecord, k string) string {
	if v, ok := lr.Attributes().Get(k); ok {
		return v.AsString()
	}
	return ""
}

// TestCustomDialectExampleOverOTLP starts the binary with examples/custom-dialect.yaml, posts
// the sample telemetry of its made-up agent (testdata/custom/) to the OTLP/HTTP endpoint, and
// checks the outcomes the declared dialects give it: paired results with their durations, the
// cancelled call aborted, and a synthetic log record and a synthetic span for the two calls
// the next model request cut off.
func TestCustomDialectExampleOverOTLP(t *testing.T) {
	out := t.TempDir()
	port := distrotest.FreePort(t)
	c := distrotest.StartCollector(t, "custom-dialect.yaml", []string{"OTELCOL_AGENT_OUT=" + out},
		fmt.Sprintf("--set=receivers::otlp::protocols::http::endpoint=127.0.0.1:%d", port),
		// Boundaries close their calls after orphan_grace: a second here, not 30.
		"--set=processors::toolpair::orphan_grace=1s",
		"--set=service::telemetry::metrics::level=none")

	for signal, file := range map[string]string{"logs": "logs.json", "traces": "traces.json"} {
		body, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "custom", file))
		require.NoError(t, err)
		url := fmt.Sprintf("http://127.0.0.1:%d/v1/%s", port, signal)
		c.WaitFor(func() bool { return distrotest.PostOTLP(url, body) }, "the OTLP/HTTP receiver accepts the "+signal)
	}

	logsFile, tracesFile := filepath.Join(out, "acme-logs.jsonl"), filepath.Join(out, "acme-traces.jsonl")
	syntheticLogs := func() (found []plog.LogRecord) {
		for _, lr := range readLogRecords(logsFile) {
			if lr.EventName() == "toolpair.tool_call.interrupted" {
				found = append(found, lr)
			}
		}
		return found
	}
	syntheticSpans := func() (found []ptrace.Span) {
		for _, s := range readSpans(t, tracesFile) {
			if attr(s, "toolpair.synthetic") == "true" {
				found = append(found, s)
			}
		}
		return found
	}
	c.WaitFor(func() bool { return len(syntheticLogs()) > 0 && len(syntheticSpans()) > 0 }, "a synthetic log record and span")
	c.Stop()

	outcomes := map[string]string{}
	for _, lr := range readLogRecords(logsFile) {
		if o := logAttr(lr, "toolpair.outcome"); o != "" && logAttr(lr, "toolpair.synthetic") == "" {
			outcomes[logAttr(lr, "acme.call_id")] = o + "/" + logAttr(lr, "toolpair.interrupt.reason") + "/" + logAttr(lr, "toolpair.call.duration_ms")
		}
	}
	for _, s := range readSpans(t, tracesFile) {
		if o := attr(s, "toolpair.outcome"); o != "" && attr(s, "toolpair.synthetic") == "" {
			outcomes[attr(s, "acme.call_id")] = o + "/" + attr(s, "toolpair.interrupt.reason") + "/" + attr(s, "toolpair.call.duration_ms")
		}
	}
	assert.Equal(t, map[string]string{
		"tc_01": "paired//700", "tc_02": "interrupted/aborted/", "tc_05": "paired//600",
		"sp_01": "paired//500", "sp_03": "paired//3700",
	}, outcomes)

	logs := syntheticLogs()
	require.Len(t, logs, 1)
	assert.Equal(t, "tool call tc_04 (web_search) interrupted: next_step", logs[0].Body().Str())
	assert.Equal(t, "sess-7f3a", logAttr(logs[0], "acme.session_id"))
	spans := syntheticSpans()
	require.Len(t, spans, 1)
	assert.Equal(t, "execute_tool edit_file", spans[0].Name())
	assert.Equal(t, "sp_02", attr(spans[0], "gen_ai.tool.call.id"))
	assert.Equal(t, "next_step", attr(spans[0], "toolpair.interrupt.reason"))
	assert.Equal(t, "4acde0c1b2a3948576afe0d1c2b3a490", spans[0].TraceID().String())
}

// TestCustomDialectParseErrorRefusedAtStartup: a custom dialect whose OTTL does not parse
// stops the collector at start-up, with an error naming the entry, the key and the dialect.
func TestCustomDialectParseErrorRefusedAtStartup(t *testing.T) {
	out := validateCustomDialects(t, `
      - name: acme_logs
        context: log
        result: event_name == "acme.tool.end"
        call_id: attributes["acme.call_id"]
      - name: acme_spans
        context: span
        use: name == 
        call_id: attributes["acme.call_id"]`)
	assert.Contains(t, out, `custom_dialects[1].use: dialect "acme_spans"`)
}

// TestCustomDialectBeforeBuiltinWithoutWhereRefusedAtStartup: precedence before_builtin
// without a where condition, and a calls_match without calls, stop the collector at
// start-up, each error naming its entry and key.
func TestCustomDialectBeforeBuiltinWithoutWhereRefusedAtStartup(t *testing.T) {
	out := validateCustomDialects(t, `
      - name: copilot_abort
        context: span
        precedence: before_builtin
        abort: attributes["error.type"] == "cancelled"
        call_id: attributes["gen_ai.tool.call.id"]
      - name: qwen_spans
        context: span
        use: name == "qwen-code.llm_request"
        calls_match: {type: tool_call}
        call_id: attributes["gen_ai.tool.call.id"]`)
	assert.Contains(t, out, `custom_dialects[0].where: dialect "copilot_abort": must be set when precedence is "before_builtin"`)
	assert.Contains(t, out, `custom_dialects[1].calls_match: dialect "qwen_spans": filters the entries of calls`)
}

// validateCustomDialects runs the collector's validate command on a configuration whose
// toolpair processor has the custom_dialects entries given (YAML list items indented under
// the key), requires it to fail, and returns its output.
func validateCustomDialects(t *testing.T, entries string) string {
	t.Helper()
	bin := distrotest.Binary(t)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:0
processors:
  toolpair:
    custom_dialects:`+entries+`
exporters:
  debug:
service:
  pipelines:
    logs:
      receivers: [otlp]
      processors: [toolpair]
      exporters: [debug]
`), 0o600))
	out, err := exec.Command(bin, "validate", "--config", cfg).CombinedOutput()
	require.Error(t, err, "validate must fail")
	return string(out)
}
