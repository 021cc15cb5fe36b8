package toolpairprocessor

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadata"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// Attribute keys of the processor's own metrics.
const (
	telAttrOutcome = "toolpair.outcome"
	telAttrReason  = "toolpair.interrupt.reason"
	telAttrSignal  = "otel.signal"
	telAttrDialect = "toolpair.dialect"
	telAttrWhy     = "reason"
)

// telemetry records the processor's own metrics (CONTRACT section 7, documented in
// documentation.md). Attribute sets are built once so the hot path does not allocate them.
type telemetry struct {
	tb       *metadata.TelemetryBuilder
	outcomes map[outcomeKey]metric.AddOption
	signals  map[synth.Signal]metric.AddOption
}

type outcomeKey struct {
	o pairing.Outcome
	r pairing.Reason
}

func newTelemetry(set component.TelemetrySettings, engine *pairing.Engine) (*telemetry, error) {
	tb, err := metadata.NewTelemetryBuilder(set)
	if err != nil {
		return nil, err
	}
	err = errors.Join(
		tb.RegisterProcessorToolpairPendingCallsCallback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(int64(engine.Stats().Pending))
			return nil
		}),
		tb.RegisterProcessorToolpairWaitingResultsCallback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(int64(engine.Stats().Waiting))
			return nil
		}),
	)
	if err != nil {
		tb.Shutdown()
		return nil, err
	}
	t := &telemetry{
		tb:       tb,
		outcomes: map[outcomeKey]metric.AddOption{},
		signals: map[synth.Signal]metric.AddOption{
			synth.Traces: metric.WithAttributeSet(attribute.NewSet(attribute.String(telAttrSignal, "traces"))),
			synth.Logs:   metric.WithAttributeSet(attribute.NewSet(attribute.String(telAttrSignal, "logs"))),
		},
	}
	for o := pairing.OutcomePaired; o <= pairing.OutcomeStandalone; o++ {
		if o == pairing.OutcomeInterrupted {
			for _, r := range pairing.Reasons() {
				t.outcomes[outcomeKey{o, r}] = metric.WithAttributeSet(attribute.NewSet(
					attribute.String(telAttrOutcome, o.String()), attribute.String(telAttrReason, r.String())))
			}
			continue
		}
		t.outcomes[outcomeKey{o, pairing.ReasonNone}] = metric.WithAttributeSet(attribute.NewSet(
			attribute.String(telAttrOutcome, o.String())))
	}
	return t, nil
}

// outcome counts one outcome.
func (t *telemetry) outcome(r *pairing.Resolution) {
	if opt, ok := t.outcomes[outcomeKey{r.Outcome, r.Reason}]; ok {
		t.tb.ProcessorToolpairOutcomes.Add(context.Background(), 1, opt)
	}
}

// events counts the uses, repeated uses and results of a processed batch.
func (t *telemetry) events(ctx context.Context, evs []pairing.Event) {
	var uses, repeated, results int64
	for i := range evs {
		switch evs[i].Verdict {
		case pairing.VerdictPending:
			uses++
		case pairing.VerdictRepeated:
			repeated++
		case pairing.VerdictResolved, pairing.VerdictHeld:
			switch evs[i].Kind {
			case pairing.KindUse, pairing.KindReject:
				uses++
			case pairing.KindResult, pairing.KindEcho:
				results++
			}
		}
	}
	if uses > 0 {
		t.tb.ProcessorToolpairUses.Add(ctx, uses)
	}
	if repeated > 0 {
		t.tb.ProcessorToolpairUsesRepeated.Add(ctx, repeated)
	}
	if results > 0 {
		t.tb.ProcessorToolpairResults.Add(ctx, results)
	}
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
		t.tb.ProcessorToolpairMalformed.Add(ctx, 1, metric.WithAttributes(
			attribute.String(telAttrDialect, dialectName), attribute.String(telAttrWhy, r)))
	}
}

// synthetic counts one synthetic record.
func (t *telemetry) synthetic(s synth.Signal) {
	t.tb.ProcessorToolpairSyntheticRecords.Add(context.Background(), 1, t.signals[s])
}

func (t *telemetry) shutdown() error {
	t.tb.Shutdown()
	return nil
}
