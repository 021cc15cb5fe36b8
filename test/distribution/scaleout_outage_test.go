// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package distribution

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
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

// TestScaleOutNextHopOutage runs examples/scale-out with the built binary, two fronts
// (front.yaml as shipped, its endpoints from the environment) and two backs (back.yaml with
// hopBackOverlay: the back collectors export by OTLP/gRPC to an otlptest.Sink, through the
// exporter's own small queue with batching and retries instead of the batch processor), and
// takes the sink down twice in the middle of the load, each time for longer than the backs'
// queues absorb. The outage of the backs' next hop then reaches the fronts: a back's queue
// fills, its receiver refuses (gRPC UNAVAILABLE), and the otlp exporter inside each front's
// load_balancing exporter sends the refused batches into the backs again (with its default
// retries: after 5 s ±50%, then 1.5 times longer). Every result record delivered again gets what
// its first delivery got (specification section 2, "Delivered again"): the sink gets every
// call's result, paired, with its duration, and never a duplicate; exact copies of one record
// may come more than once (a front that refused the sender gets the whole batch again, with
// what it had already routed to the other back), so the results are counted by call and by
// distinct record. The backs' own metrics show the
// outage reached them as redeliveries, that their receivers refused, that no result was judged
// a duplicate and that every call was paired once across the two backs.
//
// The load: hopBlocks blocks of hopBlock calls per signal, each block a session (a
// conversation) of its own so that both backs get work. Claude Code log events (tool_decision,
// then tool_result one batch later) and GenAI spans (a chat span announcing the block's calls
// in gen_ai.output.messages, then the execute_tool spans one batch later). Batch j holds the
// uses of block j and the results of block j-1 and goes to front j%2, so a call's use and its
// result come through different fronts and are refused and retried apart. A back refuses after
// its toolpair took the batch in (the exporter's queue is after it), so a refused use is known
// from its first delivery on, and its result pairs whichever retry brings either; a result
// that reached a back before its use would be held for it, within orphan_grace (30 s).
//
// On the binary before the redelivery rule, a result delivered again is judged afresh, a
// duplicate, dropped: the results whose first delivery was refused never reach the sink.
func TestScaleOutNextHopOutage(t *testing.T) {
	began := time.Now()
	bin := distrotest.Binary(t)
	tmp := t.TempDir()
	sink := otlptest.NewSink(t)

	overlay := filepath.Join(tmp, "back-overlay.yaml")
	require.NoError(t, os.WriteFile(overlay, []byte(fmt.Sprintf(hopBackOverlay, sink.GRPCEndpoint())), 0o600))

	// The back collectors, then the fronts, each answering on OTLP/HTTP before the next tier
	// starts: a front's first export to a back that does not listen yet is retried only
	// seconds later.
	var backs, fronts [2]hopNode
	for i := range backs {
		b := &backs[i]
		b.name, b.grpc, b.http, b.metrics = fmt.Sprintf("back-%d", i+1), hopAddr(t), hopAddr(t), distrotest.FreePort(t)
		state := filepath.Join(tmp, "state-"+b.name)
		b.p = distrotest.Start(t, b.name, bin, []string{
			"OTELCOL_AGENT_GRPC=" + b.grpc, "OTELCOL_AGENT_HTTP=" + b.http,
			"OTELCOL_AGENT_STATE=" + state, "OTELCOL_AGENT_OUT=" + filepath.Join(tmp, "out-"+b.name),
			fmt.Sprintf("OTELCOL_AGENT_METRICS_PORT=%d", b.metrics),
		}, "--config", scaleConfig(t, "back.yaml"), "--config", overlay)
	}
	for i := range backs {
		backs[i].waitReady()
	}
	for i := range fronts {
		f := &fronts[i]
		f.name, f.grpc, f.http, f.metrics = fmt.Sprintf("front-%d", i+1), hopAddr(t), hopAddr(t), distrotest.FreePort(t)
		f.p = distrotest.Start(t, f.name, bin, []string{
			"OTELCOL_AGENT_GRPC=" + f.grpc, "OTELCOL_AGENT_HTTP=" + f.http,
			"OTELCOL_AGENT_BACKENDS_1=" + backs[0].grpc, "OTELCOL_AGENT_BACKENDS_2=" + backs[1].grpc,
			fmt.Sprintf("OTELCOL_AGENT_METRICS_PORT=%d", f.metrics),
		}, "--config", scaleConfig(t, "front.yaml"))
		f.send = otlptest.NewSender("http://" + f.http)
	}
	for i := range fronts {
		fronts[i].waitReady()
	}

	// Warm-up: log records of 32 sessions (no tool record) through each front, until the sink
	// has them all: every front's exporter has connected to both backs (a session per back is
	// all but certain among 32), and the whole path works, before the sink first goes down.
	for i := range fronts {
		ld := plog.NewLogs()
		for n := range 32 {
			rl := ld.ResourceLogs().AppendEmpty()
			rl.Resource().Attributes().PutStr("service.name", "warm-up")
			rl.Resource().Attributes().PutStr("session.id", fmt.Sprintf("hop-warm-up-%d-%d", i, n))
			lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
			lr.Body().SetStr("hop-warm-up")
		}
		d := fronts[i].send.SendLogs(ld)
		require.True(t, d.Accepted(), "warm-up through %s: %v", fronts[i].name, d.Err)
	}
	warm := func() int { return len(sink.Find(func(r otlptest.Record) bool { return r.Name == "hop-warm-up" })) }
	require.True(t, backs[0].p.WaitUntil(30*time.Second, func() bool { return warm() >= 64 }), "the warm-up reaches the sink: %d of 64", warm())
	started := time.Now()
	t.Logf("collectors started and warmed up in %s", started.Sub(began).Round(time.Millisecond))

	// The outages: the sink goes down hopOutageAt[i] after the load begins, for hopOutage each.
	outagesDone := make(chan []time.Duration, 1)
	go func() {
		var downAt []time.Duration
		for _, at := range hopOutageAt {
			time.Sleep(time.Until(started.Add(at)))
			sink.Down()
			downAt = append(downAt, time.Since(started))
			time.Sleep(hopOutage)
			sink.Up()
		}
		outagesDone <- downAt
	}()

	// How full the backs' exporter queues got and how many results they held for their uses,
	// sampled while the load is sent and until the results are in (for the log).
	var peak [2][2]float64 // per back: records in its exporters' queues, results waiting
	sample := func() {
		for i := range backs {
			m := distrotest.ScrapeMetrics(t, backs[i].metrics)
			peak[i][0] = max(peak[i][0], m.Sum("otelcol_exporter_queue_size"))
			peak[i][1] = max(peak[i][1], m.Sum(mWaiting))
		}
	}

	// The load, both signals at once, batch j through front j%2.
	var (
		mu       sync.Mutex
		failures []string
		wg       sync.WaitGroup
	)
	for _, signal := range []string{otlptest.Logs, otlptest.Traces} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j <= hopBlocks; j++ {
				next := started.Add(time.Duration(j) * hopPace)
				time.Sleep(time.Until(next))
				f := &fronts[j%2]
				var d otlptest.Delivery
				if signal == otlptest.Logs {
					d = f.send.SendLogs(hopLogBatch(j))
				} else {
					d = f.send.SendTraces(hopSpanBatch(j))
				}
				if !d.Accepted() {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("%s batch %d through %s: %v", signal, j, f.name, d.Err))
					mu.Unlock()
				}
			}
		}()
	}
	loaded := make(chan struct{})
	go func() { wg.Wait(); close(loaded) }()
	for sending := true; sending; {
		select {
		case <-loaded:
			sending = false
		case <-time.After(200 * time.Millisecond):
			sample()
		}
	}
	sent := time.Now()
	downAt := <-outagesDone
	upForGood := time.Now()
	require.Empty(t, failures, "every batch accepted by the fronts")
	for _, f := range fronts {
		tot := f.send.Totals()
		t.Logf("sender to %s: %d tries, %d refused (%v), %d unanswered", f.name, tot.Tries, tot.Refusals, tot.Statuses, tot.Unanswered)
	}
	t.Logf("load sent in %s; the sink went down at %v for %s each", sent.Sub(started).Round(time.Millisecond), downAt, hopOutage)
	require.Len(t, downAt, len(hopOutageAt))
	require.Less(t, downAt[len(downAt)-1]+hopOutage, sent.Sub(started), "the last outage ended before the load did: every outage was mid-stream")

	// Every call's result at the sink: the fronts send what the backs refused again at their
	// exporters' next retries (5 s ±50%, then 7.5 s ±50%, ...).
	want := 2 * hopBlocks * hopBlock
	arrived := func() int {
		calls := map[string]bool{}
		for _, r := range sink.Find(func(r otlptest.Record) bool { return r.IsResult() }) {
			calls[r.CallID] = true
		}
		return len(calls)
	}
	backs[0].p.WaitUntil(hopDrain, func() bool { sample(); return arrived() >= want })
	t.Logf("%d of %d calls' results at the sink %s after the sink was up for good", arrived(), want, time.Since(upForGood).Round(time.Millisecond))
	for i, b := range backs {
		t.Logf("%s: its two exporters' queues held at most %v records together (200 each), toolpair held at most %v results for their uses", b.name, peak[i][0], peak[i][1])
	}

	// What the backs hold is sent (nothing unsent, every first delivery of a result counted)
	// before their metrics are read.
	var ms [2]distrotest.Metrics
	backs[0].p.WaitUntil(hopSettle, func() bool {
		results := 0.0
		for i := range backs {
			ms[i] = distrotest.ScrapeMetrics(t, backs[i].metrics)
			results += ms[i].Sum(mResults)
			if ms[i].Sum(mUnsent) > 0 || ms[i].Sum(mWaiting) > 0 {
				return false
			}
		}
		return results >= float64(want)
	})

	// The sink: each call's result, every copy paired with its duration, one distinct record.
	byCall := sink.Results()
	var wrong []string
	copies, copied := 0, 0
	for b := range hopBlocks {
		for k := range hopBlock {
			for _, call := range []string{hopLogCall(b, k), hopSpanCall(b, k)} {
				got := byCall[call]
				distinct := map[string]bool{}
				ok := len(got) > 0
				for _, r := range got {
					distinct[fmt.Sprintf("%s|%s|%s|%d", r.Signal, r.TraceID, r.SpanID, r.Time)] = true
					ok = ok && r.Outcome == "paired" && r.HasDuration && r.ElapsedMs == hopDuration(k)
				}
				if !ok || len(distinct) != 1 {
					wrong = append(wrong, fmt.Sprintf("%s (want paired, %d ms): %d records, %d distinct: %s", call, hopDuration(k), len(got), len(distinct), hopDescribe(got)))
				}
				if len(got) > 1 {
					copied++
					copies += len(got) - 1
				}
			}
		}
	}
	if len(wrong) > 0 {
		t.Errorf("%d of %d calls without exactly one distinct paired result of the right duration at the sink; the first: %v", len(wrong), want, wrong[:min(5, len(wrong))])
	}
	t.Logf("%d calls' results came more than once (%d exact copies in all)", copied, copies)
	var notPaired []string
	for _, r := range sink.Records() {
		if r.Outcome != "" && r.Outcome != "paired" || r.Synthetic {
			notPaired = append(notPaired, fmt.Sprintf("%s %s %s", r.Signal, r.CallID, r.Outcome))
		}
	}
	assert.Empty(t, notPaired[:min(5, len(notPaired))], "records with an outcome other than paired, or synthetic, at the sink (%d)", len(notPaired))

	// The backs: the outage reached them as redeliveries, their receivers refused, no result
	// was a duplicate, and every call was paired once across the two.
	var redeliveries, redeliveredLogs, redeliveredSpans, refused, paired, uses, results float64
	for i, m := range ms {
		b := backs[i]
		red, ref := m.Sum(mRedeliveries), m.Sum("otelcol_receiver_refused_log_records")+m.Sum("otelcol_receiver_refused_spans")
		redeliveries += red
		redeliveredLogs += m.Sum(mRedeliveries, lblLogs)
		redeliveredSpans += m.Sum(mRedeliveries, lblTraces)
		refused += ref
		paired += m.Sum(mOutcomes, lblPaired)
		uses += m.Sum(mUses)
		results += m.Sum(mResults)
		t.Logf("%s: paired %v, redeliveries logs %v traces %v, repeated uses %v, receiver refused %v log records %v spans, exporter send_failed %v log records %v spans, toolpair send_failed %v resent %v given up %v unsent %v",
			b.name, m.Sum(mOutcomes, lblPaired), m.Sum(mRedeliveries, lblLogs), m.Sum(mRedeliveries, lblTraces), m.Sum(mUsesRepeated),
			m.Sum("otelcol_receiver_refused_log_records"), m.Sum("otelcol_receiver_refused_spans"),
			m.Sum("otelcol_exporter_send_failed_log_records"), m.Sum("otelcol_exporter_send_failed_spans"),
			m.Sum(mSendFailed), m.Sum(mResent), m.Sum(mGivenUp), m.Sum(mUnsent))
		assert.Positive(t, m.Sum(mOutcomes, lblPaired), "%s paired calls: both backs got work", b.name)
		assert.Zero(t, m.Sum(mOutcomes, lblDuplicate), "%s: results judged duplicate", b.name)
		for _, o := range []string{"orphan", "standalone", "interrupted", "rejected"} {
			assert.Zero(t, m.Sum(mOutcomes, "toolpair_outcome="+o), "%s: %s outcomes", b.name, o)
		}
		assert.Zero(t, m.Sum(mGivenUp), "%s: records given up", b.name)
		assert.Zero(t, m.Sum(mUnsent), "%s: records left unsent", b.name)
		assert.Zero(t, m.Sum(mPending), "%s: calls left pending", b.name)
	}
	assert.Positive(t, refused, "the backs' receivers refused while their queues were full: the outage lasted longer than they absorb")
	assert.Positive(t, redeliveries, "results delivered again into the backs by the fronts' exporters")
	assert.Positive(t, redeliveredLogs, "Claude Code tool_result events delivered again")
	assert.Positive(t, redeliveredSpans, "execute_tool spans delivered again")
	assert.Equal(t, float64(want), paired, "every call paired once across the backs")
	assert.Equal(t, float64(want), uses, "uses counted once across the backs")
	assert.Equal(t, float64(want), results, "results counted once (first deliveries) across the backs")

	for _, f := range fronts {
		m := distrotest.ScrapeMetrics(t, f.metrics)
		t.Logf("%s: load_balancing sent %v log records %v spans, send_failed %v log records %v spans; backend outcomes success %v failure %v",
			f.name, m.Sum("otelcol_exporter_sent_log_records"), m.Sum("otelcol_exporter_sent_spans"),
			m.Sum("otelcol_exporter_send_failed_log_records"), m.Sum("otelcol_exporter_send_failed_spans"),
			m.Sum("otelcol_loadbalancer_backend_outcome", "success=true"), m.Sum("otelcol_loadbalancer_backend_outcome", "success=false"))
	}
	t.Logf("took %s", time.Since(began).Round(time.Millisecond))
}

// The load of TestScaleOutNextHopOutage: per signal, hopBlocks blocks of hopBlock calls, each
// block a session (a conversation) of its own; a batch every hopPace per signal.
const (
	hopBlocks = 40
	hopBlock  = 50
	hopPace   = 250 * time.Millisecond
)

// hopOutage is how long each outage of the sink lasts, hopOutageAt when each begins after the
// load does (it lasts hopBlocks+1 paces, about 10 s). A back's queue (hopBackOverlay: 200
// records per signal) absorbs about a second of the load routed to it.
const hopOutage = 3 * time.Second

var hopOutageAt = []time.Duration{1500 * time.Millisecond, 6 * time.Second}

// hopDrain bounds the wait, once the sink is up for good, for every call's result: a batch a
// back refused comes again at its front's exporter's next retry, 2.5 to 7.5 s after the
// refusal, then 3.75 to 11.25 s after that one when it was refused again.
const hopDrain = 35 * time.Second

// hopSettle bounds the wait, once the results are at the sink, for the backs' metrics to show
// nothing unsent or waiting.
const hopSettle = 10 * time.Second

// hopBackOverlay (a format: the sink's OTLP/gRPC endpoint) replaces back.yaml's batch processor
// and file exporters by an OTLP/gRPC exporter to the sink that batches in its own queue: a
// queue of 200 records per signal (at least the largest request a back gets, a front's batch
// for it: up to 100 records), not blocking when full, so that the receiver refuses (gRPC
// UNAVAILABLE) the batches that do not fit; batches of 50 to 100 records, flushed after 100ms,
// one at a time; retried every 100-500ms while the sink is down, without end.
const hopBackOverlay = `exporters:
  otlp_grpc/sink:
    endpoint: %s
    tls:
      insecure: true
    sending_queue:
      enabled: true
      sizer: items
      queue_size: 200
      num_consumers: 1
      block_on_overflow: false
      batch:
        flush_timeout: 100ms
        min_size: 50
        max_size: 100
    retry_on_failure:
      enabled: true
      initial_interval: 100ms
      max_interval: 500ms
      max_elapsed_time: 0s
service:
  pipelines:
    traces:
      processors: [memory_limiter, toolpair]
      exporters: [otlp_grpc/sink]
    logs:
      processors: [memory_limiter, toolpair]
      exporters: [otlp_grpc/sink]
`

// hopNode is one collector of TestScaleOutNextHopOutage: its addresses, its metrics port and,
// for a front, the sender that feeds it.
type hopNode struct {
	name, grpc, http string
	metrics          int
	p                *distrotest.Process
	send             *otlptest.Sender
}

// waitReady waits until the node's OTLP/HTTP receiver takes a request.
func (n *hopNode) waitReady() {
	url := "http://" + n.http + "/v1/logs"
	n.p.WaitFor(func() bool { return distrotest.PostOTLP(url, []byte(`{}`)) }, n.name+"'s OTLP/HTTP receiver")
}

// hopAddr is a loopback address on a port FreePort reserved.
func hopAddr(t *testing.T) string { return fmt.Sprintf("127.0.0.1:%d", distrotest.FreePort(t)) }

// hopBase is the record time of the first block; each block starts 10 s after the one before.
const hopBase = pcommon.Timestamp(1_950_000_000_000_000_000)

func hopBlockStart(b int) pcommon.Timestamp { return hopBase + pcommon.Timestamp(b)*10_000_000_000 }

// hopDuration is the duration toolpair gives call k of a block: 2 to 41 ms.
func hopDuration(k int) int64 { return int64(k%40 + 2) }

func hopLogCall(b, k int) string  { return fmt.Sprintf("toolu_hop_%02d_%03d", b, k) }
func hopSpanCall(b, k int) string { return fmt.Sprintf("call_hop_%02d_%03d", b, k) }

// hopLogBatch returns batch j of the logs load: the tool_decision events of block j (none for
// the last batch) and the tool_result events of block j-1 (none for the first), each block in
// session sess-hop-<block>. Result k comes hopDuration(k) ms after its decision.
func hopLogBatch(j int) plog.Logs {
	block := func(b int) []claudeCall {
		calls := make([]claudeCall, hopBlock)
		for k := range calls {
			use := hopBlockStart(b) + pcommon.Timestamp(k)*1_000_000
			calls[k] = claudeCall{id: hopLogCall(b, k), use: use, result: use + pcommon.Timestamp(hopDuration(k))*1_000_000}
		}
		return calls
	}
	ld := plog.NewLogs()
	if j < hopBlocks {
		claudeEvents(fmt.Sprintf("sess-hop-%02d", j), block(j), nil).ResourceLogs().MoveAndAppendTo(ld.ResourceLogs())
	}
	if j > 0 {
		claudeEvents(fmt.Sprintf("sess-hop-%02d", j-1), nil, block(j-1)).ResourceLogs().MoveAndAppendTo(ld.ResourceLogs())
	}
	return ld
}

// hopSpanBatch returns batch j of the traces load: the chat span announcing block j's calls in
// gen_ai.output.messages (none for the last batch) and the execute_tool spans of block j-1
// (none for the first), each block a trace and conversation conv-hop-<block> of its own. The
// chat span of block b ends 1 ms after it starts; result k starts 1 ms later and ends
// hopDuration(k) ms after the chat span's end, the duration toolpair gives it.
func hopSpanBatch(j int) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "agent-hop")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	if j < hopBlocks {
		s := spans.AppendEmpty()
		s.SetName("chat m")
		s.SetTraceID(pcommon.TraceID{0x7a, byte(j)})
		s.SetSpanID(pcommon.SpanID{0xc, byte(j)})
		s.SetStartTimestamp(hopBlockStart(j))
		s.SetEndTimestamp(hopBlockStart(j) + 1_000_000)
		var msg strings.Builder
		msg.WriteString(`[{"role":"assistant","parts":[`)
		for k := range hopBlock {
			if k > 0 {
				msg.WriteByte(',')
			}
			fmt.Fprintf(&msg, `{"type":"tool_call","id":%q,"name":"run_shell","arguments":{}}`, hopSpanCall(j, k))
		}
		msg.WriteString(`]}]`)
		s.Attributes().PutStr("gen_ai.operation.name", "chat")
		s.Attributes().PutStr("gen_ai.conversation.id", fmt.Sprintf("conv-hop-%02d", j))
		s.Attributes().PutStr("gen_ai.output.messages", msg.String())
	}
	if j > 0 {
		b := j - 1
		for k := range hopBlock {
			s := spans.AppendEmpty()
			s.SetName("execute_tool run_shell")
			s.SetTraceID(pcommon.TraceID{0x7a, byte(b)})
			s.SetSpanID(pcommon.SpanID{0xe, byte(b), byte(k)})
			s.SetParentSpanID(pcommon.SpanID{0xc, byte(b)})
			s.SetStartTimestamp(hopBlockStart(b) + 2_000_000)
			s.SetEndTimestamp(hopBlockStart(b) + 1_000_000 + pcommon.Timestamp(hopDuration(k))*1_000_000)
			s.Attributes().PutStr("gen_ai.operation.name", "execute_tool")
			s.Attributes().PutStr("gen_ai.tool.name", "run_shell")
			s.Attributes().PutStr("gen_ai.tool.call.id", hopSpanCall(b, k))
			s.Attributes().PutStr("gen_ai.conversation.id", fmt.Sprintf("conv-hop-%02d", b))
		}
	}
	return td
}

// hopDescribe summarises records for a message: each one's outcome and duration.
func hopDescribe(recs []otlptest.Record) string {
	var out []string
	for _, r := range recs {
		out = append(out, fmt.Sprintf("%s/%d", r.Outcome, r.ElapsedMs))
	}
	sort.Strings(out)
	return "[" + strings.Join(out, " ") + "]"
}
