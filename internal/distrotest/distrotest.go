// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package distrotest runs the distribution's binaries in tests as a user would: the built
// bin/otelcol-agent with an example configuration, and the Jaeger binary `make jaeger` builds,
// each on free loopback ports, started and stopped by the test itself. It is shared by the
// distribution tests (test/distribution) and the dashboard test module (test/dashboard).
package distrotest

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// WaitTimeout is how long WaitFor polls before failing the test.
const WaitTimeout = 60 * time.Second

// RepoRoot returns the repository root: the nearest directory at or above the working
// directory that holds builder-config.yaml.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "builder-config.yaml")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no builder-config.yaml above the working directory")
		dir = parent
	}
}

// Binary returns the absolute path of the built collector: $OTELCOL_AGENT_BIN, else
// bin/otelcol-agent under the repository root. When it is missing the test is skipped, or
// fails when $CI is set (`make test` builds it first).
func Binary(t testing.TB) string {
	t.Helper()
	return requireFile(t, "OTELCOL_AGENT_BIN", filepath.Join(RepoRoot(t), "bin", "otelcol-agent"), "make build")
}

// JaegerBinary returns the absolute path of the Jaeger v2 binary: $JAEGER_BIN, else
// .cache/jaeger under the repository root; skipped or failed like Binary (`make jaeger`).
func JaegerBinary(t testing.TB) string {
	t.Helper()
	return requireFile(t, "JAEGER_BIN", filepath.Join(RepoRoot(t), ".cache", "jaeger"), "make jaeger")
}

func requireFile(t testing.TB, env, fallback, how string) string {
	t.Helper()
	path := os.Getenv(env)
	if path == "" {
		path = fallback
	}
	abs, err := filepath.Abs(path)
	require.NoError(t, err)
	if _, err := os.Stat(abs); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s missing: run `%s` (err: %v)", abs, how, err)
		}
		t.Skipf("%s missing: run `%s` first", abs, how)
	}
	return abs
}

// FreePort picks its ports in [portLow, portHigh): below Linux's default ephemeral range
// (32768-60999), from which the kernel gives ports to outgoing connections and to listeners
// on port 0. A port from the ephemeral range could be taken by any process's connection
// between FreePort and the bind of the binary the test passes it to.
const portLow, portHigh = 20000, 32000

// FreePort returns a TCP port on 127.0.0.1 that is free and reserved for the test until it
// ends: a lock (flock) on a file named after the port, in the temporary directory, keeps the
// other test processes of the repository (go test runs packages in parallel) from picking it.
// The binary the test starts binds it later; nothing else on the machine takes it meanwhile
// unless it binds that very port.
func FreePort(t testing.TB) int {
	t.Helper()
	dir := filepath.Join(os.TempDir(), "otelcol-agent-test-ports")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	for range 1000 {
		port := portLow + rand.IntN(portHigh-portLow)
		f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)), os.O_CREATE|os.O_RDWR, 0o600)
		require.NoError(t, err)
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			f.Close() // another test holds it
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			f.Close() // in use outside the tests
			continue
		}
		l.Close()
		t.Cleanup(func() { f.Close() }) // releases the lock
		return port
	}
	t.Fatalf("no free port in [%d, %d)", portLow, portHigh)
	return 0
}

// Process is a binary started by a test. Its combined output is kept and logged when the test
// fails; it is killed at the end of the test unless Stop ended it.
type Process struct {
	t       testing.TB
	name    string
	cmd     *exec.Cmd
	output  syncBuffer
	exited  chan error
	stopped bool
}

// Start runs bin with args and extra environment variables in a temporary working directory.
func Start(t testing.TB, name, bin string, env []string, args ...string) *Process {
	t.Helper()
	p := &Process{t: t, name: name, exited: make(chan error, 1)}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Dir = t.TempDir()
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.output, &p.output
	require.NoError(t, p.cmd.Start(), "start %s", name)
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if !p.stopped {
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", p.name, p.output.String())
		}
	})
	return p
}

// StartCollector runs bin/otelcol-agent with the example configuration named (a path under
// examples/), extra environment variables and arguments (for example --set overrides).
func StartCollector(t testing.TB, config string, env []string, args ...string) *Process {
	t.Helper()
	cfg := filepath.Join(RepoRoot(t), "examples", config)
	return Start(t, "otelcol-agent", Binary(t), env, append([]string{"--config", cfg}, args...)...)
}

// WaitFor polls cond every 250ms for up to WaitTimeout, failing the test if the process
// exits first or the time runs out.
func (p *Process) WaitFor(cond func() bool, what string) {
	p.t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for !cond() {
		select {
		case err := <-p.exited:
			p.exited <- err
			p.t.Fatalf("%s exited early (%v) while waiting for %s", p.name, err, what)
		case <-time.After(250 * time.Millisecond):
		}
		require.True(p.t, time.Now().Before(deadline), "%s: not within %s", what, WaitTimeout)
	}
}

// WaitStarted polls cond every 250ms for up to WaitTimeout and reports whether it came true;
// false when the process exited first (see Output for why), failing the test when the time
// runs out.
func (p *Process) WaitStarted(cond func() bool) bool {
	p.t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for !cond() {
		select {
		case err := <-p.exited:
			p.exited <- err
			p.stopped = true
			return false
		case <-time.After(250 * time.Millisecond):
		}
		require.True(p.t, time.Now().Before(deadline), "%s: not started within %s", p.name, WaitTimeout)
	}
	return true
}

// PortTaken reports whether the process exited because a port it was given was taken
// meanwhile (FreePort closes the port it found, so another process may take it first).
func (p *Process) PortTaken() bool {
	return strings.Contains(p.Output(), "address already in use")
}

// WaitHTTP waits until a GET of url answers 200.
func (p *Process) WaitHTTP(url string) {
	p.t.Helper()
	p.WaitFor(func() bool {
		resp, err := http.Get(url) //nolint:gosec // a loopback URL built by the test
		if err != nil {
			return false
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, fmt.Sprintf("%s answering %s", p.name, url))
}

// Stop sends SIGTERM and requires a clean exit within WaitTimeout.
func (p *Process) Stop() {
	p.t.Helper()
	require.NoError(p.t, p.cmd.Process.Signal(syscall.SIGTERM))
	p.stopped = true
	select {
	case err := <-p.exited:
		require.NoError(p.t, err, "%s exits cleanly on SIGTERM", p.name)
	case <-time.After(WaitTimeout):
		_ = p.cmd.Process.Kill()
		<-p.exited
		p.t.Fatalf("%s did not stop within %s of SIGTERM", p.name, WaitTimeout)
	}
}

// Kill sends SIGKILL, as a crash would (the process writes nothing more), and waits for it
// to exit.
func (p *Process) Kill() {
	p.t.Helper()
	require.NoError(p.t, p.cmd.Process.Kill())
	p.stopped = true
	<-p.exited
}

// Pid returns the process ID, for reading the process's own accounting under /proc.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Output returns what the process wrote so far (stdout and stderr).
func (p *Process) Output() string { return p.output.String() }

// PostOTLP posts an OTLP/JSON body (a capture's traces.json or logs.json) to an OTLP/HTTP
// endpoint path such as http://127.0.0.1:4318/v1/logs, as the agents do, and reports whether
// it was accepted (200).
func PostOTLP(url string, body []byte) bool {
	resp, err := http.Post(url, "application/json", bytes.NewReader(body)) //nolint:gosec // a loopback URL built by the test
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// syncBuffer is a bytes.Buffer safe for the process's writers and the test's readers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
