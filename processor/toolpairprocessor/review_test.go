package toolpairprocessor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
)

// transcriptLine builds a log batch holding one transcript line given as a map body.
func transcriptLine(typ, msgID string, blocks ...map[string]any) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "t")
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	content := make([]any, len(blocks))
	for i, b := range blocks {
		content[i] = b
	}
	msg := map[string]any{"role": typ, "content": content}
	if msgID != "" {
		msg["id"] = msgID
	}
	if err := lr.Body().SetEmptyMap().FromRaw(map[string]any{
		"type": typ, "sessionId": "sess", "timestamp": "2026-02-10T21:12:02.480Z", "message": msg,
	}); err != nil {
		panic(err)
	}
	return ld
}

func TestRecordWithSeveralResultsIsNeverHeldOrDuplicated(t *testing.T) {
	b := newBothPipelines(t, nil)
	two := transcriptLine("user", "",
		map[string]any{"type": "tool_result", "tool_use_id": "a"},
		map[string]any{"type": "tool_result", "tool_use_id": "b"})
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), two))
	b.shutdown()
	logs := allLogs(b.lsink)
	require.Len(t, logs, 1, "passed once, not held and released per call")
	assert.Equal(t, "standalone", logAttr(logs[0], "toolpair.outcome"))
}

func TestRecordWithAPairedAndADuplicateResultIsKept(t *testing.T) {
	b := newBothPipelines(t, nil)
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), transcriptLine("assistant", "m1",
		map[string]any{"type": "tool_use", "id": "a", "name": "Bash"},
		map[string]any{"type": "tool_use", "id": "b", "name": "Bash"})))
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), transcriptLine("user", "",
		map[string]any{"type": "tool_result", "tool_use_id": "a"})))
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), transcriptLine("user", "",
		map[string]any{"type": "tool_result", "tool_use_id": "a"},
		map[string]any{"type": "tool_result", "tool_use_id": "b"})))
	b.shutdown()
	assert.Len(t, allLogs(b.lsink), 3, "the line resolving b is kept although it repeats a")
}

func TestEchoThenToolSpanKeepsTheToolSpan(t *testing.T) {
	pl := newPipeline(t, nil)
	next := spanSpec{trace: 1, name: "chat m", start: 1400, end: 1600, attrs: map[string]any{
		"gen_ai.operation.name": "chat",
		"gen_ai.input.messages": `[{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":"ok"}]}]`,
	}}
	pl.consume(batch(chatSpan(1, 1000, "c1"), next))
	pl.consume(batch(toolSpan(1, "c1", 1300))) // the tool span, exported late
	got := toolSpans(pl.output())["c1"]
	require.Len(t, got, 1, "the real result record is never dropped behind an echo")
	assert.Equal(t, "duplicate", strAttr(got[0], "toolpair.outcome"))
}

func TestRecordsAfterTheFirstPipelineShutdownAreReleased(t *testing.T) {
	b := newBothPipelines(t, nil)
	require.NoError(t, b.traces.Shutdown(context.Background()))
	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.Body().SetStr("claude_code.tool_result")
	lr.Attributes().PutStr("tool_use_id", "toolu_x")
	lr.Attributes().PutStr("session.id", "s")
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), ld))
	require.NoError(t, b.logs.Shutdown(context.Background()))
	logs := allLogs(b.lsink)
	require.Len(t, logs, 1)
	assert.Equal(t, "standalone", logAttr(logs[0], "toolpair.outcome"))
	assert.Zero(t, b.shared.engine.Stats().Waiting)
}
