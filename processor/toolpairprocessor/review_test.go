package toolpairprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadata"
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
	pl.consume(spanBatchOf(chatSpan(1, 1000, "c1"), next))
	pl.consume(spanBatchOf(toolSpan(1, "c1", 1300))) // the tool span, exported late
	got := toolSpans(pl.output())["c1"]
	require.Len(t, got, 1, "the real result record is never dropped behind an echo")
	assert.Equal(t, "paired", strAttr(got[0], "toolpair.outcome"), "its source's first record of the call (section 2)")
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

// TestTwoTracesPipelinesOfOneComponent: a synthetic span goes to the pipeline of the span
// that announced its call, not to whichever pipeline started last.
func TestTwoTracesPipelinesOfOneComponent(t *testing.T) {
	clock := newTestClock()
	f := newFactoryWithClock(clock)
	cfg := f.CreateDefaultConfig().(*Config)
	set := processortest.NewNopSettings(metadata.Type)
	sinkA, sinkB := new(consumertest.TracesSink), new(consumertest.TracesSink)
	a, err := f.CreateTraces(context.Background(), set, cfg, sinkA)
	require.NoError(t, err)
	bp, err := f.CreateTraces(context.Background(), set, cfg, sinkB)
	require.NoError(t, err)
	require.NoError(t, a.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, bp.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, a.ConsumeTraces(context.Background(), spanBatchOf(chatSpan(1, 1000, "c1"))))
	require.NoError(t, a.Shutdown(context.Background()))
	require.NoError(t, bp.Shutdown(context.Background()))
	assert.Equal(t, 2, sinkA.SpanCount(), "the chat span and its call's synthetic span")
	assert.Zero(t, sinkB.SpanCount())
}

func TestDurationNormalizationOnResultRecords(t *testing.T) {
	for _, enabled := range []bool{true, false} {
		b := newBothPipelines(t, func(c *Config) { c.DurationNormalization.Enabled = enabled })
		line := transcriptLine("user", "", map[string]any{"type": "tool_result", "tool_use_id": "a"})
		body := line.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body().Map()
		require.NoError(t, body.FromRaw(map[string]any{
			"type": "user", "sessionId": "sess", "timestamp": "2026-02-10T21:12:02.480Z",
			"message":    map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "a"}}},
			"durationMs": "461", "details": map[string]any{"durationMs": int64(3)},
		}))
		other := transcriptLine("assistant", "m1") // not a result: never touched
		obody := other.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body().Map()
		obody.PutInt("durationMs", 5)
		obody.PutEmptyMap("details").PutInt("durationMs", 1)
		require.NoError(t, b.logs.ConsumeLogs(context.Background(), other))
		require.NoError(t, b.logs.ConsumeLogs(context.Background(), line))
		b.shutdown()
		var got []int64
		for _, lr := range allLogs(b.lsink) {
			d, _ := lr.Body().Map().Get("details")
			v, _ := d.Map().Get("durationMs")
			got = append(got, v.Int())
		}
		if enabled {
			assert.Equal(t, []int64{1, 461}, got)
		} else {
			assert.Equal(t, []int64{1, 3}, got)
		}
	}
}

// TestRejectedCallHasNoSyntheticRecord: a Claude Code decision "reject" resolves its call as
// rejected; no synthetic record follows, even at shutdown.
func TestRejectedCallHasNoSyntheticRecord(t *testing.T) {
	b := newBothPipelines(t, nil)
	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.Body().SetStr("claude_code.tool_decision")
	lr.SetTimestamp(1_000_000)
	require.NoError(t, lr.Attributes().FromRaw(map[string]any{
		"event.name": "tool_decision", "tool_use_id": "toolu_r", "tool_name": "Bash", "decision": "reject", "session.id": "s",
	}))
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), ld))
	b.advance(11 * time.Minute)
	b.shutdown()
	assert.Len(t, allLogs(b.lsink), 1, "the decision only")
	s := b.shared.engine.Stats()
	assert.Equal(t, uint64(1), s.Rejected)
	assert.Zero(t, s.InterruptedTotal())
}
