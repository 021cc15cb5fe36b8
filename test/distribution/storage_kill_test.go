// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package distribution

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/internal/distrotest"
)

// The kill tests run the built binary with file_storage and a checkpoint_interval no test
// reaches, so that no checkpoint is ever written: they kill it (SIGKILL) right after a use
// arrived, or once the session's end is queued, and check that the restarted collector still
// knows the call (specification section 9): its batch's record holds it.

// killOrphanGrace is the runs' orphan_grace, the delay of a session's end: long enough that
// the kill comes before the queued session end applies.
const killOrphanGrace = 2 * time.Second

// killRun is one run of the collector on the state directory dir, with a traces and a logs
// pipeline, each writing its output to a file of its own.
type killRun struct {
	c                  *distrotest.Process
	out                string
	tracesURL, logsURL string
	tracesOut, logsOut string
}

func startKillRun(t *testing.T, dir string) *killRun {
	t.Helper()
	port := distrotest.FreePort(t)
	out := t.TempDir()
	r := &killRun{out: out, tracesOut: filepath.Join(out, "traces.jsonl"), logsOut: filepath.Join(out, "logs.jsonl"),
		tracesURL: fmt.Sprintf("http://127.0.0.1:%d/v1/traces", port), logsURL: fmt.Sprintf("http://127.0.0.1:%d/v1/logs", port)}
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`extensions:
  file_storage:
    directory: %s
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
processors:
  toolpair:
    dialects: [claude_code]
    storage: file_storage
    checkpoint_interval: 1h
    orphan_grace: %s
exporters:
  file/traces:
    path: %s
    flush_interval: 10ms
  file/logs:
    path: %s
    flush_interval: 10ms
service:
  extensions: [file_storage]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [toolpair]
      exporters: [file/traces]
    logs:
      receivers: [otlp]
      processors: [toolpair]
      exporters: [file/logs]
  telemetry:
    metrics:
      level: none
`, dir, port, killOrphanGrace, r.tracesOut, r.logsOut)), 0o600))
	r.c = distrotest.Start(t, "otelcol-agent", distrotest.Binary(t), nil, "--config", cfg)
	return r
}

// post sends an OTLP/JSON body to url, retrying until the receiver listens. The receiver
// answers once the pipeline, toolpair included, has taken the records.
func (r *killRun) post(url string, body []byte) {
	r.c.WaitFor(func() bool { return distrotest.PostOTLP(url, body) }, "the OTLP/HTTP receiver accepts "+url)
}

func (r *killRun) postLogs(t *testing.T, ld plog.Logs) {
	t.Helper()
	body, err := (&plog.JSONMarshaler{}).MarshalLogs(ld)
	require.NoError(t, err)
	r.post(r.logsURL, body)
}

// synthetic returns the synthetic log records and spans the run wrote.
func (r *killRun) synthetic(t *testing.T) ([]plog.LogRecord, []ptrace.Span) {
	var logs []plog.LogRecord
	for _, lr := range readLogRecords(r.logsOut) {
		if lr.EventName() == "toolpair.tool_call.interrupted" {
			logs = append(logs, lr)
		}
	}
	var spans []ptrace.Span
	for _, s := range readSpans(t, r.tracesOut) {
		if attr(s, "toolpair.synthetic") == "true" {
			spans = append(spans, s)
		}
	}
	return logs, spans
}

// interruptCapture is the real capture of Claude Code killed while its Bash tool ran: the
// call announced only by a tool_decision log event (claudeCallID), its turn span
// (claudeTurn, claude_code.interaction, in trace claudeTrace) ending the session.
func interruptCapture(t *testing.T) (logs, traces []byte) {
	t.Helper()
	dir := filepath.Join(repoRoot, "testdata", "claude", "interrupt_sigterm")
	logs, err := os.ReadFile(filepath.Join(dir, "logs.json"))
	require.NoError(t, err)
	traces, err = os.ReadFile(filepath.Join(dir, "traces.json"))
	require.NoError(t, err)
	return logs, traces
}

// requireCallInItsTurn waits for the synthetic records of the interrupted call of
// interruptCapture in run r: one log record and one span, in the turn's trace under the turn
// span, both closed by the session's end.
func requireCallInItsTurn(t *testing.T, r *killRun) {
	t.Helper()
	var logs []plog.LogRecord
	var spans []ptrace.Span
	r.c.WaitFor(func() bool { logs, spans = r.synthetic(t); return len(logs) > 0 && len(spans) > 0 }, "the synthetic log record and span")
	time.Sleep(500 * time.Millisecond) // nothing else comes
	logs, spans = r.synthetic(t)
	require.Len(t, logs, 1)
	require.Len(t, spans, 1)
	id, _ := logs[0].Attributes().Get("gen_ai.tool.call.id")
	reason, _ := logs[0].Attributes().Get("toolpair.interrupt.reason")
	assert.Equal(t, claudeCallID, id.Str())
	assert.Equal(t, "session_end", reason.Str())
	s := spans[0]
	assert.Equal(t, claudeTrace, s.TraceID().String(), "in the turn's trace")
	assert.Equal(t, claudeTurn, s.ParentSpanID().String(), "under the turn span")
	assert.Equal(t, claudeCallID, attr(s, "gen_ai.tool.call.id"))
	assert.Equal(t, "session_end", attr(s, "toolpair.interrupt.reason"))
	assert.Equal(t, logs[0].Timestamp(), s.EndTimestamp(), "the span and the log record end together")
}

// TestStateKillRightAfterUse: the collector is killed (SIGKILL) right after a Claude Code
// tool_decision arrived, no checkpoint ever written. After the restart the call pairs with
// its true duration when its result comes (the normal capture), or, when the turn's spans
// come (the interrupt capture), its session's end closes it with both its synthetic log
// record and its synthetic span, under the turn span.
func TestStateKillRightAfterUse(t *testing.T) {
	t.Run("result", func(t *testing.T) {
		first, rest, call, duration := stateCapture(t)
		dir := t.TempDir()
		run1 := startKillRun(t, dir)
		run1.postLogs(t, first)
		run1.c.Kill()

		run2 := startKillRun(t, dir)
		run2.postLogs(t, rest)
		var lr plog.LogRecord
		run2.c.WaitFor(func() bool {
			for _, r := range readLogRecords(run2.logsOut) {
				id, _ := r.Attributes().Get("tool_use_id")
				ev, _ := r.Attributes().Get("event.name")
				if id.Str() == call && ev.Str() == "tool_result" {
					lr = r
					return true
				}
			}
			return false
		}, "the call's result")
		outcome, _ := lr.Attributes().Get("toolpair.outcome")
		assert.Equal(t, "paired", outcome.Str())
		d, ok := lr.Attributes().Get("toolpair.call.elapsed_ms") // from the decision before the restart
		if !ok {
			d, _ = lr.Attributes().Get("toolpair.call.duration_ms")
		}
		assert.Equal(t, duration, d.Int())
		time.Sleep(killOrphanGrace + time.Second)
		run2.c.Stop()
		logs, spans := run2.synthetic(t)
		assert.Empty(t, logs, "no synthetic record for a call that paired")
		assert.Empty(t, spans)
		assert.Contains(t, run2.c.Output(), "state restored from storage")
	})
	t.Run("session_end", func(t *testing.T) {
		logs, traces := interruptCapture(t)
		dir := t.TempDir()
		run1 := startKillRun(t, dir)
		run1.post(run1.logsURL, logs)
		run1.c.Kill()

		run2 := startKillRun(t, dir)
		run2.post(run2.tracesURL, traces)
		requireCallInItsTurn(t, run2)
		run2.c.Stop()
	})
}

// TestStateKillSessionEndQueued: the session ends while its call, announced only in logs, is
// pending (the turn span arrives), and the collector is killed (SIGKILL) before the session's
// end applies, so before the call's synthetic records leave; no checkpoint was ever written.
// After the restart, with nothing more sent, both the synthetic log record and the synthetic
// span (in the session's trace, under its turn span) come out.
func TestStateKillSessionEndQueued(t *testing.T) {
	logs, traces := interruptCapture(t)
	dir := t.TempDir()
	run1 := startKillRun(t, dir)
	run1.post(run1.logsURL, logs)
	run1.post(run1.tracesURL, traces)
	run1.c.Kill()
	l, s := run1.synthetic(t)
	require.Empty(t, l, "killed before the session's end applied")
	require.Empty(t, s)

	run2 := startKillRun(t, dir)
	requireCallInItsTurn(t, run2)
	run2.c.Stop()
}
