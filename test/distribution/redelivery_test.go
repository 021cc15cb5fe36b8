// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package distribution

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/internal/distrotest"
	"github.com/otelcol-agent/otelcol-agent/internal/distrotest/otlptest"
)

// The redelivery tests (TestRedelivery*) run the built binary between an otlptest.Sender,
// which sends every refused batch again as an agent's OTLP exporter does, and an
// otlptest.Sink, the next hop, which the test takes down and brings back up. Pipelines deliver
// at least once: when the exporter after toolpair fails, the otlp receiver answers the sender
// with a retryable error (OTLP/HTTP 503) and the sender sends the same batch again, which
// toolpair has already taken into its state. Such a record delivered again gets what its first
// delivery got and is passed on, never `duplicate` (dropped by default), or its tool's result
// would be lost; what the processor sends on its own (synthetic records, released held
// results) and could not send is kept and sent again by the processor.
//
// Each test runs with each exporterVariant: the otlp_http or the otlp_grpc exporter, with no
// queue and no retries (the exporter's failure is the receiver's answer), or with a queue of
// one request and retries on (a batch refused because the queue is full is the answer).

// redeliveryOutage is how long the sink stays down while a batch is refused.
const redeliveryOutage = 300 * time.Millisecond

// redeliveryArrival bounds the wait for a record the sink should get: what a resent batch
// holds is there as soon as the sender's batch is accepted (with a queue, one export later);
// what the processor sends again on its own comes at its next try (on its ticker, at the
// earliest 100 ms after the refusal, then waits doubling up to 5 s while refusals go on).
const redeliveryArrival = 15 * time.Second

// The metric names the collector's Prometheus endpoint exposes the processor's counters under
// (ScrapeMetrics' Sum adds the _total of a counter).
const (
	mOutcomes      = "otelcol_processor_toolpair_outcomes"
	mUses          = "otelcol_processor_toolpair_uses"
	mUsesRepeated  = "otelcol_processor_toolpair_uses_repeated"
	mResults       = "otelcol_processor_toolpair_results"
	mPending       = "otelcol_processor_toolpair_pending_calls"
	mWaiting       = "otelcol_processor_toolpair_waiting_results"
	mRedeliveries  = "otelcol_processor_toolpair_redeliveries"
	mResent        = "otelcol_processor_toolpair_resent"
	mGivenUp       = "otelcol_processor_toolpair_given_up"
	mUnsent        = "otelcol_processor_toolpair_unsent"
	mSendFailed    = "otelcol_processor_toolpair_send_failed"
	mSynthetic     = "otelcol_processor_toolpair_synthetic_records"
	lblTraces      = "otel_signal=traces"
	lblLogs        = "otel_signal=logs"
	lblPaired      = "toolpair_outcome=paired"
	lblDuplicate   = "toolpair_outcome=duplicate"
	lblInterrupted = "toolpair_outcome=interrupted"
)

// exporterVariant is how the collector under test exports to the sink.
type exporterVariant struct {
	name string
	// grpc: the otlp_grpc exporter, else otlp_http.
	grpc bool
	// queue: a sending queue of one request (block_on_overflow false) with retries on, else
	// neither (sending_queue and retry_on_failure disabled).
	queue bool
}

// exporterVariants are every exporter and queue combination.
var exporterVariants = []exporterVariant{
	{name: "otlp_http", grpc: false, queue: false},
	{name: "otlp_grpc", grpc: true, queue: false},
	{name: "otlp_http_queue", grpc: false, queue: true},
	{name: "otlp_grpc_queue", grpc: true, queue: true},
}

// exporterYAML returns the exporter's ID and its configuration block, exporting to sink.
func (v exporterVariant) exporterYAML(sink *otlptest.Sink) (string, string) {
	var id, endpoint string
	if v.grpc {
		id = "otlp_grpc"
		endpoint = fmt.Sprintf("endpoint: %s\n    tls:\n      insecure: true", sink.GRPCEndpoint())
	} else {
		id = "otlp_http"
		endpoint = "endpoint: " + sink.HTTPEndpoint()
	}
	queue := `sending_queue:
      enabled: false
    retry_on_failure:
      enabled: false`
	if v.queue {
		// One request in the queue, counting the one being exported (and retried): the next
		// batch overflows while it is there, and the overflow's error reaches the receiver.
		queue = `sending_queue:
      enabled: true
      sizer: requests
      queue_size: 1
      num_consumers: 1
      block_on_overflow: false
    retry_on_failure:
      enabled: true
      initial_interval: 50ms
      max_interval: 200ms
      max_elapsed_time: 60s`
	}
	return id, fmt.Sprintf("  %s:\n    %s\n    %s\n", id, endpoint, queue)
}

// redeliveryRun is the collector of one test: otlp receiver (OTLP/HTTP) -> toolpair -> the
// variant's exporter -> the sink, both signals, with its own metrics on a Prometheus endpoint.
type redeliveryRun struct {
	t           *testing.T
	v           exporterVariant
	c           *distrotest.Process
	sink        *otlptest.Sink
	send        *otlptest.Sender
	metricsPort int
}

// redeliveryConfig holds the toolpair settings a test changes; a zero duration keeps the
// default.
type redeliveryConfig struct {
	pairingTimeout, orphanGrace time.Duration
}

// startRedelivery writes the collector configuration, starts the sink and the collector, and
// waits until the collector serves its metrics.
func startRedelivery(t *testing.T, v exporterVariant, rc redeliveryConfig) *redeliveryRun {
	t.Helper()
	r := &redeliveryRun{t: t, v: v, sink: otlptest.NewSink(t), metricsPort: distrotest.FreePort(t)}
	port := distrotest.FreePort(t)
	r.send = otlptest.NewSender(fmt.Sprintf("http://127.0.0.1:%d", port))
	toolpair := "    dialects: [genai, claude_code]\n"
	if rc.pairingTimeout > 0 {
		toolpair += fmt.Sprintf("    pairing_timeout: %s\n", rc.pairingTimeout)
	}
	if rc.orphanGrace > 0 {
		toolpair += fmt.Sprintf("    orphan_grace: %s\n", rc.orphanGrace)
	}
	id, exporter := v.exporterYAML(r.sink)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
processors:
  toolpair:
%sexporters:
%sservice:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [toolpair]
      exporters: [%s]
    logs:
      receivers: [otlp]
      processors: [toolpair]
      exporters: [%s]
  telemetry:
    metrics:
      level: detailed
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: %d
`, port, toolpair, exporter, id, id, r.metricsPort)), 0o600))
	r.c = distrotest.Start(t, "otelcol-agent", distrotest.Binary(t), nil, "--config", cfg)
	r.c.WaitHTTP(fmt.Sprintf("http://127.0.0.1:%d/metrics", r.metricsPort))
	return r
}

// metrics scrapes the collector's own metrics once.
func (r *redeliveryRun) metrics() distrotest.Metrics {
	r.t.Helper()
	return distrotest.ScrapeMetrics(r.t, r.metricsPort)
}

// mustSend sends a batch while the sink is up and requires it accepted.
func (r *redeliveryRun) mustSend(send func() otlptest.Delivery) otlptest.Delivery {
	r.t.Helper()
	d := send()
	require.True(r.t, d.Accepted(), "the batch is accepted: %v", d.Err)
	return d
}

// outage takes the sink down. With a queue, it also fills the queue of each signal's exporter
// with a batch no dialect reads (accepted, then retried against the sink until it is up), so
// that the next batch of either signal overflows it.
func (r *redeliveryRun) outage() {
	r.t.Helper()
	if r.v.queue {
		// What an earlier export still holds frees its slot once the sink has answered:
		// wait for that, so that the filler's is the queue's only request.
		ok := r.c.WaitUntil(10*time.Second, func() bool { return r.metrics().Sum("otelcol_exporter_queue_size") == 0 })
		require.True(r.t, ok, "the exporters' queues empty before the outage")
	}
	r.sink.Down()
	if !r.v.queue {
		return
	}
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "filler")
	s := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	s.SetName("filler")
	s.SetTraceID(pcommon.TraceID{0xff, 0xff})
	s.SetSpanID(pcommon.SpanID{0xff, byte(rand.IntN(256)), byte(rand.IntN(256))})
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "filler")
	rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr("filler")
	for _, d := range []otlptest.Delivery{r.send.SendTraces(td), r.send.SendLogs(ld)} {
		require.True(r.t, d.Accepted(), "the filler is taken into the empty queue: %v", d.Err)
		require.Zero(r.t, d.Refusals, "the filler is taken into the empty queue")
	}
}

// refusedThenResent sends a batch (send) during an outage of redeliveryOutage: it is refused
// at least once, the sink comes back up, and the sender's next try is accepted.
func (r *redeliveryRun) refusedThenResent(send func() otlptest.Delivery) otlptest.Delivery {
	r.t.Helper()
	r.outage()
	done := make(chan otlptest.Delivery, 1)
	go func() { done <- send() }()
	time.Sleep(redeliveryOutage)
	r.sink.Up()
	d := <-done
	require.True(r.t, d.Accepted(), "the batch is accepted once the sink is up: %v", d.Err)
	require.Positive(r.t, d.Refusals, "the batch was refused while the sink was down")
	r.t.Logf("%s: refused %d times (%s), then accepted", r.v.name, d.Refusals, d.LastRefusal)
	return d
}

// awaitRecord waits until the sink holds a record named name (a batch's marker), failing the
// test if it does not come.
func (r *redeliveryRun) awaitRecord(name string) {
	r.t.Helper()
	ok := r.c.WaitUntil(redeliveryArrival, func() bool {
		return len(r.sink.Find(func(rec otlptest.Record) bool { return rec.Name == name })) > 0
	})
	require.True(r.t, ok, "the sink gets %s", name)
}

// requireResults requires that the sink holds exactly n result records of call, from signal,
// each paired with the duration want, and returns them.
func (r *redeliveryRun) requireResults(signal, call string, n int, want int64) []otlptest.Record {
	r.t.Helper()
	var got []otlptest.Record
	for _, rec := range r.sink.Results()[call] {
		if rec.Signal == signal {
			got = append(got, rec)
		}
	}
	require.Len(r.t, got, n, "result records of %s at the sink: %+v", call, got)
	for _, rec := range got {
		assert.Equal(r.t, "paired", rec.Outcome, "%s", call)
		assert.True(r.t, rec.HasDuration, "%s has toolpair.call.duration_ms", call)
		assert.Equal(r.t, want, rec.ElapsedMs, "%s: the elapsed time its first delivery had", call)
	}
	return got
}

// spanCount returns how many spans named name of conversation conv the sink holds.
func (r *redeliveryRun) spanCount(name, conv string) int {
	return len(r.sink.Find(func(rec otlptest.Record) bool {
		return rec.Signal == otlptest.Traces && rec.Name == name && rec.Attributes["gen_ai.conversation.id"] == conv
	}))
}

// sendTraces and sendLogs make the send functions of mustSend and refusedThenResent.
func (r *redeliveryRun) sendTraces(td ptrace.Traces) func() otlptest.Delivery {
	return func() otlptest.Delivery { return r.send.SendTraces(td) }
}

func (r *redeliveryRun) sendLogs(ld plog.Logs) func() otlptest.Delivery {
	return func() otlptest.Delivery { return r.send.SendLogs(ld) }
}

// markSpans appends to td, in a resource of its own, a span no dialect reads, named name: it
// reaches the sink in the same export as the batch's other records, so its arrival shows
// that the batch arrived.
func markSpans(td ptrace.Traces, name string) ptrace.Traces {
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "marker")
	s := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	s.SetName(name)
	s.SetTraceID(pcommon.TraceID{0xee, 0xee})
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	s.SetSpanID(pcommon.SpanID(h.Sum(nil)))
	return td
}

// markLogs appends to ld, in a resource of its own, a log record no dialect reads, whose body
// is name (see markSpans).
func markLogs(ld plog.Logs, name string) plog.Logs {
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "marker")
	rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr(name)
	return ld
}

// requireNoLoss checks the processor's own telemetry at the end of a test: no result
// judged a duplicate unless the test sent one (duplicates), nothing given up, nothing left
// unsent.
func (r *redeliveryRun) requireNoLoss(duplicates int) distrotest.Metrics {
	r.t.Helper()
	var m distrotest.Metrics
	r.c.WaitUntil(redeliveryArrival, func() bool { m = r.metrics(); return m.Sum(mUnsent) == 0 })
	assert.Equal(r.t, float64(duplicates), m.Sum(mOutcomes, lblDuplicate), "results judged duplicate")
	assert.Zero(r.t, m.Sum(mGivenUp), "records given up: %v", m.Samples(mGivenUp))
	assert.Zero(r.t, m.Sum(mUnsent), "records left unsent")
	return m
}

// genaiResult is one execute_tool span of trace, the result of call in conversation conv,
// started 1 ms after the chat span of chatTraces ends and ended 1 ms later (its result time).
func genaiResult(trace byte, conv, call string) ptrace.Traces {
	return chatTraces("agent", conv, trace, nil, []string{call})
}

// TestRedeliveryClaudeCodeLogs: Claude Code's real capture (testdata/claude/normal): the
// tool_decision arrives and leaves; the sink goes down and the batch holding the
// tool_result is refused; the sink comes back up and the sender sends the batch again. The
// sink gets the tool_result once, paired, with the duration it had in the first delivery
// (its time minus the decision's, as if nothing had failed); toolpair judged nothing a
// duplicate and counted each delivery after the first as a redelivery of the logs signal.
// Before the fix, the second copy was a duplicate, dropped: the result never reached the
// next hop.
func TestRedeliveryClaudeCodeLogs(t *testing.T) {
	for _, v := range exporterVariants {
		t.Run(v.name, func(t *testing.T) {
			first, rest, call, duration := stateCapture(t)
			r := startRedelivery(t, v, redeliveryConfig{})
			r.mustSend(r.sendLogs(markLogs(first, "decision-sent")))
			r.awaitRecord("decision-sent")

			d := r.refusedThenResent(r.sendLogs(markLogs(rest, "result-sent")))
			r.awaitRecord("result-sent")
			r.requireResults(otlptest.Logs, call, 1, duration)
			m := r.requireNoLoss(0)
			assert.Equal(t, float64(d.Refusals), m.Sum(mRedeliveries, lblLogs), "one redelivery per resent copy of the tool_result")
			assert.Equal(t, float64(1), m.Sum(mOutcomes, lblPaired))
			r.c.Stop()
		})
	}
}

// TestRedeliveryGenAISpans: a chat span announcing call_1 in gen_ai.output.messages arrives
// and leaves; its execute_tool span is refused while the sink is down and sent again: the
// sink gets the execute_tool span once, paired, 2 ms (its end minus the chat span's end).
func TestRedeliveryGenAISpans(t *testing.T) {
	for _, v := range exporterVariants {
		t.Run(v.name, func(t *testing.T) {
			r := startRedelivery(t, v, redeliveryConfig{})
			r.mustSend(r.sendTraces(markSpans(chatTraces("agent", "conv-b", 0xb1, [][]string{{"call_1"}}, nil), "use-sent")))
			r.awaitRecord("use-sent")

			d := r.refusedThenResent(r.sendTraces(markSpans(genaiResult(0xb1, "conv-b", "call_1"), "result-sent")))
			r.awaitRecord("result-sent")
			r.requireResults(otlptest.Traces, "call_1", 1, 2)
			m := r.requireNoLoss(0)
			assert.Equal(t, float64(d.Refusals), m.Sum(mRedeliveries, lblTraces))
			assert.Zero(t, m.Sum(mOutcomes, lblInterrupted))
			r.c.Stop()
		})
	}
}

// TestRedeliveryUseAndResultInOneBatch: one batch holding both the chat span announcing the
// call and its execute_tool span is refused once (or more) and sent again: the second
// delivery's use is a repeat (ignored), its result gets what the first got: the sink has the
// chat span and the result once each, the result paired.
func TestRedeliveryUseAndResultInOneBatch(t *testing.T) {
	for _, v := range exporterVariants {
		t.Run(v.name, func(t *testing.T) {
			r := startRedelivery(t, v, redeliveryConfig{})
			td := chatTraces("agent", "conv-c", 0xc1, [][]string{{"call_c"}}, []string{"call_c"})
			d := r.refusedThenResent(r.sendTraces(markSpans(td, "batch-sent")))
			r.awaitRecord("batch-sent")
			r.requireResults(otlptest.Traces, "call_c", 1, 2)
			assert.Equal(t, 1, r.spanCount("chat m", "conv-c"), "the chat span once")
			m := r.requireNoLoss(0)
			assert.Equal(t, float64(d.Refusals), m.Sum(mRedeliveries, lblTraces))
			assert.Equal(t, float64(d.Refusals), m.Sum(mUsesRepeated), "each copy after the first repeats the use")
			r.c.Stop()
		})
	}
}

// TestRedeliveryReleasedResult: the execute_tool span comes first and is held (its use is
// missing, so it is removed from its batch and waits up to orphan_grace); then the chat span
// announcing it comes, during an outage. The use releases the held result, which the
// processor sends on its own and whose sending fails too; the sender sends the chat span's
// batch again. Once the sink is up the released result arrives, paired, once, and the chat
// span once. Before the fix, the released result went out inside the refused batch and its
// copy in the resent batch did not exist (the sender's batch holds only the use): lost.
func TestRedeliveryReleasedResult(t *testing.T) {
	for _, v := range exporterVariants {
		t.Run(v.name, func(t *testing.T) {
			r := startRedelivery(t, v, redeliveryConfig{})
			r.mustSend(r.sendTraces(markSpans(genaiResult(0xd1, "conv-d", "call_held"), "result-sent")))
			r.awaitRecord("result-sent")
			require.Empty(t, r.sink.Results()["call_held"], "the result is held for its use")

			r.refusedThenResent(r.sendTraces(markSpans(chatTraces("agent", "conv-d", 0xd1, [][]string{{"call_held"}}, nil), "use-sent")))
			r.awaitRecord("use-sent")
			ok := r.c.WaitUntil(redeliveryArrival, func() bool { return len(r.sink.Results()["call_held"]) > 0 })
			require.True(t, ok, "the released result reaches the sink")
			time.Sleep(200 * time.Millisecond) // nothing more comes
			r.requireResults(otlptest.Traces, "call_held", 1, 2)
			assert.Equal(t, 1, r.spanCount("chat m", "conv-d"), "the chat span once")
			m := r.requireNoLoss(0)
			assert.Positive(t, m.Sum(mResent, lblTraces), "the released result was sent again by the processor")
			r.c.Stop()
		})
	}
}

// TestRedeliveryExpiredWhileDown: a GenAI call (chat span) and a Claude Code call
// (tool_decision) whose results never come expire (pairing_timeout 2s) while the sink is
// down: the sending of their synthetic records fails (counted in send_failed). Once the sink
// is back, the processor sends them again: the sink gets one synthetic execute_tool span and
// one synthetic log record, interrupted, expired. Before the fix they were logged and lost.
func TestRedeliveryExpiredWhileDown(t *testing.T) {
	for _, v := range exporterVariants {
		t.Run(v.name, func(t *testing.T) {
			r := startRedelivery(t, v, redeliveryConfig{pairingTimeout: 2 * time.Second, orphanGrace: 500 * time.Millisecond})
			decision := claudeEvents("sess-e", []claudeCall{{id: "toolu_expire", use: 1_900_000_000_000_000_000}}, nil)
			r.mustSend(r.sendLogs(decision))
			r.mustSend(r.sendTraces(chatTraces("agent", "conv-e", 0xe1, [][]string{{"call_expire"}}, nil)))
			// The uses have left (without a queue the sink took them before the receiver
			// answered; with one, outage waits for the queues to empty): the sink goes down
			// well within pairing_timeout.
			r.outage()
			refused := r.c.WaitUntil(10*time.Second, func() bool { return r.metrics().Sum(mSendFailed) >= 2 })
			require.True(t, refused, "both synthetic records' sending is refused while the sink is down")
			require.Empty(t, r.sink.Synthetic())
			r.sink.Up()

			ok := r.c.WaitUntil(redeliveryArrival, func() bool { return len(r.sink.Synthetic()) >= 2 })
			require.True(t, ok, "the synthetic records reach the sink once it is up: %+v", r.sink.Synthetic())
			time.Sleep(200 * time.Millisecond) // nothing more comes
			byCall := map[string][]otlptest.Record{}
			for _, rec := range r.sink.Synthetic() {
				byCall[rec.CallID] = append(byCall[rec.CallID], rec)
			}
			require.Len(t, byCall["call_expire"], 1)
			span := byCall["call_expire"][0]
			assert.Equal(t, otlptest.Traces, span.Signal)
			assert.Equal(t, "execute_tool run_shell", span.Name)
			assert.Equal(t, "interrupted", span.Outcome)
			assert.Equal(t, "expired", span.Reason)
			var logs []otlptest.Record
			for _, rec := range byCall["toolu_expire"] {
				if rec.Signal == otlptest.Logs {
					logs = append(logs, rec)
				}
			}
			require.Len(t, logs, 1, "one synthetic log record of the Claude Code call")
			assert.Equal(t, "toolpair.tool_call.interrupted", logs[0].Name)
			assert.Equal(t, "expired", logs[0].Reason)
			m := r.requireNoLoss(0)
			assert.GreaterOrEqual(t, m.Sum(mResent), float64(2), "both were sent again by the processor")
			assert.Equal(t, float64(2), m.Sum(mSynthetic), "one synthetic record per call, counted once")
			r.c.Stop()
		})
	}
}

// TestRedeliveryDifferentResultIsDuplicate: the rule is about the same record, not the same
// call. After a result refused and sent again arrived paired, a different second result of
// the same call (another execute_tool span: another span ID and end; another Claude Code
// tool_result: another timestamp) is still a duplicate, dropped by default: it never
// reaches the sink. An exact copy of the first result sent once more (an export retry whose
// first try had reached the sink) is no duplicate: it leaves again, paired, with the same
// duration. Both signals, in one collector.
func TestRedeliveryDifferentResultIsDuplicate(t *testing.T) {
	for _, v := range exporterVariants {
		t.Run(v.name, func(t *testing.T) {
			r := startRedelivery(t, v, redeliveryConfig{})

			// Spans.
			r.mustSend(r.sendTraces(markSpans(chatTraces("agent", "conv-f", 0xf1, [][]string{{"call_f"}}, nil), "use-sent")))
			r.awaitRecord("use-sent")
			dSpans := r.refusedThenResent(r.sendTraces(markSpans(genaiResult(0xf1, "conv-f", "call_f"), "result-sent")))
			r.awaitRecord("result-sent")
			first := r.requireResults(otlptest.Traces, "call_f", 1, 2)[0]

			other := genaiResult(0xf1, "conv-f", "call_f")
			s := other.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
			s.SetSpanID(pcommon.SpanID{0xf1, 0xf1, 0xf1})
			s.SetEndTimestamp(s.EndTimestamp() + 5_000_000)
			dOther := r.mustSend(r.sendTraces(markSpans(other, "other-sent")))
			r.awaitRecord("other-sent")
			r.requireResults(otlptest.Traces, "call_f", 1, 2)

			dCopy := r.mustSend(r.sendTraces(markSpans(genaiResult(0xf1, "conv-f", "call_f"), "copy-sent")))
			r.awaitRecord("copy-sent")
			for _, rec := range r.requireResults(otlptest.Traces, "call_f", 2, 2) {
				assert.Equal(t, first.SpanID, rec.SpanID, "the first result, twice")
			}

			// Logs: Claude Code's capture.
			firstLogs, rest, call, duration := stateCapture(t)
			r.mustSend(r.sendLogs(markLogs(firstLogs, "decision-sent")))
			r.awaitRecord("decision-sent")
			dLogs := r.refusedThenResent(r.sendLogs(markLogs(rest, "tool-result-sent")))
			r.awaitRecord("tool-result-sent")
			r.requireResults(otlptest.Logs, call, 1, duration)

			later := onlyToolResult(t, rest, call)
			lr := later.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
			lr.SetTimestamp(lr.Timestamp() + 5_000_000)
			lr.SetObservedTimestamp(lr.ObservedTimestamp() + 5_000_000)
			dLater := r.mustSend(r.sendLogs(markLogs(later, "later-sent")))
			r.awaitRecord("later-sent")
			r.requireResults(otlptest.Logs, call, 1, duration)

			dLogCopy := r.mustSend(r.sendLogs(markLogs(onlyToolResult(t, rest, call), "log-copy-sent")))
			r.awaitRecord("log-copy-sent")
			r.requireResults(otlptest.Logs, call, 2, duration)

			// Delivered again: every copy of a batch after its first (with a queue, a batch
			// sent while the sink is up can still be refused, the queue not yet free), and
			// the exact copy. A resent copy of the different result is a copy of a duplicate:
			// dropped again, and counted as delivered again too.
			m := r.requireNoLoss(2)
			assert.Equal(t, float64(dSpans.Refusals+dOther.Refusals+dCopy.Refusals+1), m.Sum(mRedeliveries, lblTraces), "span results delivered again")
			assert.Equal(t, float64(dLogs.Refusals+dLater.Refusals+dLogCopy.Refusals+1), m.Sum(mRedeliveries, lblLogs), "log results delivered again")
			assert.Equal(t, float64(2), m.Sum(mOutcomes, lblPaired))
			r.c.Stop()
		})
	}
}

// onlyToolResult returns a copy of ld holding only the tool_result event of call, with its
// resource and scope.
func onlyToolResult(t *testing.T, ld plog.Logs, call string) plog.Logs {
	t.Helper()
	out := plog.NewLogs()
	ld.CopyTo(out)
	n := 0
	out.ResourceLogs().RemoveIf(func(rl plog.ResourceLogs) bool {
		rl.ScopeLogs().RemoveIf(func(sl plog.ScopeLogs) bool {
			sl.LogRecords().RemoveIf(func(lr plog.LogRecord) bool {
				ev, _ := lr.Attributes().Get("event.name")
				id, _ := lr.Attributes().Get("tool_use_id")
				keep := ev.Str() == "tool_result" && id.Str() == call
				if keep {
					n++
				}
				return !keep
			})
			return sl.LogRecords().Len() == 0
		})
		return rl.ScopeLogs().Len() == 0
	})
	require.Equal(t, 1, n, "the capture has one tool_result of %s", call)
	return out
}

// claudeCall is one Claude Code call of claudeEvents: its ID, its tool_decision's time and
// its tool_result's.
type claudeCall struct {
	id          string
	use, result pcommon.Timestamp
}

// claudeEvents returns one batch of Claude Code log events of session, in the shapes of the
// captures (testdata/claude): a tool_decision (accept) for each call of uses, at its use
// time, and a tool_result (success, duration_ms "1") for each call of results, at its result
// time. toolpair measures such a result from its decision: result minus use.
func claudeEvents(session string, uses, results []claudeCall) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "claude-code")
	rl.Resource().Attributes().PutStr("service.version", "2.1.330")
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("com.anthropic.claude_code.events")
	sl.Scope().SetVersion("2.1.330")
	event := func(name, id string, at pcommon.Timestamp) pcommon.Map {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(at)
		lr.SetObservedTimestamp(at)
		lr.Body().SetStr("claude_code." + name)
		a := lr.Attributes()
		a.PutStr("session.id", session)
		a.PutStr("event.name", name)
		a.PutStr("event.timestamp", at.AsTime().UTC().Format("2006-01-02T15:04:05.000Z"))
		a.PutStr("tool_name", "Bash")
		a.PutStr("tool_use_id", id)
		return a
	}
	for _, c := range uses {
		a := event("tool_decision", c.id, c.use)
		a.PutStr("decision", "accept")
		a.PutStr("source", "config")
	}
	for _, c := range results {
		a := event("tool_result", c.id, c.result)
		a.PutStr("success", "true")
		a.PutStr("duration_ms", "1")
	}
	return ld
}

// The load of TestRedeliveryThroughOutages: per signal, outageBlocks blocks of outageBlock
// calls, each block a conversation (or session) of its own.
const (
	outageBlocks = 50
	outageBlock  = 100
)

// outageDrain bounds the wait, once the senders are done and the sink is up for good, for
// the results still to come.
const outageDrain = 20 * time.Second

// outagePace is the wait of each sender of TestRedeliveryThroughOutages between batches.
const outagePace = 20 * time.Millisecond

// outageBase is the record time of the first block; each block starts 10 s after the one
// before.
const outageBase = pcommon.Timestamp(1_900_000_000_000_000_000)

// outageDuration is the duration toolpair gives call k of a block: 2 to 51 ms.
func outageDuration(k int) int64 { return int64(k%50 + 2) }

// outageLogBatch returns batch j of the logs load: the tool_decision events of block j (none
// for the last batch) and the tool_result events of block j-1 (none for the first). Each
// result arrives one batch after its use, and each batch mixes uses and results.
func outageLogBatch(j int) (ld plog.Logs, uses, results int) {
	block := func(b int) []claudeCall {
		calls := make([]claudeCall, outageBlock)
		for k := range calls {
			use := outageBase + pcommon.Timestamp(b)*10_000_000_000 + pcommon.Timestamp(k)*1_000_000
			calls[k] = claudeCall{id: fmt.Sprintf("toolu_g_%02d_%03d", b, k), use: use, result: use + pcommon.Timestamp(outageDuration(k))*1_000_000}
		}
		return calls
	}
	ld = plog.NewLogs()
	if j < outageBlocks {
		claudeEvents(fmt.Sprintf("sess-g-%02d", j), block(j), nil).ResourceLogs().MoveAndAppendTo(ld.ResourceLogs())
		uses = outageBlock
	}
	if j > 0 {
		claudeEvents(fmt.Sprintf("sess-g-%02d", j-1), nil, block(j-1)).ResourceLogs().MoveAndAppendTo(ld.ResourceLogs())
		results = outageBlock
	}
	return ld, uses, results
}

// outageSpanBatch returns batch j of the traces load: the execute_tool spans of block j
// (none for the last batch), which come before their use and are held, and the chat span
// announcing block j-1's calls (none for the first), which releases them. The chat span of
// block b ends 1 ms after it starts (the use time); result k of it starts 1 ms later and
// lasts outageDuration(k)-1 ms, so toolpair gives it outageDuration(k).
func outageSpanBatch(j int) (td ptrace.Traces, uses, results int) {
	td = ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "agent-g")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	chatStart := func(b int) pcommon.Timestamp { return outageBase + pcommon.Timestamp(b)*10_000_000_000 }
	if j < outageBlocks {
		for k := range outageBlock {
			s := spans.AppendEmpty()
			s.SetName("execute_tool run_shell")
			s.SetTraceID(pcommon.TraceID{0x9, byte(j)})
			s.SetSpanID(pcommon.SpanID{0xe, byte(j), byte(k)})
			s.SetParentSpanID(pcommon.SpanID{0xc, byte(j)})
			s.SetStartTimestamp(chatStart(j) + 2_000_000)
			s.SetEndTimestamp(chatStart(j) + 1_000_000 + pcommon.Timestamp(outageDuration(k))*1_000_000)
			s.Attributes().PutStr("gen_ai.operation.name", "execute_tool")
			s.Attributes().PutStr("gen_ai.tool.name", "run_shell")
			s.Attributes().PutStr("gen_ai.tool.call.id", fmt.Sprintf("call_g_%02d_%03d", j, k))
			s.Attributes().PutStr("gen_ai.conversation.id", fmt.Sprintf("conv-g-%02d", j))
		}
		results = outageBlock
	}
	if j > 0 {
		b := j - 1
		s := spans.AppendEmpty()
		s.SetName("chat m")
		s.SetTraceID(pcommon.TraceID{0x9, byte(b)})
		s.SetSpanID(pcommon.SpanID{0xc, byte(b)})
		s.SetStartTimestamp(chatStart(b))
		s.SetEndTimestamp(chatStart(b) + 1_000_000)
		msg := `[{"role":"assistant","parts":[`
		for k := range outageBlock {
			if k > 0 {
				msg += ","
			}
			msg += fmt.Sprintf(`{"type":"tool_call","id":"call_g_%02d_%03d","name":"run_shell","arguments":{}}`, b, k)
		}
		s.Attributes().PutStr("gen_ai.operation.name", "chat")
		s.Attributes().PutStr("gen_ai.conversation.id", fmt.Sprintf("conv-g-%02d", b))
		s.Attributes().PutStr("gen_ai.output.messages", msg+`]}]`)
		uses = outageBlock
	}
	return td, uses, results
}

// outageVariants are the variants TestRedeliveryThroughOutages runs: both exporters and both
// queue settings in two runs, to stay within seconds.
var outageVariants = []exporterVariant{exporterVariants[0], exporterVariants[3]}

// TestRedeliveryThroughOutages: 10,000 calls, 5,000 as Claude Code log events (each result
// one batch after its use) and 5,000 as GenAI spans (each result one batch before its use,
// so held and released), in batches of 100 uses and 100 results, sent by two retrying
// senders while the sink goes down and up every 200-500 ms. Every result arrives exactly
// once, paired, with its duration, within outageDrain of the sink's last outage (the
// processor's tries are at most 5 s apart); nothing is duplicate, interrupted, orphan, pending,
// waiting, unsent or given up. The processor's counters balance (specification section 7:
// uses = paired + interrupted + rejected + pending; results = paired + aborted + orphan +
// duplicate + standalone + waiting) with 10,000 uses and results, every copy after the first
// of a batch counted in the redeliveries of its signal (one per result it holds) and in the
// repeated uses (one per use it holds), and what the processor had to send again counted.
func TestRedeliveryThroughOutages(t *testing.T) {
	for _, v := range outageVariants {
		t.Run(v.name, func(t *testing.T) {
			r := startRedelivery(t, v, redeliveryConfig{})
			// A first batch, sent until the receiver listens (its tries unanswered until then),
			// before the outages begin.
			r.mustSend(r.sendLogs(markLogs(plog.NewLogs(), "started")))

			// The outages: down at once, then up and down again every 200-500 ms until both
			// senders are done.
			start := time.Now()
			stop := make(chan struct{})
			outagesDone := make(chan int)
			go func() {
				rng := rand.New(rand.NewPCG(uint64(start.UnixNano()), 7))
				n := 0
				defer func() { r.sink.Up(); outagesDone <- n }()
				for {
					r.sink.Down()
					n++
					select {
					case <-stop:
						return
					case <-time.After(time.Duration(200+rng.IntN(300)) * time.Millisecond):
					}
					r.sink.Up()
					select {
					case <-stop:
						return
					case <-time.After(time.Duration(200+rng.IntN(300)) * time.Millisecond):
					}
				}
			}()

			// expected[signal] is {redeliveries, repeated uses}: for each batch, its refusals
			// times the results (the uses) it holds.
			var mu sync.Mutex
			expected := map[string][2]int{}
			var failures []string
			var wg sync.WaitGroup
			for _, signal := range []string{otlptest.Logs, otlptest.Traces} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for j := 0; j <= outageBlocks; j++ {
						var d otlptest.Delivery
						var uses, results int
						if signal == otlptest.Logs {
							var ld plog.Logs
							ld, uses, results = outageLogBatch(j)
							d = r.send.SendLogs(ld)
						} else {
							var td ptrace.Traces
							td, uses, results = outageSpanBatch(j)
							d = r.send.SendTraces(td)
						}
						mu.Lock()
						e := expected[signal]
						e[0] += d.Refusals * results
						e[1] += d.Refusals * uses
						expected[signal] = e
						if !d.Accepted() {
							failures = append(failures, fmt.Sprintf("%s batch %d: %v", signal, j, d.Err))
						}
						mu.Unlock()
						// An agent's pace rather than a flood: the run spans several outages.
						time.Sleep(outagePace)
					}
				}()
			}
			wg.Wait()
			close(stop)
			outages := <-outagesDone
			sent := time.Now()
			require.Empty(t, failures, "every batch accepted")
			totals := r.send.Totals()
			t.Logf("%s: %d outages; %d tries, %d refused (%v; last: %s) in %s", v.name, outages, totals.Tries, totals.Refusals, totals.Statuses, totals.LastRefusal, sent.Sub(start).Round(time.Millisecond))
			require.GreaterOrEqual(t, outages, 3, "a sequence of outages")
			require.Positive(t, totals.Refusals, "the outages refused batches")

			const want = 2 * outageBlocks * outageBlock
			results := func() int {
				return len(r.sink.Find(func(rec otlptest.Record) bool { return rec.IsResult() }))
			}
			// The sink is up for good: a queued export goes out at its exporter's next retry
			// (at most 200 ms), and what the processor holds at its next try, at most 5 s
			// after its last refusal (the waits double up to 5 s while refusals go on), on a
			// tick (every second with the default orphan_grace). With a queue of one request
			// a try sends one delivery at most, the next one overflowing the queue while the
			// first is exported, so the processor's deliveries go out one per try.
			r.c.WaitUntil(outageDrain, func() bool { return results() >= want })
			t.Logf("%s: %d of %d results at the sink %s after the senders were done", v.name, results(), want, time.Since(sent).Round(time.Millisecond))

			byCall := r.sink.Results()
			var wrong []string
			for b := range outageBlocks {
				for k := range outageBlock {
					for _, call := range []string{fmt.Sprintf("toolu_g_%02d_%03d", b, k), fmt.Sprintf("call_g_%02d_%03d", b, k)} {
						got := byCall[call]
						if len(got) != 1 || got[0].Outcome != "paired" || got[0].ElapsedMs != outageDuration(k) {
							wrong = append(wrong, fmt.Sprintf("%s: %+v", call, got))
						}
					}
				}
			}
			if len(wrong) > 0 {
				t.Errorf("%d of %d calls without exactly one paired result of the right duration; the first: %v", len(wrong), want, wrong[:min(5, len(wrong))])
			}
			assert.Empty(t, r.sink.Synthetic(), "no synthetic record")

			m := r.requireNoLoss(0)
			uses, res := m.Sum(mUses), m.Sum(mResults)
			paired, interrupted := m.Sum(mOutcomes, lblPaired), m.Sum(mOutcomes, lblInterrupted)
			rejected := m.Sum(mOutcomes, "toolpair_outcome=rejected")
			aborted := m.Sum(mOutcomes, lblInterrupted, "toolpair_interrupt_reason=aborted")
			orphan, standalone := m.Sum(mOutcomes, "toolpair_outcome=orphan"), m.Sum(mOutcomes, "toolpair_outcome=standalone")
			duplicate := m.Sum(mOutcomes, lblDuplicate)
			pending, waiting := m.Sum(mPending), m.Sum(mWaiting)
			assert.Equal(t, float64(want), uses, "uses")
			assert.Equal(t, float64(want), res, "results (first deliveries only)")
			assert.Equal(t, float64(want), paired, "paired")
			assert.Zero(t, interrupted+orphan+standalone+duplicate+pending+waiting, "interrupted %v orphan %v standalone %v duplicate %v pending %v waiting %v", interrupted, orphan, standalone, duplicate, pending, waiting)
			assert.Equal(t, uses, paired+interrupted+rejected+pending, "uses = paired + interrupted + rejected + pending")
			assert.Equal(t, res, paired+aborted+orphan+duplicate+standalone+waiting, "results = paired + aborted + orphan + duplicate + standalone + waiting")
			assert.Equal(t, float64(expected[otlptest.Logs][0]), m.Sum(mRedeliveries, lblLogs), "log results delivered again")
			assert.Equal(t, float64(expected[otlptest.Traces][0]), m.Sum(mRedeliveries, lblTraces), "span results delivered again")
			assert.Equal(t, float64(expected[otlptest.Logs][1]+expected[otlptest.Traces][1]), m.Sum(mUsesRepeated), "uses delivered again")
			resent, failed := m.Sum(mResent), m.Sum(mSendFailed)
			assert.LessOrEqual(t, resent, failed, "each record sent again was refused first")
			if failed > 0 {
				assert.Positive(t, resent, "what the processor could not send, it sent again")
			}
			t.Logf("%s: redeliveries logs %v traces %v, repeated uses %v, send_failed %v, resent %v, given up %v, unsent %v", v.name,
				m.Sum(mRedeliveries, lblLogs), m.Sum(mRedeliveries, lblTraces), m.Sum(mUsesRepeated), failed, resent, m.Sum(mGivenUp), m.Sum(mUnsent))
			r.c.Stop()
		})
	}
}
