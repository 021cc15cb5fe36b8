// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadata"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/outbox"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/statefile"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/statestore"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/timeout"
)

// Attribute keys of the processor's own metrics.
const (
	telAttrOutcome = "toolpair.outcome"
	telAttrReason  = "toolpair.interrupt.reason"
	telAttrSignal  = "otel.signal"
	telAttrDialect = "toolpair.dialect"
	telAttrWhy     = "reason"
	telAttrTrigger = "toolpair.trigger"
	// telNoMatchingCall is the reason of the orphan and standalone outcomes of results without
	// a call ID that met no call (pairing.KindMatch).
	telNoMatchingCall = "no_matching_call"
)

// sendTrigger is what made the processor send records outside the pipeline call that brought
// them: the value of toolpair.trigger on otelcol_processor_toolpair_send_failed.
type sendTrigger uint8

const (
	// triggerExpiry: the expiry ticker (pairing_timeout, orphan_grace, queued boundaries).
	triggerExpiry sendTrigger = iota
	// triggerShutdown: the flush at a pipeline's shutdown.
	triggerShutdown
	// triggerRouted: a pipeline call sending the records the processor adds to the pipelines
	// (a synthetic record, a held result released by its use), in deliveries of their own.
	triggerRouted
	// triggerResend: the outbox sending again what a next consumer refused before.
	triggerResend
	numTriggers
)

var triggerNames = [numTriggers]string{triggerExpiry: "expiry", triggerShutdown: "shutdown", triggerRouted: "routed", triggerResend: "resend"}

// telemetry records the processor's own metrics (specification section 7, documented in
// documentation.md). The counts of uses, results and outcomes and the pending and waiting
// gauges are observed from the engine's counters, so the conservation that holds in the
// engine holds between the metrics too. Attribute sets are built once so the hot path does
// not allocate them.
type telemetry struct {
	tb            *metadata.TelemetryBuilder
	logger        *zap.Logger
	signals       map[synth.Signal]metric.AddOption
	phases        map[timeout.Phase]metric.AddOption
	malformedOpts sync.Map // malformedKey -> metric.AddOption
	// sendFailedOpts are the attribute sets of send_failed, by signal and trigger.
	sendFailedOpts [2][numTriggers]metric.AddOption
}

type malformedKey struct{ dialect, reason string }

func newTelemetry(set component.TelemetrySettings, engine *pairing.Engine) (*telemetry, error) {
	tb, err := metadata.NewTelemetryBuilder(set)
	if err != nil {
		return nil, err
	}
	type outcomeSet struct {
		value func(pairing.Stats) uint64
		attrs metric.ObserveOption
	}
	outcome := func(o pairing.Outcome, r pairing.Reason, value func(pairing.Stats) uint64) outcomeSet {
		kv := []attribute.KeyValue{attribute.String(telAttrOutcome, o.String())}
		if r != pairing.ReasonNone {
			kv = append(kv, attribute.String(telAttrReason, r.String()))
		}
		return outcomeSet{value: value, attrs: metric.WithAttributeSet(attribute.NewSet(kv...))}
	}
	// One series per outcome (per reason for an interrupted one), the part settled without
	// a matching call apart (why=no_matching_call): pairing.Props says which.
	var outcomes []outcomeSet
	for _, o := range pairing.Outcomes() {
		p := o.Props()
		count := p.Results
		if p.Uses != nil {
			count = p.Uses
		}
		switch {
		case p.PerReason:
			for _, r := range pairing.Reasons() {
				outcomes = append(outcomes, outcome(o, r, func(s pairing.Stats) uint64 { return s.Interrupted[r] }))
			}
		case p.Unmatched != nil:
			outcomes = append(outcomes, outcome(o, pairing.ReasonNone, func(s pairing.Stats) uint64 { return count(s) - p.Unmatched(s) }), outcomeSet{
				value: p.Unmatched,
				attrs: metric.WithAttributeSet(attribute.NewSet(
					attribute.String(telAttrOutcome, p.Name),
					attribute.String(telAttrWhy, telNoMatchingCall))),
			})
		default:
			outcomes = append(outcomes, outcome(o, pairing.ReasonNone, count))
		}
	}
	observe := func(value func(pairing.Stats) int64) metric.Int64Callback {
		return func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(value(engine.Stats()))
			return nil
		}
	}
	err = errors.Join(
		tb.RegisterProcessorToolpairUsesCallback(observe(func(s pairing.Stats) int64 { return int64(s.UsesSeen) })),
		tb.RegisterProcessorToolpairUsesRepeatedCallback(observe(func(s pairing.Stats) int64 { return int64(s.UsesRepeated) })),
		tb.RegisterProcessorToolpairResultsCallback(observe(func(s pairing.Stats) int64 { return int64(s.ResultsSeen) })),
		tb.RegisterProcessorToolpairReportsCallback(observe(func(s pairing.Stats) int64 { return int64(s.Reports) })),
		tb.RegisterProcessorToolpairPendingCallsCallback(observe(func(s pairing.Stats) int64 { return int64(s.Pending) })),
		tb.RegisterProcessorToolpairWaitingResultsCallback(observe(func(s pairing.Stats) int64 { return int64(s.Waiting) })),
		tb.RegisterProcessorToolpairOutcomesCallback(func(_ context.Context, o metric.Int64Observer) error {
			st := engine.Stats()
			for _, oc := range outcomes {
				if v := oc.value(st); v > 0 {
					o.Observe(int64(v), oc.attrs)
				}
			}
			return nil
		}),
	)
	if err != nil {
		tb.Shutdown()
		return nil, err
	}
	phases := map[timeout.Phase]metric.AddOption{}
	for _, p := range timeout.Phases() {
		phases[p] = metric.WithAttributeSet(attribute.NewSet(attribute.String(timeout.AttrPhase, p.String())))
	}
	t := &telemetry{
		tb:     tb,
		logger: set.Logger,
		phases: phases,
		signals: map[synth.Signal]metric.AddOption{
			synth.Traces: metric.WithAttributeSet(attribute.NewSet(attribute.String(telAttrSignal, "traces"))),
			synth.Logs:   metric.WithAttributeSet(attribute.NewSet(attribute.String(telAttrSignal, "logs"))),
		},
	}
	for i, sig := range [2]string{"traces", "logs"} {
		for tr := range numTriggers {
			t.sendFailedOpts[i][tr] = metric.WithAttributeSet(attribute.NewSet(
				attribute.String(telAttrSignal, sig), attribute.String(telAttrTrigger, triggerNames[tr])))
		}
	}
	return t, nil
}

// sendFailed counts n records of signal s that a next consumer refused, sent because of
// trigger.
func (t *telemetry) sendFailed(ctx context.Context, s synth.Signal, trigger sendTrigger, n int) {
	i := 0
	if s == synth.Logs {
		i = 1
	}
	t.tb.ProcessorToolpairSendFailed.Add(ctx, int64(n), t.sendFailedOpts[i][trigger])
}

// observeUnsent reports the records ob keeps to send again (the unsent gauge).
func (t *telemetry) observeUnsent(ob *outbox.Outbox) error {
	return t.tb.RegisterProcessorToolpairUnsentCallback(func(_ context.Context, o metric.Int64Observer) error {
		o.Observe(int64(ob.Len()))
		return nil
	})
}

// redelivered counts n result records of signal s delivered again (delivery.Memory).
func (t *telemetry) redelivered(ctx context.Context, s synth.Signal, n int) {
	if n > 0 {
		t.tb.ProcessorToolpairRedeliveries.Add(ctx, int64(n), t.signals[s])
	}
}

func signalOf(logs bool) synth.Signal {
	if logs {
		return synth.Logs
	}
	return synth.Traces
}

// Resent implements outbox.Telemetry.
func (t *telemetry) Resent(ctx context.Context, logs bool, n int) {
	t.tb.ProcessorToolpairResent.Add(ctx, int64(n), t.signals[signalOf(logs)])
}

// Refused implements outbox.Telemetry: a send again refused once more counts in send_failed.
func (t *telemetry) Refused(ctx context.Context, logs bool, n int, _ error) {
	t.sendFailed(ctx, signalOf(logs), triggerResend, n)
}

// GivenUp implements outbox.Telemetry.
func (t *telemetry) GivenUp(ctx context.Context, logs bool, n int, why outbox.Reason, err error) {
	sig := "traces"
	if logs {
		sig = "logs"
	}
	t.tb.ProcessorToolpairGivenUp.Add(ctx, int64(n), metric.WithAttributes(attribute.String(telAttrSignal, sig), attribute.String(telAttrWhy, string(why))))
	t.logger.Warn("toolpair: records the processor could not send are given up", zap.String("otel.signal", sig), zap.String("reason", string(why)), zap.Int("records", n), zap.Error(err))
}

// unrecognized counts records that are not tool records.
func (t *telemetry) unrecognized(ctx context.Context, s synth.Signal, n int) {
	if n > 0 {
		t.tb.ProcessorToolpairRecordsUnrecognized.Add(ctx, int64(n), t.signals[s])
	}
}

// malformed counts malformed tool inputs by dialect and reason.
func (t *telemetry) malformed(ctx context.Context, dialectName string, reasons []string) {
	for _, r := range reasons {
		t.malformedN(ctx, dialectName, r, 1)
	}
}

// malformedN counts n malformed pieces of one reason read by dialect dialectName.
func (t *telemetry) malformedN(ctx context.Context, dialectName, reason string, n int) {
	k := malformedKey{dialectName, reason}
	opt, ok := t.malformedOpts.Load(k)
	if !ok {
		opt, _ = t.malformedOpts.LoadOrStore(k, metric.WithAttributeSet(attribute.NewSet(
			attribute.String(telAttrDialect, dialectName), attribute.String(telAttrWhy, reason))))
	}
	t.tb.ProcessorToolpairMalformed.Add(ctx, int64(n), opt.(metric.AddOption))
}

// reasonTooManyCalls is the malformed reason of the tool items of a record beyond
// max_calls_per_record, which are not tracked.
const reasonTooManyCalls = "too_many_calls"

// boundItems keeps the first max call items of f (a record's, read by dialect dialectName:
// uses, results, aborts, refusals, echoes, matches) and every other item (step boundaries,
// session ends), and counts the call items beyond max as malformed (reasonTooManyCalls).
func (t *telemetry) boundItems(ctx context.Context, dialectName string, f *dialect.Found, max int) {
	if len(f.Items) <= max {
		return
	}
	calls, kept := 0, 0
	for _, it := range f.Items {
		if it.Kind != pairing.KindBoundary && it.Kind != pairing.KindSessionEnd {
			if calls++; calls > max {
				continue
			}
		}
		f.Items[kept] = it
		kept++
	}
	if dropped := len(f.Items) - kept; dropped > 0 {
		clear(f.Items[kept:])
		f.Items = f.Items[:kept]
		t.malformedN(ctx, dialectName, reasonTooManyCalls, dropped)
	}
}

// synthetic counts one synthetic record.
func (t *telemetry) synthetic(s synth.Signal) {
	t.tb.ProcessorToolpairSyntheticRecords.Add(context.Background(), 1, t.signals[s])
}

// timeout counts one classified timeout record.
func (t *telemetry) timeout(ctx context.Context, p timeout.Phase) {
	t.tb.ProcessorToolpairTimeouts.Add(ctx, 1, t.phases[p])
}

func (t *telemetry) shutdown() error {
	t.tb.Shutdown()
	return nil
}

// Telemetry of the state store (statestore.Telemetry).

const telAttrStateKind = "toolpair.state.kind"

// Restored implements statestore.Telemetry.
func (t *telemetry) Restored(ctx context.Context, rs pairing.RestoreStats) {
	for _, kv := range []struct {
		kind string
		n    int
	}{{"pending_calls", rs.Pending}, {"held_results", rs.Waiting}, {"resolved_calls", rs.Resolved}, {"replayed_resolutions", rs.Replayed}} {
		t.tb.ProcessorToolpairStateRestored.Add(ctx, int64(kv.n), metric.WithAttributes(attribute.String(telAttrStateKind, kv.kind)))
	}
}

// Discarded implements statestore.Telemetry.
func (t *telemetry) Discarded(ctx context.Context, reason statefile.Reason) {
	t.tb.ProcessorToolpairStateDiscarded.Add(ctx, 1, metric.WithAttributes(attribute.String(telAttrWhy, string(reason))))
}

// Checkpointed implements statestore.Telemetry.
func (t *telemetry) Checkpointed(ctx context.Context, trigger statestore.Trigger, d time.Duration, size int) {
	opt := metric.WithAttributes(attribute.String(telAttrTrigger, string(trigger)))
	t.tb.ProcessorToolpairStateCheckpointDuration.Record(ctx, float64(d)/float64(time.Millisecond), opt)
	t.tb.ProcessorToolpairStateCheckpointSize.Record(ctx, int64(size), opt)
}

// StorageError implements statestore.Telemetry.
func (t *telemetry) StorageError(ctx context.Context, op string) {
	t.tb.ProcessorToolpairStorageErrors.Add(ctx, 1, metric.WithAttributes(attribute.String("operation", op)))
}
