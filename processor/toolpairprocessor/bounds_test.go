package toolpairprocessor

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCallsPerRecordBound: a record announcing more calls than max_calls_per_record passes
// unchanged; the first max_calls_per_record calls are tracked (each closed by the session's
// pairing_timeout gets its synthetic span), the others are not and are counted malformed under
// too_many_calls (specification section 6).
func TestCallsPerRecordBound(t *testing.T) {
	const bound, announced = 16, 100
	r := newRig(t, tracesOnly(), withConfig(func(c *Config) { c.MaxCallsPerRecord = bound }))
	ids := make([]string, announced)
	for i := range ids {
		ids[i] = fmt.Sprintf("call_%03d", i)
	}
	r.spans(ctChat(1, 2, 0, 1000, 1100, ids...))
	out := r.outSpans()
	require.Len(t, out, 1, "the record passes")
	assert.Equal(t, announced, len(ids))
	assert.Equal(t, uint64(bound), r.stats().UsesSeen, "only the first %d calls are tracked", bound)
	m := "otelcol_processor_toolpair_"
	assert.Equal(t, int64(announced-bound), r.sum(m+"malformed", map[string]string{"toolpair.dialect": "genai", "reason": "too_many_calls"}))

	r.advance(2 * createDefaultConfig().(*Config).PairingTimeout)
	synthetic := 0
	for _, s := range r.outSpans() {
		if strAttr(s, "toolpair.outcome") == "interrupted" {
			synthetic++
		}
	}
	assert.Equal(t, bound, synthetic, "a synthetic span for each tracked call, none for the others")
}
