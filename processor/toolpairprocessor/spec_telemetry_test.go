// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

// Specification section 7: the processor's own telemetry.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestContractS7Telemetry: the processor's own metrics through the component's
// TelemetrySettings.MeterProvider: calls by outcome (and reason), records not recognised,
// pending calls and waiting results (gauges), malformed inputs; conservation at any moment,
// including while calls are pending and results waiting.
func TestContractS7Telemetry(t *testing.T) {
	r := newRig(t, withConfig(func(c *Config) { c.Duplicates = DispositionMark }))
	r.spans(
		ctChat(1, 1, 7, 0, 100, "p1", "p2", "n1"), ctTool(1, 2, 7, "p1", 100, 200), ctTool(1, 3, 7, "p2", 100, 200),
		ctChat(1, 4, 7, 300, 400, "e1"), // next_step closes n1; e1 stays pending
		ctTool(1, 5, 7, "w1", 100, 200), // waits for its use
		ctSpan{trace: 1, id: 6, name: "GET /", start: 0, end: 1},
		ctSpan{trace: 1, id: 8, name: "chat bad", start: 0, end: 1, attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.output.messages": `[{"parts":[{"type":"tool_call","id":null}]}]`}},
	)
	r.logRecords(ctClaudeDecision("toolu_r", "reject", 100), ctLog{time: 5, body: "hello"})
	r.spans(ctTool(1, 9, 7, "p1", 100, 210)) // a duplicate: another record of p1's result
	r.spans(ctTool(1, 9, 7, "p1", 100, 210)) // that record delivered again: not counted again
	const m = "otelcol_processor_toolpair_"
	assert.Equal(t, int64(2), r.sum(m+"pending_calls", nil), "n1 (closing waits orphan_grace) and e1")
	assert.Equal(t, int64(1), r.sum(m+"waiting_results", nil), "w1")
	r.checkConservation()

	r.advance(31 * time.Second)
	assert.Equal(t, int64(1), r.sum(m+"pending_calls", nil), "e1")
	assert.Equal(t, int64(0), r.sum(m+"waiting_results", nil))
	r.checkConservation()
	r.advance(10 * time.Minute)
	r.checkConservation()

	outcome := func(o, reason string) int64 {
		match := map[string]string{"toolpair.outcome": o}
		if reason != "" {
			match["toolpair.interrupt.reason"] = reason
		}
		return r.sum(m+"outcomes", match)
	}
	assert.Equal(t, int64(2), outcome("paired", ""))
	assert.Equal(t, int64(1), outcome("interrupted", "next_step"))
	assert.Equal(t, int64(1), outcome("interrupted", "expired"))
	assert.Equal(t, int64(1), outcome("rejected", ""))
	assert.Equal(t, int64(1), outcome("duplicate", ""))
	assert.Equal(t, int64(1), outcome("orphan", ""))
	assert.Equal(t, int64(5), r.sum(m+"uses", nil))
	assert.Equal(t, int64(4), r.sum(m+"results", nil))
	assert.Equal(t, int64(1), r.sum(m+"records_unrecognized", map[string]string{"otel.signal": "traces"}))
	assert.Equal(t, int64(1), r.sum(m+"records_unrecognized", map[string]string{"otel.signal": "logs"}))
	assert.Equal(t, int64(1), r.sum(m+"malformed", map[string]string{"toolpair.dialect": "genai", "reason": "null_call_id"}))
	assert.Equal(t, int64(2), r.sum(m+"synthetic_records", map[string]string{"otel.signal": "traces"}))
	assert.Equal(t, int64(1), r.sum(m+"redeliveries", map[string]string{"otel.signal": "traces"}), "outside both balances")
}
