// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

// Specification section 6: configuration, and the component as a collector builds it.

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadata"
)

// TestContractPublicFactory runs the exported NewFactory with the system clock and
// processortest.NewNopSettings, as a collector builds the component: a call pending at
// shutdown leaves as a synthetic span ending at the shutdown, with its result paired in the
// meantime for the other call.
func TestContractPublicFactory(t *testing.T) {
	f := NewFactory()
	assert.Equal(t, "toolpair", f.Type().String())
	cfg := f.CreateDefaultConfig()
	sink := new(consumertest.TracesSink)
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, p.ConsumeTraces(context.Background(), ctTraces(ctChat(1, 1, 7, 0, 100, "c1", "c2"), ctTool(1, 2, 7, "c2", 100, 180))))
	before := time.Now()
	require.NoError(t, p.Shutdown(context.Background()))
	var got []string
	for _, td := range sink.AllTraces() {
		ctEachSpan(td, func(_ pcommon.Resource, s ptrace.Span) {
			if o := ctStr(s.Attributes(), "toolpair.outcome"); o != "" {
				got = append(got, ctCallIDOf(s.Attributes())+":"+ctMark("span", s.Attributes()))
				if ctStr(s.Attributes(), "toolpair.synthetic") == "true" {
					assert.GreaterOrEqual(t, s.EndTimestamp().AsTime(), before.Truncate(time.Millisecond))
				}
			}
		})
	}
	slices.Sort(got)
	assert.Equal(t, []string{"c1:span:interrupted/shutdown+synthetic", "c2:span:paired"}, got)
}

// TestContractS6Configuration: the defaults of the specification's table, each key's meaning
// through the processor, and refusal of invalid values with an error naming the key.
func TestContractS6Configuration(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	assert.Equal(t, []string{"gen_ai.conversation.id", "session.id", "conversation.id"}, cfg.ConversationAttributes)
	assert.Empty(t, cfg.TenantAttributes)
	assert.Equal(t, 10*time.Minute, cfg.PairingTimeout)
	assert.Equal(t, 30*time.Second, cfg.OrphanGrace)
	assert.Equal(t, 100000, cfg.MaxPendingCalls)
	assert.Equal(t, 1024, cfg.MaxCallsPerRecord)
	assert.Equal(t, int64(256<<20), cfg.MaxHeldBytes)
	assert.ElementsMatch(t, []string{"genai", "genai_events", "claude_code", "codex", "transcript", "gemini_cli", "ai_sdk", "openinference", "openllmetry", "voltagent", "adk"}, cfg.Dialects, "all built in")
	assert.Equal(t, Disposition("mark"), cfg.Orphans)
	assert.Equal(t, Disposition("drop"), cfg.Duplicates)
	assert.True(t, cfg.Synthesize)
	assert.True(t, cfg.TimeoutClassification.Enabled)
	assert.True(t, cfg.DurationNormalization.Enabled)
	assert.Equal(t, "durationMs", cfg.DurationNormalization.Canonical)
	assert.Equal(t, []string{"metadata.durationMs", "details.durationMs", "details.metadata.durationMs"}, cfg.DurationNormalization.Mirrors)
	require.NoError(t, cfg.Validate())

	refused := []struct {
		key    string
		mutate func(*Config)
	}{
		{"pairing_timeout", func(c *Config) { c.PairingTimeout = 0 }},
		{"pairing_timeout", func(c *Config) { c.PairingTimeout = -time.Second }},
		{"orphan_grace", func(c *Config) { c.OrphanGrace = 0 }},
		{"orphan_grace", func(c *Config) { c.OrphanGrace = -time.Second }},
		{"max_pending_calls", func(c *Config) { c.MaxPendingCalls = 0 }},
		{"max_calls_per_record", func(c *Config) { c.MaxCallsPerRecord = 0 }},
		{"max_pending_calls_per_tenant", func(c *Config) { c.MaxPendingCallsPerTenant = c.MaxPendingCalls + 1 }},
		{"max_held_bytes", func(c *Config) { c.MaxHeldBytes = 0 }},
		{"max_unsent_bytes", func(c *Config) { c.MaxUnsentBytes = 0 }},
		{"dialects", func(c *Config) { c.Dialects = []string{"genai", "openinference2"} }},
		{"orphans", func(c *Config) { c.Orphans = "keep" }},
		{"duplicates", func(c *Config) { c.Duplicates = "" }},
		{"timeout_classification.retention", func(c *Config) { c.TimeoutClassification.Retention = 0 }},
		{"timeout_classification.max_tracked_operations", func(c *Config) { c.TimeoutClassification.MaxTrackedOperations = 0 }},
		{"duration_normalization.canonical", func(c *Config) { c.DurationNormalization.Canonical = "" }},
	}
	for _, tt := range refused {
		t.Run("refused/"+tt.key, func(t *testing.T) {
			c := NewFactory().CreateDefaultConfig().(*Config)
			tt.mutate(c)
			err := c.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.key)
		})
	}

	t.Run("dialects: only the configured formats are recognised", func(t *testing.T) {
		r := newRig(t, withConfig(func(c *Config) { c.Dialects = []string{"genai"} }))
		r.logRecords(ctClaudeDecision("toolu_1", "accept", 100), ctClaudeResult("toolu_1", 200))
		r.spans(ctChat(1, 1, 0, 0, 100, "c1"), ctTool(1, 2, 0, "c1", 110, 150))
		assert.Equal(t, map[string][]string{"c1": {"span:paired"}}, r.marks(nil))
		assert.Equal(t, int64(2), r.sum("otelcol_processor_toolpair_records_unrecognized", map[string]string{"otel.signal": "logs"}))
	})
	t.Run("synthesize false: interrupted calls are counted, nothing is emitted", func(t *testing.T) {
		r := newRig(t, withConfig(func(c *Config) { c.Synthesize = false }))
		r.spans(ctChat(1, 1, 0, 0, 100, "c1"))
		r.logRecords(ctClaudeDecision("toolu_1", "accept", 100))
		r.advance(10 * time.Minute)
		assert.Len(t, r.outSpans(), 1)
		assert.Len(t, r.outLogs(), 1)
		assert.Equal(t, int64(2), r.sum("otelcol_processor_toolpair_outcomes", map[string]string{"toolpair.outcome": "interrupted", "toolpair.interrupt.reason": "expired"}))
		r.checkConservation()
	})
	t.Run("timeout_classification.enabled false: timeout records untouched", func(t *testing.T) {
		r := newRig(t, withConfig(func(c *Config) { c.TimeoutClassification.Enabled = false }))
		r.spans(ctWith(ctChat(1, 1, 0, 0, 100), "error.type", "timeout"))
		out := r.outSpans()
		require.Len(t, out, 1)
		assert.Equal(t, map[string]any{"gen_ai.operation.name": "chat", "error.type": "timeout"}, out[0].Attributes().AsRaw())
	})
	t.Run("pairing_timeout and orphan_grace as configured", func(t *testing.T) {
		r := newRig(t, withConfig(func(c *Config) { c.PairingTimeout, c.OrphanGrace = 3*time.Second, time.Second }))
		r.spans(ctChat(1, 1, 0, 0, 100, "c1"), ctTool(1, 3, 0, "ghost", 110, 150))
		// The component's own ticker (every 100ms of real time here) expires what is due.
		const orphans = "otelcol_processor_toolpair_outcomes"
		r.clock.Advance(900 * time.Millisecond)
		assert.Never(t, func() bool { return len(r.marks(nil)) > 0 }, 300*time.Millisecond, 10*time.Millisecond,
			"nothing is due before orphan_grace")
		r.advanceUntil(200*time.Millisecond, func() bool {
			return r.sum(orphans, map[string]string{"toolpair.outcome": "orphan"}) == 1 && len(r.marks(nil)) == 1
		}, "the ticker settles the result orphan after orphan_grace")
		assert.Equal(t, map[string][]string{"ghost": {"span:orphan"}}, r.marks(nil))
		r.advanceUntil(2*time.Second, func() bool {
			return r.sum(orphans, map[string]string{"toolpair.outcome": "interrupted"}) == 1 && len(r.marks(nil)) == 2
		}, "the ticker expires the call after pairing_timeout")
		assert.Equal(t, map[string][]string{"ghost": {"span:orphan"}, "c1": {"span:interrupted/expired+synthetic"}}, r.marks(nil))
	})
}
