// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/custom"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadatatest"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/statefile"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/statestore"
)

// TestStateFingerprint: the fingerprint changes with the keys that give call keys their
// meaning, and with nothing else.
func TestStateFingerprint(t *testing.T) {
	base := createDefaultConfig().(*Config)
	fp := stateFingerprint(base)
	for name, mutate := range map[string]func(*Config){
		"scope_attributes":  func(c *Config) { c.ConversationAttributes = []string{"session.id"} },
		"tenant_attributes": func(c *Config) { c.TenantAttributes = []string{"host.name"} },
		"dialects":          func(c *Config) { c.Dialects = []string{DialectGenAI} },
		"custom_dialects":   func(c *Config) { c.CustomDialects = []custom.Config{{Name: "mine", Context: custom.ContextSpan}} },
	} {
		c := createDefaultConfig().(*Config)
		mutate(c)
		assert.NotEqual(t, fp, stateFingerprint(c), name)
	}
	c := createDefaultConfig().(*Config)
	c.PairingTimeout *= 2
	slices.Reverse(c.Dialects)
	assert.Equal(t, fp, stateFingerprint(c), "order of dialects and other keys do not matter")
}

// TestStateFormat3Discarded: a checkpoint of format 3, as the release before wrote it, is
// discarded once with reason version: the start is clean, and the next checkpoint, in format
// 4, restores.
func TestStateFormat3Discarded(t *testing.T) {
	v3, err := os.ReadFile("internal/statefile/testdata/state-v3.bin")
	require.NoError(t, err)
	e, clock := newMemStorage(), newTestClock()
	run1 := startRun(t, clock, e, nil)
	run1.spans(ctChat(1, 1, 0, 0, 1000, "c1"))
	run1.shutdown()
	e.mu.Lock()
	for k := range e.data {
		if strings.HasPrefix(k, statestore.StateKeyPrefix) {
			e.data[k] = v3
		}
	}
	e.mu.Unlock()

	run2 := startRun(t, clock, e, nil)
	assert.Equal(t, 0, run2.stats().Pending, "a clean start")
	metadatatest.AssertEqualProcessorToolpairStateDiscarded(t, run2.tel, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.String("reason", "version"))},
	}, metricdatatest.IgnoreTimestamp())
	run2.spans(ctChat(1, 2, 0, 2000, 3000, "c2"))
	run2.shutdown()
	for k, v := range e.snapshot() {
		if strings.HasPrefix(k, statestore.StateKeyPrefix) {
			assert.Equal(t, statefile.StateMagic+"\x04", string(v[:5]), "%s written in format 4", k)
		}
	}
	run3 := startRun(t, clock, e, nil)
	assert.Equal(t, 1, run3.stats().Pending, "restored from format 4")
}
