// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// TestCodexNextRequestClosesUnansweredCall removes the codex.tool_result from Codex's real
// normal capture: the turn's next codex.api_request (the model request that follows the tool)
// interrupts the call with reason next_step, ending at that request's time, long before
// pairing_timeout. In the untouched captures every call stays paired (see
// TestAgentLogsPairDecisionWithResult).
func TestCodexNextRequestClosesUnansweredCall(t *testing.T) {
	ld := readAgentLogs(t, "codex", "normal")
	var requests []pcommon.Timestamp
	ld.ResourceLogs().RemoveIf(func(rl plog.ResourceLogs) bool {
		rl.ScopeLogs().RemoveIf(func(sl plog.ScopeLogs) bool {
			sl.LogRecords().RemoveIf(func(lr plog.LogRecord) bool {
				switch logAttr(lr, "event.name") {
				case "codex.api_request":
					requests = append(requests, lr.ObservedTimestamp())
				case "codex.tool_result":
					return true
				}
				return false
			})
			return sl.LogRecords().Len() == 0
		})
		return rl.ScopeLogs().Len() == 0
	})
	require.Len(t, requests, 2)
	b := newRig(t)
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), ld))
	b.advance(time.Minute)
	synthetic := syntheticLogs(b)
	require.Len(t, synthetic, 1)
	assert.Equal(t, "call_mock_normal_01", logAttr(synthetic[0], "gen_ai.tool.call.id"))
	assert.Equal(t, "next_step", logAttr(synthetic[0], "toolpair.interrupt.reason"))
	assert.Equal(t, requests[1], synthetic[0].Timestamp())
}
