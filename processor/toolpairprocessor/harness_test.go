package toolpairprocessor

// The spec_*_test.go files are acceptance tests of docs/specification.md, one file per
// section, each test named after its section (TestContractS1..., TestContractS2...). Every
// test goes through the factory, with processortest.NewNopSettings or a
// componenttest.Telemetry, consumertest sinks and built pdata (or the real captures under
// testdata/ where a clause is about a real source), and reads the attribute and metric names
// exactly as the specification spells them. The clock is the factory's injected one, so
// nothing sleeps. This file holds the component they run.

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadatatest"
)

// ctBase is the time origin of the hand-made records: times in the tables are ms after it.
const ctBase = int64(1_800_000_000_000) // ms

func ctTS(ms int64) pcommon.Timestamp {
	return pcommon.Timestamp((ctBase + ms) * int64(time.Millisecond))
}

// ctRig is one toolpair component in a traces and a logs pipeline, with its own telemetry.
type ctRig struct {
	t      *testing.T
	clock  *testClock
	cfg    *Config
	tel    *componenttest.Telemetry
	traces processor.Traces
	logs   processor.Logs
	tsink  *consumertest.TracesSink
	lsink  *consumertest.LogsSink
	shared *shared
	down   bool
	// final is the component's metrics collected at its shutdown, before its telemetry shut
	// down; sum reads it once set.
	final *metricdata.ResourceMetrics
}

func newCTRig(t *testing.T, mutate func(*Config)) *ctRig {
	t.Helper()
	r := &ctRig{t: t, clock: newTestClock(), tel: componenttest.NewTelemetry(),
		tsink: new(consumertest.TracesSink), lsink: new(consumertest.LogsSink)}
	t.Cleanup(func() { require.NoError(t, r.tel.Shutdown(context.Background())) })
	f := newFactoryWithClock(r.clock)
	r.cfg = f.CreateDefaultConfig().(*Config)
	if mutate != nil {
		mutate(r.cfg)
	}
	require.NoError(t, r.cfg.Validate())
	set := metadatatest.NewSettings(r.tel)
	var err error
	r.traces, err = f.CreateTraces(context.Background(), set, r.cfg, r.tsink)
	require.NoError(t, err)
	r.logs, err = f.CreateLogs(context.Background(), set, r.cfg, r.lsink)
	require.NoError(t, err)
	require.NoError(t, r.traces.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, r.logs.Start(context.Background(), componenttest.NewNopHost()))
	prev := atLastShutdown
	atLastShutdown = func(s *shared) {
		if s == r.shared {
			var rm metricdata.ResourceMetrics
			require.NoError(t, r.tel.Reader.Collect(context.Background(), &rm))
			r.final = &rm
		}
		if prev != nil {
			prev(s)
		}
	}
	t.Cleanup(func() { atLastShutdown = prev })
	instances.Lock()
	r.shared = instanceOf(r.cfg)
	instances.Unlock()
	t.Cleanup(r.shutdown)
	return r
}

func (r *ctRig) spans(specs ...ctSpan) {
	r.t.Helper()
	require.NoError(r.t, r.traces.ConsumeTraces(context.Background(), ctTraces(specs...)))
}

func (r *ctRig) logRecords(specs ...ctLog) {
	r.t.Helper()
	require.NoError(r.t, r.logs.ConsumeLogs(context.Background(), ctLogs(specs...)))
}

// advance moves the clock and runs one expiry tick, as the component's ticker would.
func (r *ctRig) advance(d time.Duration) {
	r.clock.Advance(d)
	r.shared.tick(context.Background())
}

// shutdown shuts the traces and logs pipelines down: pending calls are interrupted with
// reason shutdown. The metrics stay readable (see final).
func (r *ctRig) shutdown() {
	if r.down {
		return
	}
	r.down = true
	require.NoError(r.t, r.traces.Shutdown(context.Background()))
	require.NoError(r.t, r.logs.Shutdown(context.Background()))
}

// outSpans and outLogs are everything the sinks received, in order.
func (r *ctRig) outSpans() []ptrace.Span {
	var out []ptrace.Span
	for _, td := range r.tsink.AllTraces() {
		ctEachSpan(td, func(_ pcommon.Resource, s ptrace.Span) { out = append(out, s) })
	}
	return out
}

func (r *ctRig) outLogs() []plog.LogRecord { return allLogs(r.lsink) }

// marks returns, per call ID, what was written on the records of the call that carry a
// toolpair.outcome, sorted. Records whose call ID sits in a body (transcripts) are found by
// idOf when given.
func (r *ctRig) marks(idOf func(plog.LogRecord) string) map[string][]string {
	out := map[string][]string{}
	for _, s := range r.outSpans() {
		if _, ok := s.Attributes().Get("toolpair.outcome"); ok {
			id := ctCallIDOf(s.Attributes())
			out[id] = append(out[id], ctMark("span", s.Attributes()))
		}
	}
	for _, lr := range r.outLogs() {
		if _, ok := lr.Attributes().Get("toolpair.outcome"); ok {
			id := ctCallIDOf(lr.Attributes())
			if id == "" && idOf != nil {
				id = idOf(lr)
			}
			out[id] = append(out[id], ctMark("log", lr.Attributes()))
		}
	}
	for _, v := range out {
		sort.Strings(v)
	}
	return out
}

// sum returns the sum of the data points of an int64 metric (sum or gauge) whose attributes
// include every key/value of match (nil: all points), 0 when the metric was never recorded.
func (r *ctRig) sum(name string, match map[string]string) int64 {
	r.t.Helper()
	m, err := r.tel.GetMetric(name)
	if r.final != nil {
		m, err = metricIn(r.final, name)
	}
	if err != nil {
		return 0
	}
	var dps []metricdata.DataPoint[int64]
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		dps = d.DataPoints
	case metricdata.Gauge[int64]:
		dps = d.DataPoints
	default:
		r.t.Fatalf("%s: unexpected data %T", name, m.Data)
	}
	var n int64
	for _, dp := range dps {
		ok := true
		for k, v := range match {
			if got, found := dp.Attributes.Value(attribute.Key(k)); !found || got.AsString() != v {
				ok = false
			}
		}
		if ok {
			n += dp.Value
		}
	}
	return n
}

// checkConservation checks specification section 7 on the component's metrics: uses seen = paired
// + interrupted + rejected + pending; results seen = paired + aborted + orphan + duplicate +
// standalone + waiting.
func (r *ctRig) checkConservation() {
	r.t.Helper()
	const outcomes = "otelcol_processor_toolpair_outcomes"
	paired := r.sum(outcomes, map[string]string{"toolpair.outcome": "paired"})
	interrupted := r.sum(outcomes, map[string]string{"toolpair.outcome": "interrupted"})
	aborted := r.sum(outcomes, map[string]string{"toolpair.outcome": "interrupted", "toolpair.interrupt.reason": "aborted"})
	rejected := r.sum(outcomes, map[string]string{"toolpair.outcome": "rejected"})
	orphan := r.sum(outcomes, map[string]string{"toolpair.outcome": "orphan"})
	duplicate := r.sum(outcomes, map[string]string{"toolpair.outcome": "duplicate"})
	standalone := r.sum(outcomes, map[string]string{"toolpair.outcome": "standalone"})
	uses := r.sum("otelcol_processor_toolpair_uses", nil)
	results := r.sum("otelcol_processor_toolpair_results", nil)
	pending := r.sum("otelcol_processor_toolpair_pending_calls", nil)
	waiting := r.sum("otelcol_processor_toolpair_waiting_results", nil)
	assert.Positive(r.t, uses+results, "the component's metrics are read")
	assert.Equal(r.t, uses, paired+interrupted+rejected+pending,
		"uses %d = paired %d + interrupted %d + rejected %d + pending %d", uses, paired, interrupted, rejected, pending)
	assert.Equal(r.t, results, paired+aborted+orphan+duplicate+standalone+waiting,
		"results %d = paired %d + aborted %d + orphan %d + duplicate %d + standalone %d + waiting %d", results, paired, aborted, orphan, duplicate, standalone, waiting)
}
