// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
)

// TestBatchEmptiedByHoldingIsNotForwarded: a batch whose only records are held (results
// before their uses) is not passed on empty; a batch with a held record and another record
// passes the other one on; the held record leaves, marked, once its use comes. Both signals.
func TestBatchEmptiedByHoldingIsNotForwarded(t *testing.T) {
	t.Run("traces", func(t *testing.T) {
		b := newRig(t)
		ctx := context.Background()
		require.NoError(t, b.traces.ConsumeTraces(ctx, spanBatchOf(toolSpan(7, "call_a", 2000))))
		assert.Empty(t, b.tsink.AllTraces(), "a batch emptied by holding is not forwarded")

		require.NoError(t, b.traces.ConsumeTraces(ctx, spanBatchOf(toolSpan(7, "call_b", 2000), chatSpan(8, 500))))
		require.Len(t, b.tsink.AllTraces(), 1)
		spans := allSpans(b.tsink.AllTraces()[0])
		require.Len(t, spans, 1, "the held span leaves the batch, the other stays")
		assert.Empty(t, strAttr(spans[0], "gen_ai.tool.call.id"))

		require.NoError(t, b.traces.ConsumeTraces(ctx, spanBatchOf(chatSpan(7, 1000, "call_a", "call_b"))))
		outcomes := map[string]string{}
		for _, td := range b.tsink.AllTraces() {
			for _, s := range allSpans(td) {
				if id := strAttr(s, "gen_ai.tool.call.id"); id != "" {
					outcomes[id] = strAttr(s, "toolpair.outcome")
				}
			}
		}
		assert.Equal(t, map[string]string{"call_a": "paired", "call_b": "paired"}, outcomes)
	})
	t.Run("logs", func(t *testing.T) {
		b := newRig(t)
		ctx := context.Background()
		require.NoError(t, b.logs.ConsumeLogs(ctx, ctLogs(ctClaudeResult("toolu_1", 300))))
		assert.Empty(t, b.lsink.AllLogs(), "a batch emptied by holding is not forwarded")

		require.NoError(t, b.logs.ConsumeLogs(ctx, ctLogs(ctClaudeDecision("toolu_1", "accept", 100))))
		var results []plog.LogRecord
		for _, lr := range allLogs(b.lsink) {
			if logAttr(lr, "event.name") == "tool_result" {
				results = append(results, lr)
			}
		}
		require.Len(t, results, 1)
		assert.Equal(t, "paired", logAttr(results[0], "toolpair.outcome"))
	})
}
