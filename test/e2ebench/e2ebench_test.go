// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package e2ebench measures what the toolpair processor costs inside the built collector: the
// CPU time of the bin/otelcol-agent process per record, with and without toolpair in the
// pipeline, on the same batches (internal/benchload: Claude Code log events, GenAI chat and
// execute_tool spans), in two deployments:
//
//   - gateway, the headline: OTLP/gRPC receiver in, OTLP/gRPC exporter out to a next hop (a
//     sink in the test process, whose CPU is not counted), the collector's telemetry at its
//     defaults (logs sampled, metrics at level normal; the Prometheus reader on a free port
//     instead of 8888);
//   - debug: OTLP/gRPC in, debug exporter with verbosity basic out, the log not sampled so
//     that it prints a line for every batch (which adds to both sides).
//
// With OTELCOL_AGENT_BENCH_E2E set (`make bench-e2e`) it sends e2eBatches batches of
// e2eRecords records per run, in e2eRounds rounds of one run without and one with toolpair
// (the order alternating between rounds), and logs the figures. Without it, the same test
// runs a tiny variant (a few small batches, one round) whenever the binary is there, as
// `make test` provides it: the measurement's code paths are exercised and checked on every
// test run, so the measurement cannot rot between the times it is run.
package e2ebench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/otelcol-agent/otelcol-agent/internal/benchload"
	"github.com/otelcol-agent/otelcol-agent/internal/distrotest"
)

// The full measurement's volume (OTELCOL_AGENT_BENCH_E2E set); OTELCOL_AGENT_BENCH_E2E_ROUNDS
// sets another number of rounds (each a run without and a run with toolpair).
const (
	e2eBatches = 400
	e2eRecords = 1000
	e2eRounds  = 2
)

// The tiny variant's volume.
const (
	tinyBatches = 3
	tinyRecords = 100
)

// userHZ is the unit of utime and stime in /proc/PID/stat: clock ticks of 1/100 s, the
// USER_HZ every Linux architecture Go supports exports to user space.
const userHZ = 100

// workload is one kind of batch and how to send it.
type workload struct {
	name string
	// send makes batch number i of a run (from gen, so every run sends the same batches)
	// with calls calls and exports it over conn.
	send func(ctx context.Context, conn *grpc.ClientConn, gen *benchload.Generator, calls int) error
	// exported is the debug exporter's field (verbosity basic) that counts this signal's
	// records in each batch it prints.
	exported string
	// received returns the records of this signal the gateway's next hop received.
	received func(s *sink) int
}

var workloads = []workload{
	{"claude_code_logs", func(ctx context.Context, conn *grpc.ClientConn, gen *benchload.Generator, calls int) error {
		_, err := plogotlp.NewGRPCClient(conn).Export(ctx, plogotlp.NewExportRequestFromLogs(gen.ClaudeCodeLogs(calls)))
		return err
	}, "log records", func(s *sink) int { return int(s.logs.Load()) }},
	{"genai_spans", func(ctx context.Context, conn *grpc.ClientConn, gen *benchload.Generator, calls int) error {
		_, err := ptraceotlp.NewGRPCClient(conn).Export(ctx, ptraceotlp.NewExportRequestFromTraces(gen.GenAISpans(calls)))
		return err
	}, "spans", func(s *sink) int { return int(s.spans.Load()) }},
}

// deployment is one way the collector is run: its name and its configuration for an OTLP/gRPC
// receiver on grpcPort, the collector's own metrics on metricsPort and the next hop (gateway)
// on sinkPort, with toolpair (default configuration) or with no processor.
type deployment struct {
	name   string
	config func(grpcPort, metricsPort, sinkPort int, processors string) string
}

var deployments = []deployment{
	{"gateway", func(grpcPort, metricsPort, sinkPort int, processors string) string {
		return fmt.Sprintf(`receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
processors:
  toolpair:
exporters:
  otlp_grpc:
    endpoint: 127.0.0.1:%d
    tls:
      insecure: true
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: %[4]s
      exporters: [otlp_grpc]
    logs:
      receivers: [otlp]
      processors: %[4]s
      exporters: [otlp_grpc]
  telemetry:
    metrics:
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: %[3]d
`, grpcPort, sinkPort, metricsPort, processors)
	}},
	// The collector's log is not sampled, so the debug exporter prints one line for every
	// batch (the default sampling keeps about one in 100 after the first 10 of a second) and
	// the test can count what was exported.
	{"debug", func(grpcPort, metricsPort, _ int, processors string) string {
		return fmt.Sprintf(`receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
processors:
  toolpair:
exporters:
  debug:
    verbosity: basic
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: %[3]s
      exporters: [debug]
    logs:
      receivers: [otlp]
      processors: %[3]s
      exporters: [debug]
  telemetry:
    logs:
      sampling:
        enabled: false
    metrics:
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: %[2]d
`, grpcPort, metricsPort, processors)
	}},
}

// runResult is what one collector run measured.
type runResult struct {
	records int     // records sent (and exported)
	cpu     float64 // seconds of CPU (user + system) the collector spent from ready to exported
	paired  float64 // toolpair's paired outcomes, from the collector's own metrics (0 without)
}

// cpuSeconds reads the process's user plus system CPU time from /proc/PID/stat.
func cpuSeconds(t *testing.T, pid int) float64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	// The command name (field 2) is in parentheses and may hold spaces: count fields after
	// the last ')'. utime and stime are fields 14 and 15 of the line, 12 and 13 after it.
	rest := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	require.Greater(t, len(rest), 12)
	utime, err := strconv.ParseUint(rest[11], 10, 64)
	require.NoError(t, err)
	stime, err := strconv.ParseUint(rest[12], 10, 64)
	require.NoError(t, err)
	return float64(utime+stime) / userHZ
}

// exportedCount sums the record counts the debug exporter printed for field ("spans" or
// "log records").
func exportedCount(output, field string) int {
	re := regexp.MustCompile(`"` + regexp.QuoteMeta(field) + `": (\d+)`)
	n := 0
	for _, m := range re.FindAllStringSubmatch(output, -1) {
		v, _ := strconv.Atoi(m[1])
		n += v
	}
	return n
}

// pairedOutcomes reads the collector's own metrics (Prometheus text) and sums the toolpair
// outcome series labelled paired.
func pairedOutcomes(t *testing.T, metricsPort int) float64 {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)) //nolint:gosec // a loopback URL built by the test
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	sum := 0.0
	for line := range strings.SplitSeq(string(body), "\n") {
		if !strings.HasPrefix(line, "otelcol_processor_toolpair_outcomes") || !strings.Contains(line, `toolpair_outcome="paired"`) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		require.NoError(t, err, line)
		sum += v
	}
	return sum
}

// runCollector starts the collector deployed as d, waits until it is ready, sends batches
// batches of records records of w, waits until all of them are exported (printed by the debug
// exporter, or received by the gateway's next hop), and stops the collector. The CPU is read just before the first batch and just after the last record
// is exported, so start-up and shutdown are not counted.
func runCollector(t *testing.T, d deployment, w workload, withToolpair bool, batches, records int) runResult {
	t.Helper()
	next := startSink(t)
	processors := "[]"
	if withToolpair {
		processors = "[toolpair]"
	}
	var p *distrotest.Process
	var grpcPort, metricsPort int
	for attempt := 1; ; attempt++ {
		grpcPort, metricsPort = distrotest.FreePort(t), distrotest.FreePort(t)
		cfg := filepath.Join(t.TempDir(), "config.yaml")
		require.NoError(t, os.WriteFile(cfg, []byte(d.config(grpcPort, metricsPort, next.port, processors)), 0o600))
		p = distrotest.Start(t, "otelcol-agent", distrotest.Binary(t), nil, "--config", cfg)
		if p.WaitStarted(func() bool { return strings.Contains(p.Output(), "Everything is ready") }) {
			break
		}
		// Another test's process may take a port between FreePort and the collector's bind.
		require.True(t, p.PortTaken() && attempt < 3, "the collector exited before it was ready:\n%s", p.Output())
	}

	conn, err := grpc.NewClient(fmt.Sprintf("127.0.0.1:%d", grpcPort), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	// Every run of a workload sends the same batches: the same generator state, the same
	// record times.
	gen := benchload.NewGenerator("", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	cpu0 := cpuSeconds(t, p.Pid())
	for range batches {
		require.NoError(t, w.send(ctx, conn, gen, records/benchload.RecordsPerCall))
	}
	total := batches * records
	exported := func() int {
		if d.name == "debug" {
			return exportedCount(p.Output(), w.exported)
		}
		return w.received(next)
	}
	p.WaitFor(func() bool { return exported() >= total }, "every record exported")
	cpu := cpuSeconds(t, p.Pid()) - cpu0
	r := runResult{records: total, cpu: cpu}
	if withToolpair {
		r.paired = pairedOutcomes(t, metricsPort)
	}
	p.Stop()
	assert.Equal(t, total, exported(), "records exported")
	return r
}

// TestCollectorCPUPerRecord: collector CPU per record with and without toolpair, per
// deployment and workload, and their ratio (see the package comment for the deployments and
// for the full and the tiny variant). Every run must export every record it was sent, and with
// toolpair every call must be paired (the collector's own outcome metric). The figures end
// with a summary, the gateway first.
func TestCollectorCPUPerRecord(t *testing.T) {
	batches, records, rounds := tinyBatches, tinyRecords, 1
	if os.Getenv("OTELCOL_AGENT_BENCH_E2E") != "" {
		batches, records, rounds = e2eBatches, e2eRecords, e2eRounds
		if s := os.Getenv("OTELCOL_AGENT_BENCH_E2E_ROUNDS"); s != "" {
			n, err := strconv.Atoi(s)
			require.NoError(t, err, "OTELCOL_AGENT_BENCH_E2E_ROUNDS")
			require.Positive(t, n, "OTELCOL_AGENT_BENCH_E2E_ROUNDS")
			rounds = n
		}
	}
	distrotest.Binary(t) // skipped (or failed on CI) before anything starts when it is missing
	var summary []string
	for _, d := range deployments {
		t.Run(d.name, func(t *testing.T) {
			for _, w := range workloads {
				t.Run(w.name, func(t *testing.T) {
					if line := measure(t, d, w, batches, records, rounds); line != "" {
						summary = append(summary, line)
					}
				})
			}
		})
	}
	for _, line := range summary {
		t.Log(line)
	}
}

// measure runs rounds rounds of one run without and one with toolpair (the order alternating
// between rounds) of deployment d on workload w and returns the line of its figures, or ""
// when the runs were too small to measure.
func measure(t *testing.T, d deployment, w workload, batches, records, rounds int) string {
	var cpu [2]float64 // [without, with]
	var ratios []float64
	n := 0
	for round := range rounds {
		var roundCPU [2]float64
		order := []bool{false, true}
		if round%2 == 1 {
			order = []bool{true, false}
		}
		for _, with := range order {
			r := runCollector(t, d, w, with, batches, records)
			if with {
				assert.Equal(t, float64(r.records/benchload.RecordsPerCall), r.paired, "every call paired")
				cpu[1] += r.cpu
				roundCPU[1] = r.cpu
			} else {
				cpu[0] += r.cpu
				roundCPU[0] = r.cpu
				n += r.records
			}
			t.Logf("round %d, toolpair %v: %.2f s CPU for %d records (%.0f ns/record)",
				round+1, with, r.cpu, r.records, r.cpu/float64(r.records)*1e9)
		}
		if roundCPU[0] > 0 {
			ratios = append(ratios, roundCPU[1]/roundCPU[0])
		}
	}
	without, with := cpu[0]/float64(n)*1e9, cpu[1]/float64(n)*1e9
	if without == 0 || with == 0 {
		t.Logf("%s/%s: too little CPU to measure (%d records a run)", d.name, w.name, batches*records)
		return ""
	}
	// A core at 80% busy spends 0.8 s of CPU a second: with / 0.8 ns per record.
	slices.Sort(ratios)
	return fmt.Sprintf("%s/%s: collector CPU per record: without toolpair %.0f ns, with toolpair %.0f ns, ratio %.2f (rounds' median %.2f, from %.2f to %.2f), toolpair adds %.0f ns/record; with toolpair %.0f records/s per core at 80%% CPU (%d batches of %d records, %d rounds)",
		d.name, w.name, without, with, with/without, ratios[len(ratios)/2], ratios[0], ratios[len(ratios)-1], with-without, 0.8e9/with, batches, records, rounds)
}
