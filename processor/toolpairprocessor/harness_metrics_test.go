// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

// Reading the component's own metrics (specification section 7).

import (
	"fmt"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

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

// sum returns the sum of the data points of an int64 metric (sum or gauge) whose attributes
// include every key/value of match (nil: all points), 0 when the metric was never recorded.
func (r *rig) sum(name string, match map[string]string) int64 {
	r.t.Helper()
	m, err := metricIn(r.metrics(), name)
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
func (r *rig) checkConservation() {
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

// statsFrom reads the component's own metrics (specification section 7) in rm into Stats.
func statsFrom(rm *metricdata.ResourceMetrics) (pairing.Stats, error) {
	var st pairing.Stats
	metrics := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			metrics[m.Name] = m
		}
	}
	points := func(name string) ([]metricdata.DataPoint[int64], error) {
		m, ok := metrics["otelcol_processor_toolpair_"+name]
		if !ok {
			return nil, nil // never observed: no data point
		}
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			return d.DataPoints, nil
		case metricdata.Gauge[int64]:
			return d.DataPoints, nil
		}
		return nil, fmt.Errorf("metric %s of type %T", name, m.Data)
	}
	one := func(name string) (int64, error) {
		ps, err := points(name)
		if err != nil || len(ps) == 0 {
			return 0, err
		}
		if len(ps) != 1 {
			return 0, fmt.Errorf("metric %s has %d points", name, len(ps))
		}
		return ps[0].Value, nil
	}
	for _, f := range []struct {
		name string
		to   func(int64)
	}{
		{"uses", func(v int64) { st.UsesSeen = uint64(v) }},
		{"uses_repeated", func(v int64) { st.UsesRepeated = uint64(v) }},
		{"results", func(v int64) { st.ResultsSeen = uint64(v) }},
		{"reports", func(v int64) { st.Reports = uint64(v) }},
		{"pending_calls", func(v int64) { st.Pending = int(v) }},
		{"waiting_results", func(v int64) { st.Waiting = int(v) }},
	} {
		v, err := one(f.name)
		if err != nil {
			return st, err
		}
		f.to(v)
	}
	ps, err := points("outcomes")
	if err != nil {
		return st, err
	}
	reasons := map[string]pairing.Reason{}
	for _, rs := range pairing.Reasons() {
		reasons[rs.String()] = rs
	}
	for _, p := range ps {
		o, _ := p.Attributes.Value("toolpair.outcome")
		v := uint64(p.Value)
		switch o.AsString() {
		case "paired":
			st.Paired = v
		case "rejected":
			st.Rejected = v
		case "orphan":
			st.Orphan += v
			if r, ok := p.Attributes.Value("reason"); ok && r.AsString() == "no_matching_call" {
				st.UnmatchedOrphan = v
			}
		case "duplicate":
			st.Duplicate = v
		case "standalone":
			st.Standalone += v
			if r, ok := p.Attributes.Value("reason"); ok && r.AsString() == "no_matching_call" {
				st.Unmatched = v
			}
		case "interrupted":
			rv, _ := p.Attributes.Value("toolpair.interrupt.reason")
			rs, ok := reasons[rv.AsString()]
			if !ok {
				return st, fmt.Errorf("interrupted outcome with reason %q", rv.AsString())
			}
			st.Interrupted[rs] = v
			if rs == pairing.ReasonAborted {
				st.Aborted = v
			}
		default:
			return st, fmt.Errorf("outcome %q", o.AsString())
		}
	}
	return st, nil
}
