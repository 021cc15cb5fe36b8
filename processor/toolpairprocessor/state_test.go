package toolpairprocessor

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/custom"
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
