// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"fmt"
	"strings"
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

// TestHeldResultsBoundedInBytes: result spans waiting for their use count their size; past
// max_held_bytes the oldest leaves at once, orphan, as it would at orphan_grace, and the
// others still pair when their use comes (specification section 6).
func TestHeldResultsBoundedInBytes(t *testing.T) {
	r := newRig(t, tracesOnly(), withConfig(func(c *Config) { c.MaxHeldBytes = 5000 }))
	big := strings.Repeat("x", 2000)
	result := func(trace byte, id string, endMs int64) ctSpan {
		s := toolSpan(trace, id, endMs)
		s.attrs["gen_ai.tool.call.result"] = big
		return s
	}
	r.consume(spanBatchOf(chatSpan(1, 100, "seen"))) // the conversation has seen a use
	r.consume(spanBatchOf(result(1, "a", 200)))
	r.consume(spanBatchOf(result(1, "b", 300)))
	assert.Empty(t, toolSpans(r.output()), "two results held, under the bound")
	r.consume(spanBatchOf(result(1, "c", 400)))
	got := toolSpans(r.output())
	require.Len(t, got["a"], 1, "the third result pushes the oldest out")
	assert.Equal(t, "orphan", strAttr(got["a"][0], "toolpair.outcome"))
	assert.Empty(t, got["b"])
	assert.Empty(t, got["c"])

	r.consume(spanBatchOf(chatSpan(1, 500, "b", "c")))
	got = toolSpans(r.output())
	for _, id := range []string{"a", "b", "c"} {
		require.Len(t, got[id], 1, id)
	}
	assert.Equal(t, "paired", strAttr(got["b"][0], "toolpair.outcome"))
	assert.Equal(t, "paired", strAttr(got["c"][0], "toolpair.outcome"))
	r.checkConservation()
}
