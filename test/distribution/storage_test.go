// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package distribution

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/otelcol-agent/otelcol-agent/internal/distrotest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
)

// The state tests run the built binary with the toolpair processor's state in a file_storage
// extension, stop it (SIGTERM) or kill it (SIGKILL) in the middle of a real Claude Code
// capture, start it again on the same directory and send the rest of the capture.

// Timings of the state tests: short, so the tests stay quick.
const (
	stateCheckpoint = 200 * time.Millisecond
	statePairing    = 2 * time.Second
)

// stateRun is one run of the collector on the state directory dir, writing its logs
// pipeline's output under a directory of its own.
type stateRun struct {
	c   *distrotest.Process
	out string
	url string
}

func startStateRun(t *testing.T, dir string) *stateRun {
	t.Helper()
	port := distrotest.FreePort(t)
	out := t.TempDir()
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
    checkpoint_interval: %s
    pairing_timeout: %s
    orphan_grace: 500ms
exporters:
  file/logs:
    path: %s
    flush_interval: 10ms
service:
  extensions: [file_storage]
  pipelines:
    logs:
      receivers: [otlp]
      processors: [toolpair]
      exporters: [file/logs]
  telemetry:
    metrics:
      level: none
`, dir, port, stateCheckpoint, statePairing, filepath.Join(out, "logs.jsonl"))), 0o600))
	c := distrotest.Start(t, "otelcol-agent", distrotest.Binary(t), nil, "--config", cfg)
	return &stateRun{c: c, out: out, url: fmt.Sprintf("http://127.0.0.1:%d/v1/logs", port)}
}

// post sends ld to the run's OTLP/HTTP receiver, retrying until it listens. The receiver
// answers once the pipeline, toolpair included, has taken the records.
func (r *stateRun) post(t *testing.T, ld plog.Logs) {
	t.Helper()
	body, err := (&plog.JSONMarshaler{}).MarshalLogs(ld)
	require.NoError(t, err)
	r.c.WaitFor(func() bool { return distrotest.PostOTLP(r.url, body) }, "the OTLP/HTTP receiver accepts the logs")
}

func (r *stateRun) records() []plog.LogRecord {
	return readLogRecords(filepath.Join(r.out, "logs.jsonl"))
}

// synthetic returns the synthetic records the run wrote.
func (r *stateRun) synthetic() []plog.LogRecord {
	var out []plog.LogRecord
	for _, lr := range r.records() {
		if lr.EventName() == "toolpair.tool_call.interrupted" {
			out = append(out, lr)
		}
	}
	return out
}

// result returns the run's tool_result record of call, once written.
func (r *stateRun) result(call string) (plog.LogRecord, bool) {
	for _, lr := range r.records() {
		if v, ok := lr.Attributes().Get("tool_use_id"); ok && v.Str() == call && lr.EventName() != "toolpair.tool_call.interrupted" {
			if ev, ok := lr.Attributes().Get("event.name"); ok && ev.Str() == "tool_result" {
				return lr, true
			}
		}
	}
	return plog.LogRecord{}, false
}

// stateCapture splits the Claude Code normal capture after the tool_decision of its call:
// the records up to and including it, and the rest; with the call's ID and its true
// elapsed time (result time minus decision time, rounded to the ms).
func stateCapture(t *testing.T) (first, rest plog.Logs, call string, durationMs int64) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "claude", "normal", "logs.json"))
	require.NoError(t, err)
	all, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(data)
	require.NoError(t, err)
	first, rest = plog.NewLogs(), plog.NewLogs()
	all.CopyTo(first)
	all.CopyTo(rest)
	// Index every record in order, and find the split.
	var decision, result int64
	n, split := 0, -1
	forEachRecord(all, func(lr plog.LogRecord) {
		ev, _ := lr.Attributes().Get("event.name")
		id, _ := lr.Attributes().Get("tool_use_id")
		switch {
		case ev.Str() == "tool_decision" && split < 0:
			split, call, decision = n, id.Str(), int64(lr.Timestamp())
		case ev.Str() == "tool_result" && id.Str() == call:
			result = int64(lr.Timestamp())
		}
		n++
	})
	require.GreaterOrEqual(t, split, 0, "the capture has a tool_decision")
	require.NotZero(t, result, "the capture has the call's tool_result")
	keep := func(ld plog.Logs, in func(int) bool) {
		i := 0
		ld.ResourceLogs().RemoveIf(func(rl plog.ResourceLogs) bool {
			rl.ScopeLogs().RemoveIf(func(sl plog.ScopeLogs) bool {
				sl.LogRecords().RemoveIf(func(plog.LogRecord) bool { i++; return !in(i - 1) })
				return sl.LogRecords().Len() == 0
			})
			return rl.ScopeLogs().Len() == 0
		})
	}
	keep(first, func(i int) bool { return i <= split })
	keep(rest, func(i int) bool { return i > split })
	return first, rest, call, (result - decision + int64(time.Millisecond)/2) / int64(time.Millisecond)
}

func forEachRecord(ld plog.Logs, fn func(plog.LogRecord)) {
	for _, rl := range ld.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				fn(lr)
			}
		}
	}
}

// TestStateSurvivesRestart: the call announced before the collector stops (SIGTERM), or is
// killed (SIGKILL) after more than checkpoint_interval, pairs after the restart with its true
// duration, and no synthetic record is made for it.
func TestStateSurvivesRestart(t *testing.T) {
	for _, kill := range []bool{false, true} {
		name := "sigterm"
		if kill {
			name = "sigkill"
		}
		t.Run(name, func(t *testing.T) {
			first, rest, call, duration := stateCapture(t)
			dir := t.TempDir()
			run1 := startStateRun(t, dir)
			run1.post(t, first)
			if kill {
				time.Sleep(5 * stateCheckpoint)
				run1.c.Kill()
			} else {
				run1.c.Stop()
				assert.Empty(t, run1.synthetic(), "no shutdown interruption with storage")
			}

			run2 := startStateRun(t, dir)
			run2.post(t, rest)
			var lr plog.LogRecord
			run2.c.WaitFor(func() bool { var ok bool; lr, ok = run2.result(call); return ok }, "the call's result")
			outcome, _ := lr.Attributes().Get("toolpair.outcome")
			assert.Equal(t, "paired", outcome.Str())
			d, ok := lr.Attributes().Get("toolpair.call.elapsed_ms") // from the decision before the restart
			if !ok {
				d, _ = lr.Attributes().Get("toolpair.call.duration_ms")
			}
			assert.Equal(t, duration, d.Int())
			time.Sleep(statePairing + time.Second)
			run2.c.Stop()
			assert.Empty(t, run2.synthetic(), "no synthetic record for a call that paired")
			assert.Contains(t, run2.c.Output(), "state restored from storage")
		})
	}
}

// TestStateCrashAfterPairing: a call announced, checkpointed as pending, then paired (the
// result leaves the collector), and the collector killed at once: after the restart and
// pairing_timeout, no synthetic record contradicts the paired result.
func TestStateCrashAfterPairing(t *testing.T) {
	first, rest, _, _ := stateCapture(t)
	dir := t.TempDir()
	run1 := startStateRun(t, dir)
	run1.post(t, first)
	time.Sleep(5 * stateCheckpoint) // the call is in a checkpoint as pending
	run1.post(t, rest)
	run1.c.Kill()

	run2 := startStateRun(t, dir)
	run2.c.WaitFor(func() bool { return bytes.Contains([]byte(run2.c.Output()), []byte("state restored from storage")) }, "the state restored")
	time.Sleep(statePairing + time.Second)
	run2.c.Stop()
	assert.Empty(t, run2.synthetic(), "the paired call does not come back as expired")
}

// TestStateDeadlinePassesWhileDown: the call announced before a graceful stop, with the
// collector down for longer than pairing_timeout, is expired at start: one synthetic record,
// ending at the last record its scope showed (never the collector's clock), and the result
// that arrives afterwards is a duplicate.
func TestStateDeadlinePassesWhileDown(t *testing.T) {
	first, _, call, _ := stateCapture(t)
	var last int64
	forEachRecord(first, func(lr plog.LogRecord) { last = max(last, int64(lr.Timestamp())) })
	dir := t.TempDir()
	run1 := startStateRun(t, dir)
	run1.post(t, first)
	run1.c.Stop()
	require.Empty(t, run1.synthetic(), "no shutdown interruption with storage")

	time.Sleep(statePairing + 500*time.Millisecond)
	run2 := startStateRun(t, dir)
	var syn []plog.LogRecord
	run2.c.WaitFor(func() bool { syn = run2.synthetic(); return len(syn) > 0 }, "the synthetic record of the expired call")
	run2.c.Stop()
	require.Len(t, syn, 1)
	id, _ := syn[0].Attributes().Get("gen_ai.tool.call.id")
	reason, _ := syn[0].Attributes().Get("toolpair.interrupt.reason")
	assert.Equal(t, call, id.Str())
	assert.Equal(t, "expired", reason.Str())
	assert.Equal(t, last, int64(syn[0].Timestamp()), "ends at the scope's last record, in record time")
}

// TestStateCorruptFile: a state whose bytes were damaged on disk is discarded with a warning
// and the collector starts clean.
func TestStateCorruptFile(t *testing.T) {
	first, rest, call, _ := stateCapture(t)
	dir := t.TempDir()
	run1 := startStateRun(t, dir)
	run1.post(t, first)
	run1.c.Stop()

	files, err := filepath.Glob(filepath.Join(dir, "*"))
	require.NoError(t, err)
	damaged := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		// The stored state starts with its magic; damage a byte of every copy bbolt keeps.
		for i := bytes.Index(data, []byte("TPST")); i >= 0; {
			data[i+20] ^= 0xff
			damaged++
			j := bytes.Index(data[i+4:], []byte("TPST"))
			if j < 0 {
				break
			}
			i += 4 + j
		}
		require.NoError(t, os.WriteFile(f, data, 0o600))
	}
	require.Positive(t, damaged, "the state file holds the state")

	run2 := startStateRun(t, dir)
	run2.post(t, rest)
	run2.c.WaitFor(func() bool { _, ok := run2.result(call); return ok }, "the call's result")
	run2.c.Stop()
	assert.Contains(t, run2.c.Output(), "stored state discarded")
	assert.Contains(t, run2.c.Output(), "corrupt")
	lr, _ := run2.result(call)
	outcome, _ := lr.Attributes().Get("toolpair.outcome")
	assert.NotEqual(t, "paired", outcome.Str(), "the clean start does not know the call")
}

// TestStateStorageMustBeAStorageExtension: a storage key naming no configured extension fails
// the start, with an error naming the key.
func TestStateStorageMustBeAStorageExtension(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
processors:
  toolpair:
    storage: file_storage
exporters:
  debug:
service:
  pipelines:
    logs:
      receivers: [otlp]
      processors: [toolpair]
      exporters: [debug]
  telemetry:
    metrics:
      level: none
`, distrotest.FreePort(t))), 0o600))
	cmd := exec.Command(distrotest.Binary(t), "--config", cfg)
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(distrotest.WaitTimeout):
		_ = cmd.Process.Kill()
		<-done
		t.Fatal("the collector did not refuse to start")
	}
	require.Error(t, err, "the start fails")
	assert.Contains(t, string(out), "storage")
	assert.Contains(t, string(out), "file_storage")
}
