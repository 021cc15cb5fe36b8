package distribution

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
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

// TestRecordAnnouncingManyCallsIsBounded: one chat span announcing 5,000 calls that never
// run, replayed through the built binary's default configuration (its replay instance closes
// calls after a 5 s pairing_timeout). The span passes; at most max_calls_per_record (1024)
// calls are tracked, each closed by one synthetic span; the other 3,976 are counted in
// otelcol_processor_toolpair_malformed with reason too_many_calls (specification section 6).
// (5,000 calls keep the JSON line under the file receiver's 1 MiB line limit.)
func TestRecordAnnouncingManyCallsIsBounded(t *testing.T) {
	const announced, bound = 5_000, 1024
	dir := t.TempDir()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "flood")
	span := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.SetName("chat flood")
	span.SetTraceID(pcommon.TraceID{0xf1})
	span.SetSpanID(pcommon.SpanID{0xf1})
	span.SetStartTimestamp(pcommon.Timestamp(1_900_000_000_000_000_000))
	span.SetEndTimestamp(pcommon.Timestamp(1_900_000_000_010_000_000))
	var msg strings.Builder
	msg.WriteString(`[{"role":"assistant","parts":[`)
	for i := range announced {
		if i > 0 {
			msg.WriteByte(',')
		}
		fmt.Fprintf(&msg, `{"type":"tool_call","id":"call_%05d","name":"run_shell","arguments":{}}`, i)
	}
	msg.WriteString(`]}]`)
	span.Attributes().PutStr("gen_ai.operation.name", "chat")
	span.Attributes().PutStr("gen_ai.output.messages", msg.String())
	b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	replay := filepath.Join(dir, "flood.json")
	require.NoError(t, os.WriteFile(replay, append(b, '\n'), 0o600))

	out := t.TempDir()
	metricsPort := distrotest.FreePort(t)
	c := distrotest.StartCollector(t, "default.yaml",
		[]string{"OTELCOL_AGENT_OUT=" + out, "OTELCOL_AGENT_REPLAY=" + replay, fmt.Sprintf("OTELCOL_AGENT_METRICS_PORT=%d", metricsPort)},
		fmt.Sprintf("--set=receivers::otlp::protocols::grpc::endpoint=127.0.0.1:%d", distrotest.FreePort(t)),
		fmt.Sprintf("--set=receivers::otlp::protocols::http::endpoint=127.0.0.1:%d", distrotest.FreePort(t)),
		"--set=exporters::debug::verbosity=basic")

	tracesFile := filepath.Join(out, "traces.jsonl")
	count := func() (chat, synthetic int) {
		for _, s := range readSpans(t, tracesFile) {
			switch {
			case attr(s, "toolpair.synthetic") == "true":
				synthetic++
			case s.Name() == "chat flood":
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
