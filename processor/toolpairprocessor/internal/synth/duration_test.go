// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package synth

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/normalize"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

var testRuntime = Runtime{
	Fields: []fields.Key{fields.Register("duration_ms")},
	Norm:   normalize.New(normalize.DefaultCanonical, normalize.DefaultMirrors),
}

// TestRuntime: the run time a result record states (specification section 3): the agent's
// duration field (int, decimal string, double rounded), the normalization fields in the
// attributes or a map body, else a span's length, else what the dialect read in the body.
func TestRuntime(t *testing.T) {
	ms := func(n int64) Run { return RunOf(n) }
	tests := []struct {
		name   string
		attrs  map[string]any
		body   map[string]any // a map body (log records)
		span   bool           // a span of 40.6 ms
		inBody Run            // what the dialect read in a string body
		want   Run
	}{
		{name: "duration_ms int", attrs: map[string]any{"duration_ms": 114}, span: true, want: ms(114)},
		{name: "duration_ms string", attrs: map[string]any{"duration_ms": "12"}, want: ms(12)},
		{name: "duration_ms decimal string", attrs: map[string]any{"duration_ms": "37.6"}, want: ms(38)},
		{name: "duration_ms double", attrs: map[string]any{"duration_ms": 24.4}, want: ms(24)},
		{name: "not a number: the span's length", attrs: map[string]any{"duration_ms": "soon"}, span: true, want: Run{Ns: 40_600_000, Known: true}},
		{name: "the canonical field", attrs: map[string]any{"durationMs": 461}, want: ms(461)},
		{name: "a mirror alone", attrs: map[string]any{"details": map[string]any{"durationMs": 364}}, want: ms(364)},
		{name: "a mirror in a map body", body: map[string]any{"details": map[string]any{"durationMs": "364"}}, want: ms(364)},
		{name: "the agent's field before the canonical", attrs: map[string]any{"duration_ms": 5, "durationMs": 9}, want: ms(5)},
		{name: "a span without fields: its length", span: true, want: Run{Ns: 40_600_000, Known: true}},
		{name: "a log record without fields", want: Run{}},
		{name: "what the dialect read", inBody: ms(7), want: ms(7)},
		{name: "a field over what the dialect read", attrs: map[string]any{"duration_ms": 3}, inBody: ms(7), want: ms(3)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.span {
				s := ptrace.NewSpan()
				_ = s.Attributes().FromRaw(tt.attrs)
				s.SetStartTimestamp(pcommon.Timestamp(time.Second))
				s.SetEndTimestamp(pcommon.Timestamp(time.Second + 40_600_000))
				assert.Equal(t, tt.want, testRuntime.Span(s))
				return
			}
			lr := plog.NewLogRecord()
			_ = lr.Attributes().FromRaw(tt.attrs)
			if tt.body != nil {
				_ = lr.Body().SetEmptyMap().FromRaw(tt.body)
			}
			assert.Equal(t, tt.want, testRuntime.Log(lr, tt.inBody))
		})
	}
}

// TestDurations: the duration is the stated run time, else the elapsed time; both rounded to
// the nearest ms; the elapsed time is written only where it differs.
func TestDurations(t *testing.T) {
	r := &pairing.Resolution{Outcome: pairing.OutcomePaired, UseTime: int64(time.Second), ResultTime: int64(time.Second) + 2_500_600_000}
	d, e, differs := Durations(r, RunOf(12))
	assert.Equal(t, [3]any{int64(12), int64(2501), true}, [3]any{d, e, differs})
	d, e, differs = Durations(r, Run{})
	assert.Equal(t, [3]any{int64(2501), int64(2501), false}, [3]any{d, e, differs})
	d, e, differs = Durations(r, Run{Ns: 2_500_500_000, Known: true})
	assert.Equal(t, [3]any{int64(2501), int64(2501), false}, [3]any{d, e, differs}, "equal once rounded")
	d, _, _ = Durations(r, Run{Ns: 113_844_000, Known: true})
	assert.Equal(t, int64(114), d, "Claude Code's 113.844 ms span says 114, as its duration_ms does")
}
