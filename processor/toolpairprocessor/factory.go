// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/claim"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadata"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/route"
)

var processorCapabilities = consumer.Capabilities{MutatesData: true}

// NewFactory returns the factory of the toolpair processor, for traces and logs pipelines. In
// route mode (Config.Mode) each pipeline gets a stateless router (internal/route) instead of the
// pairing state shared by the component's pipelines.
func NewFactory() processor.Factory {
	return newFactoryWithClock(pairing.SystemClock{})
}

// newFactoryWithClock returns a factory whose processors read time from clock (tests inject
// a fake one so they never sleep).
func newFactoryWithClock(clock pairing.Clock) processor.Factory {
	return processor.NewFactory(
		metadata.Type,
		createDefaultConfig,
		processor.WithTraces(func(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
			return createTraces(ctx, set, cfg, next, clock)
		}, metadata.TracesStability),
		processor.WithLogs(func(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
			return createLogs(ctx, set, cfg, next, clock)
		}, metadata.LogsStability),
	)
}

func createTraces(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces, clock pairing.Clock) (processor.Traces, error) {
	if c := cfg.(*Config); c.Mode == ModeRoute {
		r, err := newRouter(c, set.TelemetrySettings)
		if err != nil {
			return nil, err
		}
		return processorhelper.NewTraces(ctx, set, cfg, next, r.ProcessTraces,
			processorhelper.WithCapabilities(processorCapabilities))
	}
	s, err := acquire(cfg.(*Config), set.ID, set.TelemetrySettings, clock)
	if err != nil {
		return nil, err
	}
	p := newTracesProcessor(s, next)
	proc, err := processorhelper.NewTraces(ctx, set, cfg, next, p.processTraces,
		processorhelper.WithCapabilities(processorCapabilities),
		processorhelper.WithStart(p.start),
		processorhelper.WithShutdown(p.shutdown))
	if err != nil {
		// The pipeline will never be shut down: let go of the state it acquired.
		return nil, errors.Join(err, p.shutdown(ctx))
	}
	return proc, nil
}

func createLogs(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Logs, clock pairing.Clock) (processor.Logs, error) {
	if c := cfg.(*Config); c.Mode == ModeRoute {
		r, err := newRouter(c, set.TelemetrySettings)
		if err != nil {
			return nil, err
		}
		return processorhelper.NewLogs(ctx, set, cfg, next, r.ProcessLogs,
			processorhelper.WithCapabilities(processorCapabilities))
	}
	s, err := acquire(cfg.(*Config), set.ID, set.TelemetrySettings, clock)
	if err != nil {
		return nil, err
	}
	p := newLogsProcessor(s, next)
	proc, err := processorhelper.NewLogs(ctx, set, cfg, next, p.processLogs,
		processorhelper.WithCapabilities(processorCapabilities),
		processorhelper.WithStart(p.start),
		processorhelper.WithShutdown(p.shutdown))
	if err != nil {
		// The pipeline will never be shut down: let go of the state it acquired.
		return nil, errors.Join(err, p.shutdown(ctx))
	}
	return proc, nil
}

// newRouter returns the stateless router of a component in route mode, its custom dialects
// compiled with set.
func newRouter(cfg *Config, set component.TelemetrySettings) (*route.Router, error) {
	claims, err := claim.New(cfg.dialectEnabled, cfg.CustomDialects, set)
	if err != nil {
		return nil, err
	}
	return route.New(cfg.RouteAttribute, cfg.keyer(), claims, cfg.dialectEnabled), nil
}
