package toolpairprocessor

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadata"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/normalize"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// instances holds one pairing state per configured toolpair component, shared by its traces
// and logs pipelines, so that a use seen in one signal pairs with a result seen in the other.
// The collector creates one processor per pipeline but hands every pipeline of the same
// component ID the same *Config, which is the key here (as the memory_limiter does).
var instances = struct {
	sync.Mutex
	m map[*Config]*shared
}{m: map[*Config]*shared{}}

// shared is the state of one toolpair component: the engine, the ticker and the next
// consumers of each signal's pipeline.
type shared struct {
	cfg     *Config
	engine  *pairing.Engine
	clock   pairing.Clock
	keys    keyer
	norm    *normalize.Normalizer // nil when duration_normalization is disabled
	anchors *anchorIndex
	tel     *telemetry
	tmo     *timeouts // nil when timeout_classification is disabled
	custom  customDialects
	logger  *zap.Logger
	id      component.ID
	// nextTraces and nextLogs are the next consumers of the component's first traces and
	// logs pipelines, where restored calls and held records of each signal go (nil when the
	// component has no pipeline of that signal). Set before start.
	nextTraces consumer.Traces
	nextLogs   consumer.Logs
	// store keeps the state in the storage extension; nil without storage. Set at the first
	// start.
	store *stateStore
	// observeKeys, when set (by tests, before the first batch), is told the call key of every
	// event a batch hands to the engine and the position of the record it came from.
	observeKeys func(pos recordPos, key pairing.Key)

	mu      sync.Mutex // guards the fields below
	started int
	stop    chan struct{}
	done    chan struct{}
}

// recordPos is the position of a record in its batch: the indexes of its resource group,
// scope group and record.
type recordPos struct{ res, scope, rec int }

// acquire returns the shared state of cfg, creating it on first use.
func acquire(cfg *Config, id component.ID, set component.TelemetrySettings, clock pairing.Clock) (*shared, error) {
	instances.Lock()
	defer instances.Unlock()
	if s := instances.m[cfg]; s != nil {
		return s, nil
	}
	engine, err := pairing.New(pairing.Config{
		PairingTimeout: cfg.PairingTimeout,
		OrphanGrace:    cfg.OrphanGrace,
		MaxPending:     cfg.MaxPendingCalls,
		// Boundaries and session ends wait as long as a result may wait for its use, so
		// arrival order within orphan_grace does not change outcomes.
		CloseDelay: cfg.OrphanGrace,
		Clock:      clock,
	})
	if err != nil {
		return nil, err
	}
	s := &shared{
		cfg:     cfg,
		engine:  engine,
		clock:   clock,
		keys:    keyer{scopeAttrs: cfg.ScopeAttributes, tenantAttrs: cfg.TenantAttributes},
		anchors: newAnchorIndex(),
		logger:  set.Logger,
		id:      id,
	}
	if dn := cfg.DurationNormalization; dn.Enabled {
		s.norm = normalize.New(dn.Canonical, dn.Mirrors)
	}
	if s.custom, err = newCustomDialects(cfg.CustomDialects, set); err != nil {
		return nil, err
	}
	s.tel, err = newTelemetry(set, engine)
	if err != nil {
		return nil, err
	}
	if s.tmo, err = newTimeouts(&cfg.TimeoutClassification, &s.keys, s.tel, clock); err != nil {
		_ = s.tel.shutdown()
		return nil, err
	}
	instances.m[cfg] = s
	return s, nil
}

// tickInterval is how often pending calls and waiting results are checked for expiry: a
// tenth of the shorter time limit, between 10ms and 1s.
func (s *shared) tickInterval() time.Duration {
	d := min(s.cfg.OrphanGrace, s.cfg.PairingTimeout) / 10
	return min(max(d, 10*time.Millisecond), time.Second)
}

// start counts a pipeline in and, on the first start, restores the stored state (with
// storage) and starts the ticker. A storage key naming no storage extension of host fails it.
func (s *shared) start(ctx context.Context, host component.Host) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.started++
	if s.started > 1 {
		return nil
	}
	if s.cfg.Storage != nil && s.store == nil {
		if err := s.openStore(ctx, host); err != nil {
			s.started--
			return err
		}
	}
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go s.run(s.stop, s.done, s.tickInterval())
	return nil
}

func (s *shared) run(stop, done chan struct{}, every time.Duration) {
	defer close(done)
	t := time.NewTicker(every)
	defer t.Stop()
	var checkpoints <-chan time.Time
	if s.store != nil {
		// Deadlines that passed while the collector was down expire now.
		s.tick(context.Background())
		c := time.NewTicker(s.cfg.CheckpointInterval)
		defer c.Stop()
		checkpoints = c.C
	}
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			s.tick(context.Background())
		case <-checkpoints:
			if err := s.checkpoint(context.Background(), checkpointInterval); err != nil {
				s.logger.Warn("toolpair: periodic checkpoint failed", zap.Error(err))
			}
		}
	}
}

// tick expires what is due and sends the outcomes into the pipelines.
func (s *shared) tick(ctx context.Context) {
	res := s.engine.Tick(nil)
	if len(res) == 0 {
		return
	}
	s.recordResolutions(ctx, res)
	if err := s.emit(ctx, res, triggerExpiry); err != nil {
		s.logger.Warn("toolpair: sending expired calls and released results downstream failed", zap.Error(err))
	}
}

// shutdown stops the ticker with the first pipeline to shut down, then closes every pending
// call as interrupted/shutdown and releases every held result, sending them downstream with
// ctx. It does so again at every later pipeline's shutdown, for what that pipeline received
// in between (a batch processor upstream flushing on shutdown). With storage, it writes the
// whole state instead (nothing is interrupted or released), and the last pipeline closes the
// storage client; only a failed write falls back to the flush.
//
// Each pipeline's processor shuts down before the processors and exporters after it, so the
// first flush happens while the downstream components of every pipeline still run.
func (s *shared) shutdown(ctx context.Context) error {
	s.mu.Lock()
	stop, done := s.stop, s.done
	s.stop, s.done = nil, nil
	if s.started > 0 {
		s.started--
	}
	last := s.started == 0
	s.mu.Unlock()

	var err error
	if stop != nil {
		// Not under s.mu: a tick in progress needs it to send.
		close(stop)
		select {
		case <-done:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	if s.store != nil {
		// The state is stored, held records included: nothing is interrupted. Should the
		// write fail, the state is flushed as without storage, so that nothing is lost
		// silently.
		if cerr := s.checkpoint(ctx, checkpointShutdown); cerr != nil {
			err = errors.Join(err, cerr, s.emit(ctx, s.engine.Shutdown(nil), triggerShutdown))
		}
		if last {
			err = errors.Join(err, s.closeStore(ctx))
		}
	} else {
		err = errors.Join(err, s.emit(ctx, s.engine.Shutdown(nil), triggerShutdown))
	}
	if last {
		instances.Lock()
		if instances.m[s.cfg] == s {
			delete(instances.m, s.cfg)
		}
		instances.Unlock()
		err = errors.Join(err, s.tel.shutdown())
	}
	return err
}

// emit sends outcomes decided outside a pipeline call (expiry, shutdown: the trigger)
// downstream: the synthetic records and the released results, each to its own signal's
// pipeline.
func (s *shared) emit(ctx context.Context, res []pairing.Resolution, trigger sendTrigger) error {
	var out output
	s.apply(res, &out, nil)
	return s.send(ctx, &out, trigger)
}

// output gathers the records to send downstream after applying outcomes, by the pipeline
// each belongs to: the pipeline its announcing record (for a synthetic record) or the record
// itself (for a released result) came through. The batch being processed, if any, takes the
// records of its own pipeline; the others are sent separately.
type output struct {
	curTraces consumer.Traces // the pipeline of the traces batch being processed, or nil
	traces    ptrace.Traces   // that batch
	curLogs   consumer.Logs
	logs      plog.Logs
	// other pipelines
	toTraces []routedTraces
	toLogs   []routedLogs
}

type routedTraces struct {
	next consumer.Traces
	td   ptrace.Traces
}

type routedLogs struct {
	next consumer.Logs
	ld   plog.Logs
}

// tracesFor returns where to put spans bound for next.
func (o *output) tracesFor(next consumer.Traces) ptrace.Traces {
	if o.curTraces != nil && next == o.curTraces {
		return o.traces
	}
	for _, r := range o.toTraces {
		if r.next == next {
			return r.td
		}
	}
	td := ptrace.NewTraces()
	o.toTraces = append(o.toTraces, routedTraces{next: next, td: td})
	return td
}

// logsFor returns where to put log records bound for next.
func (o *output) logsFor(next consumer.Logs) plog.Logs {
	if o.curLogs != nil && next == o.curLogs {
		return o.logs
	}
	for _, r := range o.toLogs {
		if r.next == next {
			return r.ld
		}
	}
	ld := plog.NewLogs()
	o.toLogs = append(o.toLogs, routedLogs{next: next, ld: ld})
	return ld
}

// send delivers the records bound for other pipelines than the current batch's, and counts
// those a next consumer refused (otelcol_processor_toolpair_send_failed), by what triggered
// the send. It is never called with a lock held.
func (s *shared) send(ctx context.Context, out *output, trigger sendTrigger) error {
	var errs []error
	for _, r := range out.toTraces {
		if n := r.td.SpanCount(); n > 0 {
			if err := r.next.ConsumeTraces(ctx, r.td); err != nil {
				s.tel.sendFailed(ctx, synth.Traces, trigger, n)
				errs = append(errs, err)
			}
		}
	}
	for _, r := range out.toLogs {
		if n := r.ld.LogRecordCount(); n > 0 {
			if err := r.next.ConsumeLogs(ctx, r.ld); err != nil {
				s.tel.sendFailed(ctx, synth.Logs, trigger, n)
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// inBatch annotates or drops result records that are part of the batch being processed.
type inBatch interface {
	// markResult writes the outcome on the result record with Ref ref.
	markResult(ref int32, r *pairing.Resolution)
	// dropResult removes the result record with Ref ref from the batch.
	dropResult(ref int32)
}

// apply turns outcomes into records: it marks or drops result records of the current batch
// (through b, nil outside a batch), marks and releases held results, and builds synthetic
// records, all into out. It also counts every outcome.
func (s *shared) apply(res []pairing.Resolution, out *output, b inBatch) {
	now := s.clock.Now()
	if s.tmo != nil {
		s.tmo.resolved(res)
	}
	for i := range res {
		r := &res[i]
		// A duplicate from another signal than the result that resolved the call is that
		// pipeline's only record of the result: it is marked, never dropped.
		drop := (r.Outcome == pairing.OutcomeDuplicate && r.SameSource && s.cfg.Duplicates == DispositionDrop) ||
			(r.Outcome == pairing.OutcomeOrphan && s.cfg.Orphans == DispositionDrop)
		if r.ResultRef >= 0 && b != nil {
			if drop {
				b.dropResult(r.ResultRef)
			} else {
				b.markResult(r.ResultRef, r)
			}
		}
		if r.ResultPayload != nil && !drop {
			switch h := r.ResultPayload.(type) {
			// A record whose batch failed before copying it in (wait false) has nothing to
			// release.
			case *heldSpan:
				if h.wait() {
					synth.MarkResult(h.span().Attributes(), r)
					markMatched(h.span().Attributes(), r)
					h.td.ResourceSpans().MoveAndAppendTo(out.tracesFor(h.next).ResourceSpans())
				}
			case *heldLog:
				if h.wait() {
					synth.MarkResult(h.record().Attributes(), r)
					markMatched(h.record().Attributes(), r)
					h.ld.ResourceLogs().MoveAndAppendTo(out.logsFor(h.next).ResourceLogs())
				}
			}
		}
		if r.Synthesize() && s.cfg.Synthesize {
			o, ok := r.UsePayload.(*synth.Origin)
			if !ok {
				continue
			}
			switch o.Signal {
			case synth.Traces:
				synth.AppendSpan(out.tracesFor(o.Next.(consumer.Traces)), r, o, metadata.ScopeName, "")
				s.tel.synthetic(synth.Traces)
			case synth.Logs:
				synth.AppendLog(out.logsFor(o.Next.(consumer.Logs)), r, o, metadata.ScopeName, "", now)
				s.tel.synthetic(synth.Logs)
				// Announced in logs only: also a span in the trace of the turn it happened
				// in, when a traces pipeline has seen a span of that turn.
				if t, ok := s.anchors.find(r.Key.ScopeKey(), r.UseTime, int64(s.cfg.OrphanGrace)); ok {
					so := *o
					so.TraceID, so.SpanID, so.ParentSpanID = t.traceID, t.spanID, pcommon.SpanID{}
					synth.AppendSpan(out.tracesFor(t.next), r, &so, metadata.ScopeName, "").
						Attributes().PutBool(synth.AttrSyntheticCompanion, true)
					s.tel.synthetic(synth.Traces)
				}
			}
		}
	}
}
