// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.uber.org/zap"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/batch"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/callkey"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/claim"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/delivery"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/registry"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/normalize"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/outbox"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/sharedcomponent"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/statestore"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/timeout"
)

// components holds one shared state per toolpair component ID, shared by the traces and logs
// pipelines the component is in, so that a use seen in one signal pairs with a result seen in
// the other. The collector creates one processor per pipeline, each with the component's
// processor.Settings.ID. A state stays here from the first pipeline's creation until the last
// pipeline's shutdown.
var components = sharedcomponent.NewMap[component.ID, *shared]()

// componentRef is one pipeline's reference to its component's shared state.
type componentRef = sharedcomponent.Ref[component.ID, *shared]

// shared is the state of one toolpair component: the engine, the ticker and the next
// consumers of each signal's pipeline.
type shared struct {
	cfg    *Config
	engine *pairing.Engine
	clock  pairing.Clock
	keys   callkey.Keyer
	norm   *normalize.Normalizer // nil when duration_normalization is disabled
	// runtime reads the tool's own execution time a result record states (its duration).
	runtime synth.Runtime
	tel     *telemetry
	tmo     *timeout.Classifier // nil when timeout_classification is disabled
	// applier turns outcomes into records.
	applier batch.Applier
	// delivered remembers what each result record's delivery got, so that a record delivered
	// again gets the same (specification section 2).
	delivered *delivery.Memory
	// outbox keeps what the processor sent on its own and a next consumer refused, and sends
	// it again (specification section 9).
	outbox *outbox.Outbox
	claims *claim.Set
	logger *zap.Logger
	id     component.ID
	// nextTraces and nextLogs are the next consumers of the component's first traces and
	// logs pipelines, where restored calls and held records of each signal go (nil when the
	// component has no pipeline of that signal). Set before start.
	nextTraces consumer.Traces
	nextLogs   consumer.Logs
	// store keeps the state in the storage extension; nil without storage. Set at start.
	store *statestore.Store
	// observeKeys, when set (by tests, before the first batch), is told the call key of every
	// event a batch hands to the engine and the position of the record it came from.
	observeKeys func(pos batch.Pos, key pairing.Key)

	mu      sync.Mutex // guards the fields below
	started bool       // a start succeeded and no shutdown followed
	// starts counts the pipelines' starts since the one that started the component; once it
	// reaches the number of pipelines holding the state, ready is closed (and set to nil).
	starts int
	// ready is closed once every pipeline holding the instance has started; with storage the
	// ticker waits for it before its first tick, so that expiries restored from storage are
	// sent only to started pipelines.
	ready chan struct{}
	stop  chan struct{}
	done  chan struct{}
}

// acquire returns a reference to the shared state of component id for one more pipeline,
// creating it for the component's first pipeline. Every successful acquire is balanced by one
// release (the pipeline's shutdown). A state under id with another *Config belongs to
// pipelines built from an earlier configuration that were never shut down; it is left to them
// and a new one takes its place.
func acquire(cfg *Config, id component.ID, set component.TelemetrySettings, clock pairing.Clock) (*componentRef, error) {
	return components.Acquire(id,
		func(s *shared) bool { return s.cfg == cfg },
		func() (*shared, error) { return newShared(cfg, id, set, clock) })
}

// newShared builds the state of component id. On error, whatever it built so far that holds
// resources (the telemetry's metric registrations) is released before it returns.
func newShared(cfg *Config, id component.ID, set component.TelemetrySettings, clock pairing.Clock) (_ *shared, err error) {
	engine := pairing.New(pairing.Config{
		PairingTimeout: cfg.PairingTimeout,
		OrphanGrace:    cfg.OrphanGrace,
		MaxPending:     cfg.MaxPendingCalls,
		// One tenant's flood evicts its own calls, never another's under its share.
		MaxPendingPerTenant: cfg.MaxPendingCallsPerTenant,
		// Boundaries and session ends wait as long as a result may wait for its use, so
		// arrival order within orphan_grace does not change outcomes.
		CloseDelay: cfg.OrphanGrace,
		// The activity of a scope (model calls, compactions, anchor spans) is kept as long
		// as a timeout may need it and, at least, as long as a call of the scope may wait
		// for its outcome, which may need an anchor.
		Linger:            timeout.Linger,
		ActivityRetention: max(cfg.TimeoutClassification.Retention, cfg.PairingTimeout+cfg.OrphanGrace),
		MaxActivity:       cfg.TimeoutClassification.MaxTrackedOperations,
		Clock:             clock,
		MergePayload:      synth.MergeOrigins,
		MaxHeldBytes:      cfg.MaxHeldBytes,
		HeldSize:          batch.HeldSize,
	})
	s := &shared{
		cfg:    cfg,
		engine: engine,
		clock:  clock,
		keys:   cfg.keyer(),
		logger: set.Logger,
		id:     id,
		// A record is remembered as long as a resolved call is (pairing_timeout, the engine's
		// ResolvedRetention, plus the orphan_grace a result may have waited), for at most as
		// many records as the engine remembers resolved calls.
		delivered: delivery.New(int64(cfg.PairingTimeout+cfg.OrphanGrace), cfg.MaxPendingCalls,
			synth.AttrOutcome, synth.AttrInterruptReason, timeout.AttrPhase),
	}
	// undo runs, last acquired first, the releases of what was acquired, should a later step
	// fail.
	var undo []func() error
	defer func() {
		if err != nil {
			for i := len(undo) - 1; i >= 0; i-- {
				err = errors.Join(err, undo[i]())
			}
		}
	}()
	dn := cfg.DurationNormalization
	if dn.Enabled {
		s.norm = normalize.New(dn.Canonical, dn.Mirrors)
	}
	s.runtime = synth.Runtime{Fields: durationFields(), Norm: normalize.New(dn.Canonical, dn.Mirrors)}
	// Compiled custom dialects hold no resource beyond memory: nothing to release.
	if s.claims, err = claim.New(cfg.dialectEnabled, cfg.CustomDialects, set); err != nil {
		return nil, err
	}
	if s.tel, err = newTelemetryFn(set, engine); err != nil {
		return nil, err
	}
	undo = append(undo, s.tel.shutdown)
	s.applier = batch.Applier{
		DropDuplicates: cfg.Duplicates == DispositionDrop,
		DropOrphans:    cfg.Orphans == DispositionDrop,
		Synthesize:     cfg.Synthesize,
		Engine:         engine,
		AnchorGrace:    int64(cfg.OrphanGrace),
		Synthetic:      s.tel.synthetic,
		Delivered:      s.delivered,
	}
	s.outbox = outbox.New(outbox.Options{
		MaxBytes:   cfg.MaxUnsentBytes,
		MinBackoff: unsentMinBackoff,
		MaxBackoff: unsentMaxBackoff,
		Telemetry:  s.tel,
	})
	if err = s.tel.observeUnsent(s.outbox); err != nil {
		return nil, err
	}
	if tc := cfg.TimeoutClassification; tc.Enabled {
		if s.tmo, err = timeout.NewClassifier(tc.CompactionSpanNames, tc.CompactionEventNames, s.tel.timeout); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// newTelemetryFn creates the component's telemetry; a variable so that tests can observe it.
var newTelemetryFn = newTelemetry

// unsentMinBackoff and unsentMaxBackoff pace the sending again of refused records: the first
// retry a tick after unsentMinBackoff, each refusal doubling the wait up to unsentMaxBackoff.
const (
	unsentMinBackoff = 100 * time.Millisecond
	unsentMaxBackoff = 5 * time.Second
)

// tickInterval is how often pending calls and waiting results are checked for expiry: a
// tenth of the shorter time limit, between 10ms and 1s.
func (s *shared) tickInterval() time.Duration {
	d := min(s.cfg.OrphanGrace, s.cfg.PairingTimeout) / 10
	return min(max(d, 10*time.Millisecond), time.Second)
}

// start starts the component with the first of its pipelines to start: it opens the storage
// and restores the stored state (with storage), then starts the ticker. Later pipelines'
// starts only count: with storage, the ticker's first tick (the catch-up of deadlines that
// passed while the collector was down) waits until every pipeline holding the instance has
// started, because the collector orders starts within a pipeline only, so another pipeline's
// exporters may not run yet when the first toolpair processor starts. A start that fails (a
// storage key naming no storage extension of host, an unreadable state) leaves the instance
// as it was, so a later start may try again.
func (s *shared) start(ctx context.Context, host component.Host, holders func() int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		if s.cfg.Storage != nil && s.store == nil {
			store, err := statestore.Open(ctx, host, *s.cfg.Storage, s.id, statestore.Options{
				Fingerprint:  stateFingerprint(s.cfg),
				Engine:       s.engine,
				Traces:       s.nextTraces,
				Logs:         s.nextLogs,
				KeepActivity: s.tmo != nil,
				Delivered:    s.delivered,
				Outbox:       s.outbox,
				Telemetry:    s.tel,
				Logger:       s.logger,
				Now:          func() int64 { return s.clock.Now().UnixNano() },
			})
			if err != nil {
				return err
			}
			s.store = store
		}
		s.started = true
		s.starts = 0
		s.stop, s.done, s.ready = make(chan struct{}), make(chan struct{}), make(chan struct{})
		var ready chan struct{}
		if s.store != nil {
			ready = s.ready
		}
		go s.run(s.stop, s.done, ready, s.tickInterval())
	}
	s.starts++
	all := s.starts >= holders()
	if all && s.ready != nil {
		close(s.ready)
		s.ready = nil
	}
	return nil
}

// run is the ticker: it expires what is due every interval and, with storage, writes a
// checkpoint every checkpoint_interval until stop is closed, then closes done. When ready is
// not nil, nothing runs before it is closed; the first thing run after it is an expiry tick.
func (s *shared) run(stop, done, ready chan struct{}, every time.Duration) {
	defer close(done)
	// ctx is cancelled when stop is closed, so that a tick blocked sending downstream
	// returns and the shutdown that waits for done can go on.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	if ready != nil {
		select {
		case <-stop:
			return
		case <-ready:
		}
	}
	t := time.NewTicker(every)
	defer t.Stop()
	var checkpoints <-chan time.Time
	if s.store != nil {
		// Deadlines that passed while the collector was down expire now.
		s.tick(ctx)
		c := time.NewTicker(s.cfg.CheckpointInterval)
		defer c.Stop()
		checkpoints = c.C
	}
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			s.tick(ctx)
		case <-checkpoints:
			if err := s.store.Checkpoint(ctx, statestore.TriggerInterval); err != nil {
				s.logger.Warn("toolpair: periodic checkpoint failed", zap.Error(err))
			}
		}
	}
}

// tick expires what is due and sends the outcomes into the pipelines, then sends again what
// was refused before (oldest first) and forgets the deliveries past their retention.
func (s *shared) tick(ctx context.Context) {
	now := s.clock.Now()
	defer func() {
		s.outbox.Flush(ctx, time.Now())
		s.delivered.Expire(now.UnixNano())
	}()
	res := s.engine.Tick(nil)
	if len(res) == 0 {
		return
	}
	if err := s.emit(ctx, res, triggerExpiry, true); err != nil {
		s.logger.Warn("toolpair: sending expired calls and released results downstream failed", zap.Error(err))
	}
}

// release lets one pipeline go of the state (its reference was released; last: it was the
// last one); the last one shuts the component down.
//
// Without storage, every release flushes (drain): the first stops the ticker and sends every
// pending call out as interrupted/shutdown and every held result downstream, later ones what
// the engine received since (an upstream component of another pipeline flushing at its own
// shutdown). The first flush cannot wait for the last pipeline: the collector stops components
// in a topological order of its pipeline graph, upstream first
// (go.opentelemetry.io/collector/service, internal/graph/graph.go, Graph.ShutdownAll, over
// gonum's topo.Sort). That orders the components of one pipeline, so each pipeline's toolpair
// processor stops before the processors and exporters after it, but not those of separate
// pipelines (the traversal follows map order): a traces pipeline's exporters may stop before
// the logs pipeline's toolpair processor does. At the first release, then, the components
// after the toolpair processor in every pipeline of the component still run; at the last, those
// of the other pipelines may have stopped (what they refuse is counted as send_failed with
// trigger shutdown).
//
// With storage, nothing is sent: the last release writes the whole state, once (shutdown).
func (s *shared) release(ctx context.Context, last bool) error {
	stopped, err := s.drain(ctx)
	if last {
		err = errors.Join(err, s.shutdown(ctx, stopped))
	}
	return err
}

// drain stops the ticker if it runs and, without storage, closes every pending call as
// interrupted/shutdown and releases every held result, sending them downstream with ctx.
// Stopping cancels the context of a tick in progress and waits for the ticker to return;
// stopped is false (and err ctx's error) when ctx ended first, the ticker then possibly still
// writing to the store.
func (s *shared) drain(ctx context.Context) (stopped bool, err error) {
	s.mu.Lock()
	stop, done := s.stop, s.done
	s.stop, s.done, s.ready = nil, nil, nil
	s.started = false
	s.mu.Unlock()

	stopped = true
	if stop != nil {
		// Not under s.mu: a tick in progress needs it to send.
		close(stop)
		select {
		case <-done:
		case <-ctx.Done():
			stopped, err = false, ctx.Err()
		}
	}
	if s.store == nil {
		err = errors.Join(err, s.emit(ctx, s.engine.Shutdown(nil), triggerShutdown, false))
		// Without storage, what was refused before has one last try, then it is lost.
		s.outbox.FlushNow(ctx)
		s.outbox.GiveUp(ctx)
	}
	return stopped, err
}

// shutdown shuts the component down once drained, at the last pipeline's release. With
// storage, it writes the whole state (nothing is interrupted or released; should the write
// fail, the state is flushed as without storage, so that nothing is lost silently) and closes
// the storage client. When the ticker did not stop in time (stopped false), it neither writes
// nor closes the store, which the ticker may still use: the stored state stays as the last
// checkpoint and resolution records left it. Last, it shuts the telemetry down.
func (s *shared) shutdown(ctx context.Context, stopped bool) error {
	var err error
	if s.store != nil && !stopped {
		s.logger.Error("toolpair: the ticker did not stop before the shutdown deadline; the state is not checkpointed at shutdown")
	}
	if s.store != nil && stopped {
		if cerr := s.store.Checkpoint(ctx, statestore.TriggerShutdown); cerr != nil {
			err = errors.Join(err, cerr, s.emit(ctx, s.engine.Shutdown(nil), triggerShutdown, false))
			err = errors.Join(err, s.store.Forget(ctx))
		}
		err = errors.Join(err, s.store.Close(ctx))
	}
	if atLastShutdown != nil {
		atLastShutdown(s)
	}
	return errors.Join(err, s.tel.shutdown())
}

// atLastShutdown, when set (by tests), is called by shutdown once the state is flushed or
// stored and before the telemetry shuts down, while the metrics still show the final counts.
var atLastShutdown func(*shared)

// durationFields returns the built-in dialects' duration attributes (dialect.Operations'
// DurationAttributes), each once, registered with package fields: the agents' own duration
// fields a result record's duration is read from (synth.Runtime).
func durationFields() []fields.Key {
	ops, _, _ := registry.Operations()
	var keys []fields.Key
	for _, a := range ops.DurationAttributes {
		k := fields.Register(a)
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}
