// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadatatest"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/timeout"
)

// timeoutAttrs returns the toolpair.timeout.* attributes of a record.
func timeoutAttrs(attrs pcommon.Map) map[string]any {
	out := map[string]any{}
	for _, k := range []string{timeout.AttrPhase, timeout.AttrActiveTools, timeout.AttrActiveToolName, timeout.AttrActiveToolCallID, timeout.AttrActiveToolElapsed} {
		if v, ok := attrs.Get(k); ok {
			out[k] = v.AsRaw()
		}
	}
	return out
}

// timeoutRecord is one output record carrying timeout attributes.
type timeoutRecord struct {
	what  string // "span <name>", "log <event.name>", "transcript <type>"
	attrs map[string]any
}

// timeoutRecords lists the output records that carry any toolpair.timeout.* attribute.
func (b *rig) timeoutRecords(t *testing.T) []timeoutRecord {
	t.Helper()
	var out []timeoutRecord
	for _, td := range b.tsink.AllTraces() {
		for _, s := range allSpans(td) {
			if a := timeoutAttrs(s.Attributes()); len(a) > 0 {
				out = append(out, timeoutRecord{what: "span " + s.Name(), attrs: a})
			}
		}
	}
	for _, lr := range allLogs(b.lsink) {
		a := timeoutAttrs(lr.Attributes())
		if len(a) == 0 {
			continue
		}
		what := "log " + logAttr(lr, "event.name")
		if _, ok := lr.Attributes().Get("log.file.path"); ok {
			var line struct{ Type string }
			require.NoError(t, json.Unmarshal([]byte(lr.Body().Str()), &line))
			what = "transcript " + line.Type
		}
		out = append(out, timeoutRecord{what: what, attrs: a})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].what < out[j].what })
	return out
}

// consumeCapture sends a capture's traces.json, logs.json and transcript.jsonl (each when
// present) through one component.
func (b *rig) consumeCapture(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "traces.json")); err == nil {
		td, err := golden.ReadTraces(filepath.Join(dir, "traces.json"))
		require.NoError(t, err)
		require.NoError(t, b.traces.ConsumeTraces(context.Background(), td))
	}
	if _, err := os.Stat(filepath.Join(dir, "logs.json")); err == nil {
		ld, err := golden.ReadLogs(filepath.Join(dir, "logs.json"))
		require.NoError(t, err)
		require.NoError(t, b.logs.ConsumeLogs(context.Background(), ld))
	}
	if _, err := os.Stat(filepath.Join(dir, "transcript.jsonl")); err == nil {
		for _, ld := range transcriptBatches(t, filepath.Join(dir, "transcript.jsonl")) {
			require.NoError(t, b.logs.ConsumeLogs(context.Background(), ld))
		}
	}
}

// transcriptCallElapsed reads a Claude Code transcript with encoding/json and returns the time
// from the assistant line announcing call id to the line holding its result, in ms.
func transcriptCallElapsed(t *testing.T, path, id string) int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var use, result time.Time
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 32<<20)
	for sc.Scan() {
		var l struct {
			Type      string    `json:"type"`
			Timestamp time.Time `json:"timestamp"`
			Message   struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil || (l.Type != "assistant" && l.Type != "user") {
			continue
		}
		var blocks []struct {
			Type      string `json:"type"`
			ID        string `json:"id"`
			ToolUseID string `json:"tool_use_id"`
		}
		if json.Unmarshal(l.Message.Content, &blocks) != nil {
			continue
		}
		for _, bl := range blocks {
			if bl.Type == "tool_use" && bl.ID == id && use.IsZero() {
				use = l.Timestamp
			}
			if bl.Type == "tool_result" && bl.ToolUseID == id && result.IsZero() {
				result = l.Timestamp
			}
		}
	}
	require.False(t, use.IsZero())
	require.False(t, result.IsZero())
	return result.Sub(use).Milliseconds()
}

// TestTimeoutsOnRealCaptures runs every agent capture of testdata through one component (its
// spans, log events and transcript together): only the timeout records of the timeout
// scenarios get timeout attributes, with the phase of specification section 4.
func TestTimeoutsOnRealCaptures(t *testing.T) {
	provider := map[string]any{timeout.AttrPhase: "provider", timeout.AttrActiveTools: int64(0)}
	nobg := filepath.Join("..", "..", "testdata", "claude", "tool_timeout_nobg")
	tests := []struct {
		dir  string
		want []timeoutRecord
	}{
		{dir: "aisdk/llm_timeout", want: []timeoutRecord{
			// The chat span is a model call; its step and agent parents end 0.4 and 0.5 ms
			// later, while it is still counted in flight, and no tool call is.
			{"span chat gpt-4.1-mini", provider},
			{"span invoke_agent gpt-4.1-mini", provider},
			{"span step 2", provider},
		}},
		{dir: "codex/llm_timeout", want: []timeoutRecord{
			// The idle timeout, then the stream disconnected by it.
			{"log codex.sse_event", provider},
			{"log codex.sse_event", provider},
		}},
		{dir: "claude/tool_timeout_nobg", want: []timeoutRecord{
			// Only the transcript's tool_result says "Command timed out after 2s"; the OTel
			// records say "Shell command failed". The call itself is the active tool.
			{"transcript user", map[string]any{
				timeout.AttrPhase:             "tool_execution",
				timeout.AttrActiveTools:       int64(1),
				timeout.AttrActiveToolName:    "Bash",
				timeout.AttrActiveToolCallID:  "toolu_mock_tool_timeout_01",
				timeout.AttrActiveToolElapsed: transcriptCallElapsed(t, filepath.Join(nobg, "transcript.jsonl"), "toolu_mock_tool_timeout_01"),
			}},
		}},
		// An overload (HTTP 529) is an error, not a timeout: in spans, events and transcript.
		{dir: "claude/llm_error"},
		{dir: "claude/normal"},
		{dir: "claude/parallel"},
		{dir: "claude/interrupt_sigterm"},
		{dir: "codex/normal"},
		{dir: "codex/parallel"},
		{dir: "codex/interrupt_sigterm"},
		{dir: "aisdk/normal"},
		{dir: "aisdk/parallel"},
		{dir: "aisdk/interrupt_sigterm"},
		{dir: "aisdk/killed_during_tool"},
		{dir: "gemini/normal"},
		{dir: "gemini/interrupt_sigterm"},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			b := newRig(t)
			b.consumeCapture(t, filepath.Join("..", "..", "testdata", filepath.FromSlash(tt.dir)))
			b.shutdown()
			got := b.timeoutRecords(t)
			if len(tt.want) == 0 {
				assert.Empty(t, got)
				return
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestTimeoutsOnRealPiAndOpenClawTranscripts: pi and OpenClaw write their tool timeouts into
// the tool result (pi: the text "Command timed out after 2 seconds"; OpenClaw: also
// details.timedOut); the call itself is the active tool. Their other sessions, including pi's
// 529 overload, have no timeout.
func TestTimeoutsOnRealPiAndOpenClawTranscripts(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "transcripts")
	tests := []struct {
		file string
		want []timeoutRecord
	}{
		{file: "pi/tool_timeout.jsonl", want: []timeoutRecord{{"transcript message", map[string]any{
			timeout.AttrPhase: "tool_execution", timeout.AttrActiveTools: int64(1),
			timeout.AttrActiveToolName: "bash", timeout.AttrActiveToolCallID: "toolu_mock_tool_timeout_01",
			timeout.AttrActiveToolElapsed: piCallElapsed(t, filepath.Join(dir, "pi", "tool_timeout.jsonl"), "toolu_mock_tool_timeout_01"),
		}}}},
		{file: "openclaw/tool_timeout.jsonl", want: []timeoutRecord{{"transcript message", map[string]any{
			timeout.AttrPhase: "tool_execution", timeout.AttrActiveTools: int64(1),
			timeout.AttrActiveToolName: "exec", timeout.AttrActiveToolCallID: "toolu_mock_tool_timeout_01",
			timeout.AttrActiveToolElapsed: piCallElapsed(t, filepath.Join(dir, "openclaw", "tool_timeout.jsonl"), "toolu_mock_tool_timeout_01"),
		}}}},
		{file: "pi/llm_error.jsonl"},
		{file: "pi/normal.jsonl"},
		{file: "pi/parallel.jsonl"},
		{file: "pi/interrupt_sigterm.jsonl"},
		{file: "openclaw/normal.jsonl"},
		{file: "openclaw/interrupt_sigterm.jsonl"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b := newRig(t)
			for _, ld := range transcriptBatches(t, filepath.Join(dir, filepath.FromSlash(tt.file))) {
				require.NoError(t, b.logs.ConsumeLogs(context.Background(), ld))
			}
			b.shutdown()
			got := b.timeoutRecords(t)
			if len(tt.want) == 0 {
				assert.Empty(t, got)
				return
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// piCallElapsed reads a pi or OpenClaw transcript with encoding/json and returns the time from
// the assistant entry announcing call id (its message.timestamp, else its entry timestamp) to
// the entry holding its result, in ms, as the transcript dialect times them.
func piCallElapsed(t *testing.T, path, id string) int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var use, result int64
	for _, line := range bytes.Split(data, []byte("\n")) {
		var e struct {
			Timestamp time.Time `json:"timestamp"`
			Message   struct {
				Role       string `json:"role"`
				Timestamp  int64  `json:"timestamp"`
				ToolCallID string `json:"toolCallId"`
				Content    []struct {
					Type string `json:"type"`
					ID   string `json:"id"`
				} `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &e) != nil {
			continue
		}
		at := e.Timestamp.UnixMilli()
		if e.Message.Timestamp != 0 {
			at = e.Message.Timestamp
		}
		for _, c := range e.Message.Content {
			if e.Message.Role == "assistant" && c.Type == "toolCall" && c.ID == id && use == 0 {
				use = at
			}
		}
		if e.Message.Role == "toolResult" && e.Message.ToolCallID == id && result == 0 {
			result = at
		}
	}
	require.NotZero(t, use)
	require.NotZero(t, result)
	return result - use
}

// TestTimeoutsOnRealTranscripts: the 395 calls of the real Claude Code sessions include no
// timeout, and none is reported.
func TestTimeoutsOnRealTranscripts(t *testing.T) {
	b := newRig(t)
	for _, path := range transcriptFiles(t) {
		for _, ld := range transcriptBatches(t, path) {
			require.NoError(t, b.logs.ConsumeLogs(context.Background(), ld))
		}
	}
	b.shutdown()
	assert.Empty(t, b.timeoutRecords(t))
}

// Builders of Claude Code records for the rule table: log events and spans of one session.
const (
	ruleSession = "sess-1"
	ruleService = "claude-code"
)

var ruleT0 = time.Unix(1_795_323_258, 0)

func at(ms int64) time.Time { return ruleT0.Add(time.Duration(ms) * time.Millisecond) }

type ruleLog struct {
	event   string // without the claude_code. prefix
	at      int64  // ms after ruleT0
	session string
	attrs   map[string]any
}

type ruleSpan struct {
	name       string
	start, end int64 // ms after ruleT0
	status     string
	attrs      map[string]any
}

func ruleDecision(id, tool string, ms int64) ruleLog {
	return ruleLog{event: "tool_decision", at: ms, attrs: map[string]any{"tool_use_id": id, "tool_name": tool, "decision": "accept"}}
}

func ruleResult(id, tool string, ms, durationMs int64) ruleLog {
	return ruleLog{event: "tool_result", at: ms, attrs: map[string]any{"tool_use_id": id, "tool_name": tool, "success": "true", "duration_ms": durationMs}}
}

func ruleLogs(records []ruleLog) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", ruleService)
	lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
	for _, r := range records {
		lr := lrs.AppendEmpty()
		lr.Body().SetStr("claude_code." + r.event)
		lr.SetTimestamp(pcommon.NewTimestampFromTime(at(r.at)))
		_ = lr.Attributes().FromRaw(r.attrs)
		lr.Attributes().PutStr("event.name", r.event)
		session := r.session
		if session == "" {
			session = ruleSession
		}
		lr.Attributes().PutStr("session.id", session)
	}
	return ld
}

func ruleTraces(spans []ruleSpan) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", ruleService)
	ss := rs.ScopeSpans().AppendEmpty().Spans()
	for i, r := range spans {
		s := ss.AppendEmpty()
		s.SetName(r.name)
		s.SetTraceID(pcommon.TraceID{1})
		s.SetSpanID(pcommon.SpanID{byte(i + 1)})
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(at(r.start)))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(at(r.end)))
		if r.status != "" {
			s.Status().SetCode(ptrace.StatusCodeError)
			s.Status().SetMessage(r.status)
		}
		_ = s.Attributes().FromRaw(r.attrs)
		if _, ok := s.Attributes().Get("session.id"); !ok {
			s.Attributes().PutStr("session.id", ruleSession)
		}
	}
	return td
}

// turnTimeout is a Claude Code interaction span (a turn) that ended in a timeout at end ms.
func turnTimeout(end int64) ruleSpan {
	return ruleSpan{name: "claude_code.interaction", start: 0, end: end, status: "Request timed out.",
		attrs: map[string]any{"gen_ai.operation.name": "invoke_agent"}}
}

// TestTimeoutRules is the table of specification section 4's rules on records of one Claude Code
// session: tool calls seen in its log events, model calls and turns in its spans.
func TestTimeoutRules(t *testing.T) {
	tests := []struct {
		name  string
		logs  []ruleLog
		spans []ruleSpan
		check string // the span whose timeout attributes are checked
		want  map[string]any
	}{
		{
			name: "two parallel calls in flight: count 2, the later one in the snapshot",
			logs: []ruleLog{ruleDecision("toolu_1", "Bash", 1000), ruleDecision("toolu_2", "Read", 1005)},
			spans: []ruleSpan{
				{name: "claude_code.llm_request", start: 100, end: 990},
				turnTimeout(61_005),
			},
			check: "claude_code.interaction",
			want: map[string]any{
				timeout.AttrPhase: "tool_execution", timeout.AttrActiveTools: int64(2),
				timeout.AttrActiveToolName: "Read", timeout.AttrActiveToolCallID: "toolu_2", timeout.AttrActiveToolElapsed: int64(60_000),
			},
		},
		{
			name:  "a call that ended just before the timeout is not in flight; nothing else was: unknown",
			logs:  []ruleLog{ruleDecision("toolu_1", "Bash", 1000), ruleResult("toolu_1", "Bash", 2000, 990)},
			spans: []ruleSpan{{name: "claude_code.llm_request", start: 100, end: 990}, turnTimeout(2001)},
			check: "claude_code.interaction",
			want:  map[string]any{timeout.AttrPhase: "unknown", timeout.AttrActiveTools: int64(0)},
		},
		{
			name: "turn-level timeout with no tool in flight and a model call: provider",
			logs: []ruleLog{ruleDecision("toolu_1", "Bash", 1000), ruleResult("toolu_1", "Bash", 2000, 990)},
			spans: []ruleSpan{
				{name: "claude_code.llm_request", start: 2010, end: 21_700, status: "Request timed out.", attrs: map[string]any{"error_class": "api_timeout"}},
				turnTimeout(21_709),
			},
			check: "claude_code.interaction",
			want:  map[string]any{timeout.AttrPhase: "provider", timeout.AttrActiveTools: int64(0)},
		},
		{
			name: "the model call record itself is provider, even with a tool in flight",
			logs: []ruleLog{ruleDecision("toolu_1", "Bash", 1000)},
			spans: []ruleSpan{
				{name: "claude_code.llm_request", start: 1500, end: 7500, attrs: map[string]any{"error_class": "api_timeout"}},
			},
			check: "claude_code.llm_request",
			want: map[string]any{
				timeout.AttrPhase: "provider", timeout.AttrActiveTools: int64(1),
				timeout.AttrActiveToolName: "Bash", timeout.AttrActiveToolCallID: "toolu_1", timeout.AttrActiveToolElapsed: int64(6500),
			},
		},
		{
			name: "a compaction in flight and no tool: compaction, before a model call also in flight",
			logs: []ruleLog{
				ruleDecision("toolu_1", "Bash", 1000), ruleResult("toolu_1", "Bash", 2000, 990),
				// Claude Code writes claude_code.compaction when compaction completes.
				{event: "compaction", at: 50_000, attrs: map[string]any{"duration_ms": "45000", "success": "false"}},
			},
			spans: []ruleSpan{
				{name: "claude_code.llm_request", start: 5000, end: 40_000},
				turnTimeout(30_000),
			},
			check: "claude_code.interaction",
			want:  map[string]any{timeout.AttrPhase: "compaction", timeout.AttrActiveTools: int64(0)},
		},
		{
			name: "a tool in flight wins over a compaction and a model call",
			logs: []ruleLog{
				ruleDecision("toolu_1", "Bash", 1000),
				{event: "compaction", at: 50_000, attrs: map[string]any{"duration_ms": "45000"}},
			},
			spans: []ruleSpan{{name: "claude_code.llm_request", start: 500, end: 40_000}, turnTimeout(30_000)},
			check: "claude_code.interaction",
			want: map[string]any{
				timeout.AttrPhase: "tool_execution", timeout.AttrActiveTools: int64(1),
				timeout.AttrActiveToolName: "Bash", timeout.AttrActiveToolCallID: "toolu_1", timeout.AttrActiveToolElapsed: int64(29_000),
			},
		},
		{
			name:  "a call of another session does not count",
			logs:  []ruleLog{{event: "tool_decision", at: 1000, session: "sess-2", attrs: map[string]any{"tool_use_id": "toolu_9", "tool_name": "Bash", "decision": "accept"}}},
			spans: []ruleSpan{turnTimeout(30_000)},
			check: "claude_code.interaction",
			want:  map[string]any{timeout.AttrPhase: "unknown", timeout.AttrActiveTools: int64(0)},
		},
		{
			name:  "a rejected call never runs",
			logs:  []ruleLog{{event: "tool_decision", at: 1000, attrs: map[string]any{"tool_use_id": "toolu_1", "tool_name": "Bash", "decision": "reject"}}},
			spans: []ruleSpan{turnTimeout(30_000)},
			check: "claude_code.interaction",
			want:  map[string]any{timeout.AttrPhase: "unknown", timeout.AttrActiveTools: int64(0)},
		},
		{
			name: "a 529 overload is not a timeout: nothing written",
			logs: []ruleLog{ruleDecision("toolu_1", "Bash", 1000)},
			spans: []ruleSpan{{name: "claude_code.llm_request", start: 1500, end: 3000, status: "Overloaded",
				attrs: map[string]any{"status_code": "529", "error": "Overloaded", "error_class": "server_overload"}}},
			check: "claude_code.llm_request",
			want:  map[string]any{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newRig(t)
			require.NoError(t, b.logs.ConsumeLogs(context.Background(), ruleLogs(tt.logs)))
			require.NoError(t, b.traces.ConsumeTraces(context.Background(), ruleTraces(tt.spans)))
			var checked int
			for _, td := range b.tsink.AllTraces() {
				for _, s := range allSpans(td) {
					if s.Name() == tt.check {
						checked++
						assert.Equal(t, tt.want, timeoutAttrs(s.Attributes()))
					}
				}
			}
			assert.Equal(t, 1, checked)
		})
	}
}

// TestTimeoutToolRecord: an execute_tool span that timed out is tool_execution, and its own
// call, resolved at its end, is the active tool (GenAI spans, as the AI SDK's tool_timeout).
func TestTimeoutToolRecord(t *testing.T) {
	pl := newRig(t, tracesOnly())
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	chat := spans.AppendEmpty()
	chat.SetName("chat m")
	chat.SetTraceID(pcommon.TraceID{2})
	chat.SetSpanID(pcommon.SpanID{1})
	chat.SetStartTimestamp(pcommon.NewTimestampFromTime(at(0)))
	chat.SetEndTimestamp(pcommon.NewTimestampFromTime(at(500)))
	chat.Attributes().PutStr("gen_ai.operation.name", "chat")
	chat.Attributes().PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"tool_call","id":"call_1","name":"run_shell"}]}]`)
	tool := spans.AppendEmpty()
	tool.SetName("execute_tool run_shell")
	tool.SetTraceID(pcommon.TraceID{2})
	tool.SetSpanID(pcommon.SpanID{2})
	tool.SetStartTimestamp(pcommon.NewTimestampFromTime(at(510)))
	tool.SetEndTimestamp(pcommon.NewTimestampFromTime(at(2520)))
	tool.Status().SetCode(ptrace.StatusCodeError)
	tool.Status().SetMessage("Command timed out after 2000 ms; partial output: start")
	tool.Attributes().PutStr("gen_ai.operation.name", "execute_tool")
	tool.Attributes().PutStr("gen_ai.tool.name", "run_shell")
	tool.Attributes().PutStr("gen_ai.tool.call.id", "call_1")
	pl.consume(td)
	got := spansByName(pl.output())
	assert.Equal(t, map[string]any{
		timeout.AttrPhase: "tool_execution", timeout.AttrActiveTools: int64(1),
		timeout.AttrActiveToolName: "run_shell", timeout.AttrActiveToolCallID: "call_1",
		timeout.AttrActiveToolElapsed: int64(2020), // from the announcing chat span's end to the tool's end
	}, timeoutAttrs(got["execute_tool run_shell"][0].Attributes()))
	assert.Equal(t, "paired", strAttr(got["execute_tool run_shell"][0], "toolpair.outcome"))
	assert.Empty(t, timeoutAttrs(got["chat m"][0].Attributes()))
}

// TestTimeoutClassificationDisabled: with timeout_classification.enabled false, the timeout
// captures pass with no timeout attribute, and nothing is counted.
func TestTimeoutClassificationDisabled(t *testing.T) {
	b := newRig(t, withConfig(func(c *Config) { c.TimeoutClassification.Enabled = false }))
	for _, dir := range []string{"aisdk/llm_timeout", "codex/llm_timeout", "claude/tool_timeout_nobg"} {
		b.consumeCapture(t, filepath.Join("..", "..", "testdata", filepath.FromSlash(dir)))
	}
	require.NoError(t, b.traces.ConsumeTraces(context.Background(), ruleTraces([]ruleSpan{turnTimeout(1000)})))
	b.shutdown()
	assert.Empty(t, b.timeoutRecords(t))
	_, err := b.tel.GetMetric("otelcol_processor_toolpair_timeouts")
	assert.Error(t, err, "no timeout counted")
}

// TestTimeoutsCountedByPhase: the processor's own counter of timeout records by phase.
func TestTimeoutsCountedByPhase(t *testing.T) {
	b := newRig(t)
	for _, dir := range []string{"aisdk/llm_timeout", "codex/llm_timeout", "claude/tool_timeout_nobg", "claude/llm_error"} {
		b.consumeCapture(t, filepath.Join("..", "..", "testdata", filepath.FromSlash(dir)))
	}
	require.NoError(t, b.traces.ConsumeTraces(context.Background(), ruleTraces([]ruleSpan{turnTimeout(1000)})))
	b.shutdown()
	phase := func(p string, n int64) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Attributes: attribute.NewSet(attribute.String(timeout.AttrPhase, p)), Value: n}
	}
	metadatatest.AssertEqualProcessorToolpairTimeouts(t, b.tel, []metricdata.DataPoint[int64]{
		phase("provider", 5),       // AI SDK chat, step, agent; two Codex SSE events
		phase("tool_execution", 1), // the Claude Code transcript's Bash timeout
		phase("unknown", 1),        // the turn with nothing in flight
	}, metricdatatest.IgnoreTimestamp())
}

// TestTimeoutsWithoutDialects: with no dialect enabled, the walk of each batch still reads
// model calls, compactions and timeout records, in either signal.
func TestTimeoutsWithoutDialects(t *testing.T) {
	noDialect := func(c *Config) { c.Dialects = []string{} }
	t.Run("a model call in a span", func(t *testing.T) {
		b := newRig(t, withConfig(noDialect))
		require.NoError(t, b.traces.ConsumeTraces(context.Background(), ruleTraces([]ruleSpan{
			{name: "claude_code.llm_request", start: 2010, end: 21_700, status: "Request timed out.", attrs: map[string]any{"error_class": "api_timeout"}},
			turnTimeout(21_709),
		})))
		assert.Equal(t, []timeoutRecord{
			{what: "span claude_code.interaction", attrs: map[string]any{timeout.AttrPhase: "provider", timeout.AttrActiveTools: int64(0)}},
			{what: "span claude_code.llm_request", attrs: map[string]any{timeout.AttrPhase: "provider", timeout.AttrActiveTools: int64(0)}},
		}, b.timeoutRecords(t))
	})
	t.Run("a compaction in a log event", func(t *testing.T) {
		b := newRig(t, withConfig(noDialect))
		require.NoError(t, b.logs.ConsumeLogs(context.Background(), ruleLogs([]ruleLog{
			{event: "compaction", at: 50_000, attrs: map[string]any{"duration_ms": "45000", "success": "false"}},
		})))
		require.NoError(t, b.traces.ConsumeTraces(context.Background(), ruleTraces([]ruleSpan{turnTimeout(50_001)})))
		assert.Equal(t, []timeoutRecord{
			{what: "span claude_code.interaction", attrs: map[string]any{timeout.AttrPhase: "compaction", timeout.AttrActiveTools: int64(0)}},
		}, b.timeoutRecords(t))
	})
}
