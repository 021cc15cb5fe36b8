package toolpairprocessor

import (
	"fmt"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// instanceOf returns the shared state built from cfg, or nil. The caller holds instances' lock.
func instanceOf(cfg *Config) *shared {
	for _, s := range instances.m {
		if s.cfg == cfg {
			return s
		}
	}
	return nil
}

// metricIn returns the metric called name in rm.
func metricIn(rm *metricdata.ResourceMetrics, name string) (metricdata.Metrics, error) {
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m, nil
			}
		}
	}
	return metricdata.Metrics{}, fmt.Errorf("metric %q not found", name)
}
