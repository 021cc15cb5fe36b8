package toolpairprocessor

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
)

func readCodexLogs(t *testing.T, scenario string) plog.Logs {
	t.Helper()
	ld, err := golden.ReadLogs(filepath.Join("..", "..", "testdata", "codex", scenario, "logs.json"))
	require.NoError(t, err)
	return ld
}

func TestCodexLogsPairDecisionWithResult(t *testing.T) {
	for _, scenario := range []string{"normal", "parallel"} {
		t.Run(scenario, func(t *testing.T) {
			b := newBothPipelines(t, nil)
			ld := readCodexLogs(t, scenario)
			n := ld.LogRecordCount()
			require.NoError(t, b.logs.ConsumeLogs(context.Background(), ld))
			b.shutdown()
			logs := allLogs(b.lsink)
			assert.Len(t, logs, n)
			decided := map[string]int64{}
			for _, lr := range logs {
				if logAttr(lr, "event.name") == "codex.tool_decision" {
					require.Zero(t, lr.Timestamp(), "Codex sends timeUnixNano 0")
					decided[logAttr(lr, "call_id")] = int64(lr.ObservedTimestamp())
				}
			}
			require.NotEmpty(t, decided)
			results := 0
			for _, lr := range logs {
				if logAttr(lr, "event.name") != "codex.tool_result" {
					continue
				}
				results++
				id := logAttr(lr, "call_id")
				assert.Equal(t, "paired", logAttr(lr, "toolpair.outcome"), id)
				d, _ := lr.Attributes().Get("toolpair.call.duration_ms")
				assert.Equal(t, (int64(lr.ObservedTimestamp())-decided[id])/1e6, d.Int(), id)
			}
			assert.Equal(t, len(decided), results)
		})
	}
}

func TestCodexInterruptedCallGetsSyntheticLogRecord(t *testing.T) {
	b := newBothPipelines(t, nil)
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), readCodexLogs(t, "interrupt_sigterm")))
	b.advance(10 * time.Minute)
	var synthetic []plog.LogRecord
	for _, lr := range allLogs(b.lsink) {
		if lr.EventName() == "toolpair.tool_call.interrupted" {
			synthetic = append(synthetic, lr)
		}
	}
	require.Len(t, synthetic, 1)
	assert.Equal(t, "tool call call_mock_interrupt_01 (exec_command) interrupted: expired", synthetic[0].Body().Str())
	assert.NotEmpty(t, logAttr(synthetic[0], "conversation.id"))
}
