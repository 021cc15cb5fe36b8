// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

// The rig every test of the component runs it in: the component built through its factory,
// fed and read through its pipelines and its own telemetry. The few places where tests reach
// the component's unexported state (the map of components, the atLastShutdown hook, the
// shared state) are here, each saying what it is for, so that moving that code means adapting
// this file.
//
// The spec_*_test.go files are acceptance tests of docs/specification.md, one file per
// section, each test named after its section (TestContractS1..., TestContractS2...). They
// send built pdata (or the real captures under testdata/ where a clause is about a real
// source) and read the attribute and metric names exactly as the specification spells them.
// The clock is the factory's injected one, so nothing sleeps.

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/batch"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadatatest"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/statestore"
)

// testClock is a settable clock shared by a test's processors.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func newTestClock() *testClock { return &testClock{now: time.Unix(1_900_000_000, 0).UTC()} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// rig is one toolpair component built through its factory (newFactoryWithClock, on an
// injected clock) in one or more pipelines (by default a traces and a logs pipeline), each
// ending in a sink, with its own telemetry: tests read the engine's counters through the
// component's metrics (stats, sum), as a collector's operator would.
type rig struct {
	t     *testing.T
	clock *testClock
	cfg   *Config
	tel   *componenttest.Telemetry
	// traces and logs are the first traces and logs pipelines (nil when there is none), tsink
	// and lsink their sinks.
	traces processor.Traces
	logs   processor.Logs
	tsink  *consumertest.TracesSink
	lsink  *consumertest.LogsSink
	// comps are every pipeline in the order of withPipelines; tracesPipelines, tsinks and
	// lsinks those of each signal in that order.
	comps           []component.Component
	tracesPipelines []processor.Traces
	tsinks          []*consumertest.TracesSink
	lsinks          []*consumertest.LogsSink
	// shared is the component's state: advance, settle, crash, checkpointNow and allStats
	// reach it, and so do the unit tests of internals (apply, anchor, custom dialects, key
	// observation) that move with that code; other tests read what the component exports.
	shared *shared
	down   bool
	// final is the component's metrics collected at its last shutdown, before its telemetry
	// shut down; stats and sum read it once set.
	final *metricdata.ResourceMetrics
}

type rigSetup struct {
	mutate    []func(*Config)
	cfg       *Config
	pipelines []string
	settings  []func(*processor.Settings)
	clock     *testClock
	host      component.Host
	unstarted bool
	gate      *gate
}

// rigOption configures newRig.
type rigOption func(*rigSetup)

// withConfig changes the default configuration before the component is created; the result
// must validate.
func withConfig(mutate func(*Config)) rigOption {
	return func(s *rigSetup) {
		if mutate != nil {
			s.mutate = append(s.mutate, mutate)
		}
	}
}

// withConfigOf builds the component from cfg itself rather than a default configuration of
// its own, so that several components can be built from one configuration.
func withConfigOf(cfg *Config) rigOption { return func(s *rigSetup) { s.cfg = cfg } }

// withPipelines creates the component's pipelines of kinds ("traces" or "logs"), in order,
// each with its own sink.
func withPipelines(kinds ...string) rigOption { return func(s *rigSetup) { s.pipelines = kinds } }

// tracesOnly builds the component in a traces pipeline only.
func tracesOnly() rigOption { return withPipelines("traces") }

// logsOnly builds the component in a logs pipeline only.
func logsOnly() rigOption { return withPipelines("logs") }

// withSettings changes the processor settings (ID, logger) the pipelines are created with;
// their telemetry is the rig's.
func withSettings(mutate func(*processor.Settings)) rigOption {
	return func(s *rigSetup) { s.settings = append(s.settings, mutate) }
}

// withClock makes the component read time from clock, shared with other components.
func withClock(clock *testClock) rigOption { return func(s *rigSetup) { s.clock = clock } }

// withHost starts the pipelines with host (for instance one offering a storage extension)
// instead of componenttest.NewNopHost.
func withHost(host component.Host) rigOption { return func(s *rigSetup) { s.host = host } }

// unstarted creates the pipelines without starting them: the test starts them (start, or
// each of comps).
func unstarted() rigOption { return func(s *rigSetup) { s.unstarted = true } }

// newRig creates and starts the component; it is shut down when the test ends.
func newRig(t *testing.T, opts ...rigOption) *rig {
	t.Helper()
	setup := rigSetup{pipelines: []string{"traces", "logs"}, host: componenttest.NewNopHost()}
	for _, o := range opts {
		o(&setup)
	}
	if setup.clock == nil {
		setup.clock = newTestClock()
	}
	r := &rig{t: t, clock: setup.clock, tel: componenttest.NewTelemetry()}
	t.Cleanup(func() { require.NoError(t, r.tel.Shutdown(context.Background())) })
	f := newFactoryWithClock(r.clock)
	r.cfg = setup.cfg
	if r.cfg == nil {
		r.cfg = f.CreateDefaultConfig().(*Config)
	}
	for _, m := range setup.mutate {
		m(r.cfg)
	}
	require.NoError(t, r.cfg.Validate())
	set := metadatatest.NewSettings(r.tel)
	for _, m := range setup.settings {
		m(&set)
	}
	for _, kind := range setup.pipelines {
		switch kind {
		case "traces":
			sink := new(consumertest.TracesSink)
			var next consumer.Traces = sink
			if setup.gate != nil {
				next = setup.gate.traces(sink)
			}
			tp, err := f.CreateTraces(context.Background(), set, r.cfg, next)
			require.NoError(t, err)
			r.tsinks, r.tracesPipelines, r.comps = append(r.tsinks, sink), append(r.tracesPipelines, tp), append(r.comps, tp)
			if r.traces == nil {
				r.traces, r.tsink = tp, sink
			}
		case "logs":
			sink := new(consumertest.LogsSink)
			var next consumer.Logs = sink
			if setup.gate != nil {
				next = setup.gate.logs(sink)
			}
			lp, err := f.CreateLogs(context.Background(), set, r.cfg, next)
			require.NoError(t, err)
			r.lsinks, r.comps = append(r.lsinks, sink), append(r.comps, lp)
			if r.logs == nil {
				r.logs, r.lsink = lp, sink
			}
		default:
			t.Fatalf("pipeline kind %q", kind)
		}
	}
	if r.tsink == nil {
		r.tsink = new(consumertest.TracesSink)
	}
	if r.lsink == nil {
		r.lsink = new(consumertest.LogsSink)
	}
	r.shared = instanceByID(set.ID)
	r.keepFinalMetrics()
	t.Cleanup(func() {
		if r.down {
			return
		}
		r.down = true
		for _, c := range r.comps {
			_ = c.Shutdown(context.Background())
		}
	})
	if !setup.unstarted {
		r.start(setup.host)
	}
	return r
}

// start starts every pipeline with host.
func (r *rig) start(host component.Host) {
	r.t.Helper()
	for _, c := range r.comps {
		require.NoError(r.t, c.Start(context.Background(), host))
	}
}

// spanCount is the number of spans all the traces sinks received.
func (r *rig) spanCount() int {
	n := 0
	for _, s := range r.tsinks {
		n += s.SpanCount()
	}
	return n
}

// sharedOf returns the component state built from cfg, or nil: it looks cfg up in the
// process-wide map of components, which is how a test built on the factory reaches one
// component's state.
func sharedOf(cfg *Config) *shared {
	var found *shared
	components.Range(func(_ component.ID, s *shared, _ int) bool {
		if s.cfg == cfg {
			found = s
		}
		return found == nil
	})
	return found
}

// instanceByID returns the component state of id from the process-wide map of components,
// for the lifecycle tests of how pipelines share one instance.
func instanceByID(id component.ID) *shared {
	s, _ := components.Load(id)
	return s
}

// instanceState is what the lifecycle tests check of a component's instance.
type instanceState struct {
	started bool
	// ticker identifies the running ticker (its stop channel); nil when none runs.
	ticker chan struct{}
	// refs is the number of pipelines holding the instance.
	refs int
	// storage tells that a storage client is open.
	storage bool
	cfg     *Config
	engine  *pairing.Engine
}

// stateOf reads the lifecycle fields of s (shared's started, stop, refs, store), under the
// locks that guard them.
func stateOf(s *shared) instanceState {
	s.mu.Lock()
	st := instanceState{started: s.started, ticker: s.stop, storage: s.store != nil, cfg: s.cfg, engine: s.engine}
	s.mu.Unlock()
	components.Range(func(_ component.ID, v *shared, holders int) bool {
		if v == s {
			st.refs = holders
		}
		return v != s
	})
	return st
}

// keepFinalMetrics collects the component's metrics when its last pipeline shuts down,
// after the engine is flushed and before the telemetry shuts down: the one moment the final
// counts can be read.
func (r *rig) keepFinalMetrics() {
	r.t.Cleanup(onLastShutdown(r.shared, func() {
		var rm metricdata.ResourceMetrics
		require.NoError(r.t, r.tel.Reader.Collect(context.Background(), &rm))
		r.final = &rm
	}))
}

// spans sends hand-made spans through the traces pipeline.
func (r *rig) spans(specs ...ctSpan) {
	r.t.Helper()
	r.consume(ctTraces(specs...))
}

// logRecords sends hand-made log records through the logs pipeline.
func (r *rig) logRecords(specs ...ctLog) {
	r.t.Helper()
	r.consumeLogs(ctLogs(specs...))
}

// consume sends td through the traces pipeline.
func (r *rig) consume(td ptrace.Traces) {
	r.t.Helper()
	require.NoError(r.t, r.traces.ConsumeTraces(context.Background(), td))
}

// consumeLogs sends ld through the logs pipeline.
func (r *rig) consumeLogs(ld plog.Logs) {
	r.t.Helper()
	require.NoError(r.t, r.logs.ConsumeLogs(context.Background(), ld))
}

// consumeBoth sends td through the traces pipeline and ld through the logs pipeline, the logs
// first when logsFirst is set.
func (r *rig) consumeBoth(td ptrace.Traces, ld plog.Logs, logsFirst bool) {
	r.t.Helper()
	if logsFirst {
		r.consumeLogs(ld)
	}
	r.consume(td)
	if !logsFirst {
		r.consumeLogs(ld)
	}
}

// advance moves the clock and runs one expiry tick. The tick is the component's own
// (shared.tick, what its ticker runs every interval), called here so that the test reads
// its outcome without waiting for the ticker; advanceUntil waits for the ticker instead.
func (r *rig) advance(d time.Duration) {
	r.clock.Advance(d)
	tickNow(r.shared)
}

// advanceUntil moves the clock and waits for the component's ticker to expire what is due,
// until done holds.
func (r *rig) advanceUntil(d time.Duration, done func() bool, msg string) {
	r.t.Helper()
	r.clock.Advance(d)
	require.Eventually(r.t, done, 10*time.Second, 5*time.Millisecond, msg)
}

// shutdown shuts the pipelines down: without storage, pending calls are interrupted with
// reason shutdown. The metrics stay readable (see final). A second call does nothing.
func (r *rig) shutdown() {
	r.t.Helper()
	if r.down {
		return
	}
	r.down = true
	for _, c := range r.comps {
		require.NoError(r.t, c.Shutdown(context.Background()))
	}
}

// crash ends the component as kill -9 would: the ticker stops, nothing more is written, and
// the instance leaves the registry so that a next run starts afresh from storage. No
// exported call does this; it stops the component's goroutine and removes it from the map of components.
func (r *rig) crash() {
	s := r.shared
	s.mu.Lock()
	stop, done := s.stop, s.done
	s.stop, s.done, s.started = nil, nil, false
	s.mu.Unlock()
	close(stop)
	<-done
	if v, ok := components.Load(s.id); ok && v == s {
		components.Delete(s.id)
	}
	_ = s.tel.shutdown()
	r.down = true
}

// checkpointNow writes a periodic checkpoint, as the checkpoint ticker would every
// checkpoint_interval of real time (shared.checkpoint), so that a test chooses the moment.
func (r *rig) checkpointNow() {
	require.NoError(r.t, r.checkpoint())
}

// checkpoint is checkpointNow returning the checkpoint's error.
func (r *rig) checkpoint() error {
	return r.shared.store.Checkpoint(context.Background(), statestore.TriggerInterval)
}

// tick runs one expiry tick at the clock's now (shared.tick), as the component's ticker
// would: with storage, the start-up tick may not have run yet when the test goes on.
func (r *rig) tick() {
	tickNow(r.shared)
}

// output merges everything the traces sink received into one Traces.
func (r *rig) output() ptrace.Traces {
	out := ptrace.NewTraces()
	for _, td := range r.tsink.AllTraces() {
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			rss.At(i).CopyTo(out.ResourceSpans().AppendEmpty())
		}
	}
	return out
}

// metrics collects the component's metrics: the final ones once it shut down.
func (r *rig) metrics() *metricdata.ResourceMetrics {
	r.t.Helper()
	if r.final != nil {
		return r.final
	}
	var rm metricdata.ResourceMetrics
	require.NoError(r.t, r.tel.Reader.Collect(context.Background(), &rm))
	return &rm
}

// stats reads the engine's counters from the component's metrics (specification section 7).
// The metrics carry every counter but EchoesIgnored and HeldReports, which stay zero.
func (r *rig) stats() pairing.Stats {
	r.t.Helper()
	st, err := statsFrom(r.metrics())
	require.NoError(r.t, err)
	return st
}

// allStats is stats with the two engine counters the component's metrics do not carry,
// EchoesIgnored and HeldReports, read from the engine (shared.engine), for the tests that
// compare every counter.
func (r *rig) allStats() pairing.Stats {
	r.t.Helper()
	st := r.stats()
	e := r.shared.engine.Stats()
	st.EchoesIgnored, st.HeldReports = e.EchoesIgnored, e.HeldReports
	return st
}

// outSpans and outLogs are everything the sinks received, in order.
func (r *rig) outSpans() []ptrace.Span {
	var out []ptrace.Span
	for _, td := range r.tsink.AllTraces() {
		ctEachSpan(td, func(_ pcommon.Resource, s ptrace.Span) { out = append(out, s) })
	}
	return out
}

func (r *rig) outLogs() []plog.LogRecord { return allLogs(r.lsink) }

// marks returns, per call ID, what was written on the records of the call that carry a
// toolpair.outcome, sorted. Records whose call ID sits in a body (transcripts) are found by
// idOf when given.
func (r *rig) marks(idOf func(plog.LogRecord) string) map[string][]string {
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

// The conservation property tests drive one component through thousands of sequences,
// checking the engine's own counters against the component's metrics after every batch; they
// reach the component's state through these.

// engineStats reads the engine's own counters (shared.engine), which the property tests
// compare with what the component's metrics say.
func engineStats(s *shared) pairing.Stats { return s.engine.Stats() }

// tickNow runs one expiry tick of s at its clock's now (shared.tick), as its ticker would,
// without waiting for the ticker.
func tickNow(s *shared) { s.tick(context.Background()) }

// configOf returns the configuration s was built from.
func configOf(s *shared) *Config { return s.cfg }

// flushPending sends every call pending in s out as interrupted (shutdown) and releases its
// held results, as the shutdown of a component without storage does (shared.emit of
// engine.Shutdown), whatever s's configuration.
func flushPending(ctx context.Context, s *shared) error {
	return s.emit(ctx, s.engine.Shutdown(nil), triggerShutdown, false)
}

// onLastShutdown calls fn when s's last pipeline shuts down, once the engine is flushed or
// stored and before the telemetry shuts down (the atLastShutdown hook), until restore is
// called.
func onLastShutdown(s *shared, fn func()) (restore func()) {
	prev := atLastShutdown
	atLastShutdown = func(got *shared) {
		if got == s {
			fn()
		}
		if prev != nil {
			prev(got)
		}
	}
	return func() { atLastShutdown = prev }
}

// countTelemetryCreations counts, until the test ends, the telemetry the components create
// (through the newTelemetryFn hook), so that a test can tell how far a failed creation went.
func countTelemetryCreations(t *testing.T) *int {
	created := new(int)
	prev := newTelemetryFn
	newTelemetryFn = func(set component.TelemetrySettings, e *pairing.Engine) (*telemetry, error) {
		*created++
		return prev(set, e)
	}
	t.Cleanup(func() { newTelemetryFn = prev })
	return created
}

// anchorOf returns the anchor span the component would put the synthetic span of a call of
// conversation k announced at time at (Unix ns) under, for the tests of the walk's anchors.
func anchorOf(s *shared, k pairing.ConversationKey, at int64) (batch.Anchor, bool) {
	return s.applier.Anchor(k, at)
}

// observeKeys has the component tell fn the call key of every event a batch hands to the
// engine and the position of its record (shared.observeKeys), for the tests comparing route
// mode's routes with pair mode's keys. Set before the first batch.
func (r *rig) observeKeys(fn func(pos batch.Pos, key pairing.Key)) {
	r.shared.observeKeys = fn
}
