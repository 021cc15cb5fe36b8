// Package e2ebench measures what the toolpair processor costs inside the built collector: the
// CPU time of the bin/otelcol-agent process per record, with and without toolpair in the
// pipeline (OTLP/gRPC receiver in, debug exporter with verbosity basic out), on the same
// batches (internal/benchload: Claude Code log events, GenAI chat and execute_tool spans).
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

// The full measurement's volume (OTELCOL_AGENT_BENCH_E2E set).
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
}

var workloads = []workload{
	{"claude_code_logs", func(ctx context.Context, conn *grpc.ClientConn, gen *benchload.Generator, calls int) error {
		_, err := plogotlp.NewGRPCClient(conn).Export(ctx, plogotlp.NewExportRequestFromLogs(gen.ClaudeCodeLogs(calls)))
		return err
	}, "log records"},
	{"genai_spans", func(ctx context.Context, conn *grpc.ClientConn, gen *benchload.Generator, calls int) error {
		_, err := ptraceotlp.NewGRPCClient(conn).Export(ctx, ptraceotlp.NewExportRequestFromTraces(gen.GenAISpans(calls)))
		return err
	}, "spans"},
}

// collectorConfig is the configuration of one run: the OTLP/gRPC receiver on grpcPort, the
// collector's own metrics on metricsPort, and the traces and logs pipelines with toolpair
// (default configuration) or with no processor. The collector's log is not sampled, so the
// debug exporter prints one line for every batch (the default sampling keeps about one in
// 100 after the first 10 of a second) and the test can count what was exported.
func collectorConfig(grpcPort, metricsPort int, withToolpair bool) string {
	processors := "[]"
	if withToolpair {
		processors = "[toolpair]"
	}
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

// runCollector starts the collector, waits until it is ready, sends batches batches of
// records records of w, waits until the debug exporter has printed all of them, and stops
// the collector. The CPU is read just before the first batch and just after the last record
// is exported, so start-up and shutdown are not counted.
func runCollector(t *testing.T, w workload, withToolpair bool, batches, records int) runResult {
	t.Helper()
	grpcPort, metricsPort := distrotest.FreePort(t), distrotest.FreePort(t)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(collectorConfig(grpcPort, metricsPort, withToolpair)), 0o600))
	p := distrotest.Start(t, "otelcol-agent", distrotest.Binary(t), nil, "--config", cfg)
	p.WaitFor(func() bool { return strings.Contains(p.Output(), "Everything is ready") }, "the collector ready")

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
	p.WaitFor(func() bool { return exportedCount(p.Output(), w.exported) >= total }, "every record exported")
	cpu := cpuSeconds(t, p.Pid()) - cpu0
	r := runResult{records: total, cpu: cpu}
	if withToolpair {
		r.paired = pairedOutcomes(t, metricsPort)
	}
	p.Stop()
	assert.Equal(t, total, exportedCount(p.Output(), w.exported), "records exported")
	return r
}

// TestCollectorCPUPerRecord: collector CPU per record with and without toolpair, per
// workload, and their ratio (see the package comment for the full and the tiny variant).
// Every run must export every record it was sent, and with toolpair every call must be
// paired (the collector's own outcome metric).
func TestCollectorCPUPerRecord(t *testing.T) {
	batches, records, rounds := tinyBatches, tinyRecords, 1
	if os.Getenv("OTELCOL_AGENT_BENCH_E2E") != "" {
		batches, records, rounds = e2eBatches, e2eRecords, e2eRounds
	}
	distrotest.Binary(t) // skipped (or failed on CI) before anything starts when it is missing
	for _, w := range workloads {
		t.Run(w.name, func(t *testing.T) {
			var cpu [2]float64 // [without, with]
			n := 0
			for round := range rounds {
				order := []bool{false, true}
				if round%2 == 1 {
					order = []bool{true, false}
				}
				for _, with := range order {
					r := runCollector(t, w, with, batches, records)
					if with {
						assert.Equal(t, float64(r.records/benchload.RecordsPerCall), r.paired, "every call paired")
						cpu[1] += r.cpu
					} else {
						cpu[0] += r.cpu
						n += r.records
					}
					t.Logf("round %d, toolpair %v: %.2f s CPU for %d records (%.0f ns/record)",
						round+1, with, r.cpu, r.records, r.cpu/float64(r.records)*1e9)
				}
			}
			without, with := cpu[0]/float64(n)*1e9, cpu[1]/float64(n)*1e9
			if without == 0 {
				t.Logf("%s: too little CPU to measure (%d records a run)", w.name, batches*records)
				return
			}
			t.Logf("%s: collector CPU per record: without toolpair %.0f ns, with toolpair %.0f ns, ratio %.2f, toolpair adds %.0f ns/record (%d batches of %d records, %d rounds)",
				w.name, without, with, with/without, with-without, batches, records, rounds)
		})
	}
}
