// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package distribution runs the built otelcol-agent binary, as a user would, with the
// bundled default configuration, and checks what its file exporter writes.
package distribution

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otelcol-agent/otelcol-agent/internal/distrotest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// repoRoot is the repository root, relative to this package.
const repoRoot = "../.."

// readSpans parses the OTLP JSON lines the file exporter wrote.
func readSpans(t *testing.T, path string) []ptrace.Span {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var spans []ptrace.Span
	var u ptrace.JSONUnmarshaler
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		td, err := u.UnmarshalTraces(sc.Bytes())
		if err != nil {
			continue // a line still being written
		}
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			sss := rss.At(i).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				ss := sss.At(j).Spans()
				for k := 0; k < ss.Len(); k++ {
					spans = append(spans, ss.At(k))
				}
			}
		}
	}
	return spans
}

func attr(s ptrace.Span, k string) string {
	if v, ok := s.Attributes().Get(k); ok {
		return v.AsString()
	}
	return ""
}

// readLogRecords parses the OTLP JSON lines a file exporter wrote.
func readLogRecords(path string) []plog.LogRecord {
	data, _ := os.ReadFile(path)
	var out []plog.LogRecord
	var u plog.JSONUnmarshaler
	for _, line := range bytes.Split(data, []byte("\n")) {
		ld, err := u.UnmarshalLogs(line)
		if err != nil {
			continue // empty, or a line still being written
		}
		rls := ld.ResourceLogs()
		for i := 0; i < rls.Len(); i++ {
			sls := rls.At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				lrs := sls.At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					out = append(out, lrs.At(k))
				}
			}
		}
	}
	return out
}

// TestDefaultConfigReplaysCaptures starts bin/otelcol-agent with examples/default.yaml on
// free ports, lets it replay the bundled AI SDK captures, and checks the file exporter's
// output: every execute_tool span is paired with its duration, and the call of the capture
// killed during its tool gets exactly one synthetic span.
func TestDefaultConfigReplaysCaptures(t *testing.T) {
	out := t.TempDir()
	replay, err := filepath.Abs(filepath.Join(repoRoot, "testdata", "aisdk", "*", "traces.json"))
	require.NoError(t, err)
	c := distrotest.StartCollector(t, "default.yaml",
		[]string{"OTELCOL_AGENT_OUT=" + out, "OTELCOL_AGENT_REPLAY=" + replay, fmt.Sprintf("OTELCOL_AGENT_METRICS_PORT=%d", distrotest.FreePort(t))},
		fmt.Sprintf("--set=receivers::otlp::protocols::grpc::endpoint=127.0.0.1:%d", distrotest.FreePort(t)),
		fmt.Sprintf("--set=receivers::otlp::protocols::http::endpoint=127.0.0.1:%d", distrotest.FreePort(t)),
		"--set=exporters::debug::verbosity=basic")

	tracesFile := filepath.Join(out, "traces.jsonl")
	synthetic := func() []ptrace.Span {
		var found []ptrace.Span
		for _, s := range readSpans(t, tracesFile) {
			if attr(s, "toolpair.synthetic") == "true" {
				found = append(found, s)
			}
		}
		return found
	}
	// The replay instance's pairing_timeout is 5s: the interrupted call shows up within seconds.
	c.WaitFor(func() bool { return len(synthetic()) > 0 }, "a synthetic span")
	c.Stop()

	var real []ptrace.Span
	for _, s := range readSpans(t, tracesFile) {
		if attr(s, "gen_ai.operation.name") == "execute_tool" && attr(s, "toolpair.synthetic") == "" {
			real = append(real, s)
		}
	}
	// The bundled captures hold five execute_tool spans (normal 1, parallel 2,
	// interrupt_sigterm 1, llm_timeout 1), each announced by a chat span. The interrupted one
	// ends with status Error "Command aborted: ...", a cancellation marker (specification
	// section 2): its call is interrupted, aborted, on it.
	require.Len(t, real, 5)
	for _, s := range real {
		id := attr(s, "gen_ai.tool.call.id")
		if id == "call_mock_interrupt_01" {
			assert.Equal(t, "interrupted", attr(s, "toolpair.outcome"), id)
			assert.Equal(t, "aborted", attr(s, "toolpair.interrupt.reason"), id)
			continue
		}
		assert.Equal(t, "paired", attr(s, "toolpair.outcome"), id)
		assert.NotEmpty(t, attr(s, "toolpair.call.duration_ms"), id)
	}
	syn := synthetic()
	require.Len(t, syn, 1)
	assert.Equal(t, "execute_tool run_shell", syn[0].Name())
	assert.Equal(t, "expired", attr(syn[0], "toolpair.interrupt.reason"))
	assert.Equal(t, "tool_call_interrupted", attr(syn[0], "error.type"))
	assert.True(t, strings.HasPrefix(syn[0].Status().Message(), "tool call interrupted"))
}

// TestInvalidConfigIsRefusedAtStartup runs the binary's validate command on configurations
// with one bad toolpair value each, and checks the error names the key.
func TestInvalidConfigIsRefusedAtStartup(t *testing.T) {
	bin := distrotest.Binary(t)
	for key, value := range map[string]string{
		"pairing_timeout":     "0s",
		"orphan_grace":        "-1s",
		"max_pending_calls":   "0",
		"dialects":            "[genai, nope]",
		"duplicates":          "keep",
		"mode":                "shard",
		"route_attribute":     "session.id",
		"checkpoint_interval": "0s",
	} {
		t.Run(key, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "config.yaml")
			require.NoError(t, os.WriteFile(cfg, []byte(`receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:0
processors:
  toolpair:
    `+key+`: `+value+`
exporters:
  debug:
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [toolpair]
      exporters: [debug]
`), 0o600))
			out, err := exec.Command(bin, "validate", "--config", cfg).CombinedOutput()
			require.Error(t, err, "validate must fail")
			assert.Contains(t, string(out), key)
			assert.Contains(t, string(out), "toolpair")
		})
	}
}

// TestTranscriptConfigPairsEveryCall runs bin/otelcol-agent with
// examples/claude-transcripts.yaml on a copy of the real Claude Code transcripts: the
// filelog receiver reads them, and every tool_result line leaves paired.
func TestTranscriptConfigPairsEveryCall(t *testing.T) {
	src, err := filepath.Abs(filepath.Join(repoRoot, "testdata", "transcripts", "claude-code"))
	require.NoError(t, err)
	copyDir := filepath.Join(t.TempDir(), "projects")
	require.NoError(t, os.CopyFS(copyDir, os.DirFS(src)))
	out := t.TempDir()
	c := distrotest.StartCollector(t, "claude-transcripts.yaml", []string{
		"OTELCOL_AGENT_OUT=" + out, "OTELCOL_AGENT_STATE=" + t.TempDir(),
		"OTELCOL_AGENT_TRANSCRIPTS=" + filepath.Join(copyDir, "**", "*.jsonl"),
	})
	outcomes := func() map[string]int {
		got := map[string]int{}
		for _, lr := range readLogRecords(filepath.Join(out, "transcripts.jsonl")) {
			if v, ok := lr.Attributes().Get("toolpair.outcome"); ok {
				got[v.Str()]++
			}
		}
		return got
	}
	c.WaitFor(func() bool { return outcomes()["paired"] >= 395 }, "395 paired calls")
	c.Stop()
	assert.Equal(t, map[string]int{"paired": 395}, outcomes(), "every tool_result line paired, nothing else")
}

func TestExampleConfigsValidate(t *testing.T) {
	bin := distrotest.Binary(t)
	files, err := filepath.Glob(filepath.Join(repoRoot, "examples", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			cmd := exec.Command(bin, "validate", "--config", f)
			cmd.Env = append(os.Environ(), "OTELCOL_AGENT_TRANSCRIPTS="+filepath.Join(t.TempDir(), "*.jsonl"))
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, string(out))
		})
	}
}

// TestClaudeCodeOverOTLP starts the binary with examples/claude-code.yaml, posts the real
// Claude Code logs of a run killed during its tool to the OTLP/HTTP endpoint as Claude Code
// does (JSON), stops the collector, and finds the synthetic log record of the killed call.
func TestClaudeCodeOverOTLP(t *testing.T) {
	out := t.TempDir()
	port := distrotest.FreePort(t)
	c := distrotest.StartCollector(t, "claude-code.yaml", []string{"OTELCOL_AGENT_OUT=" + out},
		fmt.Sprintf("--set=receivers::otlp::protocols::http::endpoint=127.0.0.1:%d", port),
		fmt.Sprintf("--set=receivers::otlp::protocols::grpc::endpoint=127.0.0.1:%d", distrotest.FreePort(t)),
		"--set=service::telemetry::metrics::level=none")

	body, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "claude", "interrupt_sigterm", "logs.json"))
	require.NoError(t, err)
	url := fmt.Sprintf("http://127.0.0.1:%d/v1/logs", port)
	c.WaitFor(func() bool { return distrotest.PostOTLP(url, body) }, "the OTLP/HTTP receiver accepts the logs")
	c.Stop()

	var synthetic []plog.LogRecord
	for _, lr := range readLogRecords(filepath.Join(out, "claude-logs.jsonl")) {
		if lr.EventName() == "toolpair.tool_call.interrupted" {
			synthetic = append(synthetic, lr)
		}
	}
	require.Len(t, synthetic, 1)
	assert.Equal(t, "tool call toolu_mock_interrupt_01 (Bash) interrupted: shutdown", synthetic[0].Body().Str())
}

// TestPiOpenClawConfigPairsEveryCall runs bin/otelcol-agent with
// examples/pi-openclaw-transcripts.yaml on copies of the real pi and OpenClaw sessions, laid out
// where the agents write them under a temporary HOME: every real toolResult line leaves paired,
// OpenClaw's repair result of its interrupted call leaves interrupted (aborted), and pi's
// interrupted call, which has no result line, gets its synthetic record when the collector
// stops.
func TestPiOpenClawConfigPairsEveryCall(t *testing.T) {
	home := t.TempDir()
	for dir, agent := range map[string]string{
		filepath.Join(home, ".pi", "agent", "sessions", "--work--"):    "pi",
		filepath.Join(home, ".openclaw", "agents", "main", "sessions"): "openclaw",
	} {
		src, err := filepath.Abs(filepath.Join(repoRoot, "testdata", "transcripts", agent))
		require.NoError(t, err)
		require.NoError(t, os.CopyFS(dir, os.DirFS(src)))
	}
	out := t.TempDir()
	c := distrotest.StartCollector(t, "pi-openclaw-transcripts.yaml", []string{
		"HOME=" + home, "OTELCOL_AGENT_OUT=" + out, "OTELCOL_AGENT_STATE=" + t.TempDir(),
	})
	outcomes := func() map[string]int {
		got := map[string]int{}
		for _, lr := range readLogRecords(filepath.Join(out, "pi-openclaw.jsonl")) {
			if v, ok := lr.Attributes().Get("toolpair.outcome"); ok {
				reason := ""
				if r, ok := lr.Attributes().Get("toolpair.interrupt.reason"); ok {
					reason = r.Str()
				}
				got[v.Str()+"/"+reason]++
			}
		}
		return got
	}
	// pi: normal 1, parallel 2, tool_timeout 1, llm_error 1; OpenClaw: normal 1, tool_timeout 1.
	c.WaitFor(func() bool { return outcomes()["paired/"] >= 7 && outcomes()["interrupted/aborted"] >= 1 }, "7 paired calls and 1 aborted")
	c.Stop()
	assert.Equal(t, map[string]int{"paired/": 7, "interrupted/aborted": 1, "interrupted/shutdown": 1}, outcomes())
}
