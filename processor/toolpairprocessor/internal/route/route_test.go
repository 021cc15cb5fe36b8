// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package route

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/callkey"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/claim"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/custom"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/registry"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/transcript"
)

// TestReadsWithDialectsOnlyForOwnConversations: route mode runs a signal's dialects only when
// one of them gives its calls a conversation of its own: logs with the transcript dialect or
// a custom log dialect, spans with a custom span dialect; otherwise every record of the signal
// is keyed by its attributes or trace ID.
func TestReadsWithDialectsOnlyForOwnConversations(t *testing.T) {
	acme := []custom.Config{
		{Name: "acme_logs", Context: "log", Use: `event_name == "acme.tool.start"`, Result: `event_name == "acme.tool.end"`, CallID: `attributes["acme.call_id"]`},
		{Name: "acme_spans", Context: "span", Result: `name == "acme.tool"`, CallID: `attributes["acme.call_id"]`},
	}
	enabled := func(names ...string) func(string) bool {
		return func(n string) bool { return slices.Contains(names, n) }
	}
	var noTranscript []string
	for _, n := range registry.Names() {
		if n != transcript.Name {
			noTranscript = append(noTranscript, n)
		}
	}
	tests := []struct {
		name            string
		enabled         func(string) bool
		custom          []custom.Config
		spanItems, logs bool
	}{
		{"every built-in dialect", enabled(registry.Names()...), nil, false, true},
		{"no transcript dialect", enabled(noTranscript...), nil, false, false},
		{"custom dialects only", enabled(), acme, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, claim.ValidateCustom(tt.custom))
			claims, err := claim.New(tt.enabled, tt.custom, componenttest.NewNopTelemetrySettings())
			require.NoError(t, err)
			r := New("toolpair.route", callkey.Keyer{}, claims, tt.enabled)
			assert.Equal(t, tt.spanItems, r.SpanItems())
			assert.Equal(t, tt.logs, r.LogItems())
		})
	}
}
