package toolpairprocessor

// Acceptance tests of docs/specification.md, one test per section, named
// after it (TestContractS1..., TestContractS2...). Every test goes through the factory, with
// processortest.NewNopSettings or a componenttest.Telemetry, consumertest sinks and built
// pdata (or the real captures under testdata/ where a clause is about a real source), and
// reads the attribute and metric names exactly as the specification spells them. The clock is the
// factory's injected one, so nothing sleeps.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadata"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadatatest"
)

// ctBase is the time origin of the hand-made records: times in the tables are ms after it.
const ctBase = int64(1_800_000_000_000) // ms

func ctTS(ms int64) pcommon.Timestamp {
	return pcommon.Timestamp((ctBase + ms) * int64(time.Millisecond))
}

// ctRig is one toolpair component in a traces and a logs pipeline, with its own telemetry.
type ctRig struct {
	t      *testing.T
	clock  *testClock
	cfg    *Config
	tel    *componenttest.Telemetry
	traces processor.Traces
	logs   processor.Logs
	tsink  *consumertest.TracesSink
	lsink  *consumertest.LogsSink
	shared *shared
	down   bool
	// final is the component's metrics collected at its shutdown, before its telemetry shut
	// down; sum reads it once set.
	final *metricdata.ResourceMetrics
}

func newCTRig(t *testing.T, mutate func(*Config)) *ctRig {
	t.Helper()
	r := &ctRig{t: t, clock: newTestClock(), tel: componenttest.NewTelemetry(),
		tsink: new(consumertest.TracesSink), lsink: new(consumertest.LogsSink)}
	t.Cleanup(func() { require.NoError(t, r.tel.Shutdown(context.Background())) })
	f := newFactoryWithClock(r.clock)
	r.cfg = f.CreateDefaultConfig().(*Config)
	if mutate != nil {
		mutate(r.cfg)
	}
	require.NoError(t, r.cfg.Validate())
	set := metadatatest.NewSettings(r.tel)
	var err error
	r.traces, err = f.CreateTraces(context.Background(), set, r.cfg, r.tsink)
	require.NoError(t, err)
	r.logs, err = f.CreateLogs(context.Background(), set, r.cfg, r.lsink)
	require.NoError(t, err)
	require.NoError(t, r.traces.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, r.logs.Start(context.Background(), componenttest.NewNopHost()))
	prev := atLastShutdown
	atLastShutdown = func(s *shared) {
		if s == r.shared {
			var rm metricdata.ResourceMetrics
			require.NoError(t, r.tel.Reader.Collect(context.Background(), &rm))
			r.final = &rm
		}
		if prev != nil {
			prev(s)
		}
	}
	t.Cleanup(func() { atLastShutdown = prev })
	instances.Lock()
	r.shared = instanceOf(r.cfg)
	instances.Unlock()
	t.Cleanup(r.shutdown)
	return r
}

func (r *ctRig) spans(specs ...ctSpan) {
	r.t.Helper()
	require.NoError(r.t, r.traces.ConsumeTraces(context.Background(), ctTraces(specs...)))
}

func (r *ctRig) logRecords(specs ...ctLog) {
	r.t.Helper()
	require.NoError(r.t, r.logs.ConsumeLogs(context.Background(), ctLogs(specs...)))
}

// advance moves the clock and runs one expiry tick, as the component's ticker would.
func (r *ctRig) advance(d time.Duration) {
	r.clock.Advance(d)
	r.shared.tick(context.Background())
}

// shutdown shuts the traces and logs pipelines down: pending calls are interrupted with
// reason shutdown. The metrics stay readable (see final).
func (r *ctRig) shutdown() {
	if r.down {
		return
	}
	r.down = true
	require.NoError(r.t, r.traces.Shutdown(context.Background()))
	require.NoError(r.t, r.logs.Shutdown(context.Background()))
}

// outSpans and outLogs are everything the sinks received, in order.
func (r *ctRig) outSpans() []ptrace.Span {
	var out []ptrace.Span
	for _, td := range r.tsink.AllTraces() {
		ctEachSpan(td, func(_ pcommon.Resource, s ptrace.Span) { out = append(out, s) })
	}
	return out
}

func (r *ctRig) outLogs() []plog.LogRecord { return allLogs(r.lsink) }

// ctEachSpan calls fn for every span of td with its resource.
func ctEachSpan(td ptrace.Traces, fn func(pcommon.Resource, ptrace.Span)) {
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			spans := rs.ScopeSpans().At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				fn(rs.Resource(), spans.At(k))
			}
		}
	}
}

func ctEachLog(ld plog.Logs, fn func(pcommon.Resource, plog.LogRecord)) {
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		rl := ld.ResourceLogs().At(i)
		for j := 0; j < rl.ScopeLogs().Len(); j++ {
			lrs := rl.ScopeLogs().At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				fn(rl.Resource(), lrs.At(k))
			}
		}
	}
}

// ctSpan describes one span of a hand-made batch. trace, id and parent are one-byte IDs (0:
// none). res holds resource attributes besides service.name (default "app").
type ctSpan struct {
	service           string
	res               map[string]any
	trace, id, parent byte
	name              string
	start, end        int64 // ms after ctBase
	attrs             map[string]any
	status            ptrace.StatusCode
	statusMessage     string
	events            []ctEvent
}

type ctEvent struct {
	name  string
	attrs map[string]any
}

func ctTraceID(b byte) pcommon.TraceID {
	if b == 0 {
		return pcommon.TraceID{}
	}
	return pcommon.TraceID{0xc7, b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, b}
}

func ctSpanID(b byte) pcommon.SpanID {
	if b == 0 {
		return pcommon.SpanID{}
	}
	return pcommon.SpanID{0x5a, b, 0, 0, 0, 0, 0, b}
}

func ctResource(res pcommon.Resource, service string, attrs map[string]any) {
	if service == "" {
		service = "app"
	}
	if attrs != nil {
		if err := res.Attributes().FromRaw(attrs); err != nil {
			panic(err)
		}
	}
	res.Attributes().PutStr("service.name", service)
}

func ctTraces(specs ...ctSpan) ptrace.Traces {
	td := ptrace.NewTraces()
	for _, sp := range specs {
		rs := td.ResourceSpans().AppendEmpty()
		ctResource(rs.Resource(), sp.service, sp.res)
		s := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		s.SetName(sp.name)
		s.SetTraceID(ctTraceID(sp.trace))
		s.SetSpanID(ctSpanID(sp.id))
		s.SetParentSpanID(ctSpanID(sp.parent))
		s.SetStartTimestamp(ctTS(sp.start))
		s.SetEndTimestamp(ctTS(sp.end))
		if sp.attrs != nil {
			if err := s.Attributes().FromRaw(sp.attrs); err != nil {
				panic(err)
			}
		}
		if sp.status != ptrace.StatusCodeUnset {
			s.Status().SetCode(sp.status)
			s.Status().SetMessage(sp.statusMessage)
		}
		for _, e := range sp.events {
			ev := s.Events().AppendEmpty()
			ev.SetName(e.name)
			ev.SetTimestamp(ctTS(sp.end))
			if err := ev.Attributes().FromRaw(e.attrs); err != nil {
				panic(err)
			}
		}
	}
	return td
}

// ctLog describes one log record. time is ms after ctBase (0: no timestamp); observed
// likewise. body is a string, a map[string]any or nil.
type ctLog struct {
	service        string
	res            map[string]any
	time, observed int64
	eventName      string
	body           any
	attrs          map[string]any
	trace, spanID  byte
}

func ctLogs(specs ...ctLog) plog.Logs {
	ld := plog.NewLogs()
	for _, sp := range specs {
		rl := ld.ResourceLogs().AppendEmpty()
		ctResource(rl.Resource(), sp.service, sp.res)
		lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
		if sp.time != 0 {
			lr.SetTimestamp(ctTS(sp.time))
		}
		if sp.observed != 0 {
			lr.SetObservedTimestamp(ctTS(sp.observed))
		}
		lr.SetEventName(sp.eventName)
		lr.SetTraceID(ctTraceID(sp.trace))
		lr.SetSpanID(ctSpanID(sp.spanID))
		switch b := sp.body.(type) {
		case string:
			lr.Body().SetStr(b)
		case map[string]any:
			if err := lr.Body().SetEmptyMap().FromRaw(b); err != nil {
				panic(err)
			}
		}
		if sp.attrs != nil {
			if err := lr.Attributes().FromRaw(sp.attrs); err != nil {
				panic(err)
			}
		}
	}
	return ld
}

// Builders of the records of each source.

// ctChat is a GenAI chat span announcing calls (tool name run_shell) in its output messages.
func ctChat(trace, id, parent byte, start, end int64, calls ...string) ctSpan {
	parts := make([]string, 0, len(calls))
	for _, c := range calls {
		parts = append(parts, `{"type":"tool_call","id":"`+c+`","name":"run_shell","arguments":{"command":"cat /etc/secret"}}`)
	}
	attrs := map[string]any{"gen_ai.operation.name": "chat"}
	if len(calls) > 0 {
		attrs["gen_ai.output.messages"] = `[{"role":"assistant","parts":[` + strings.Join(parts, ",") + `]}]`
	}
	return ctSpan{trace: trace, id: id, parent: parent, name: "chat m", start: start, end: end, attrs: attrs}
}

// ctTool is a GenAI execute_tool span resolving call.
func ctTool(trace, id, parent byte, call string, start, end int64) ctSpan {
	return ctSpan{trace: trace, id: id, parent: parent, name: "execute_tool run_shell", start: start, end: end, attrs: map[string]any{
		"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "run_shell", "gen_ai.tool.call.id": call,
	}}
}

func ctAgent(trace, id, parent byte, start, end int64) ctSpan {
	return ctSpan{trace: trace, id: id, parent: parent, name: "invoke_agent a", start: start, end: end, attrs: map[string]any{
		"gen_ai.operation.name": "invoke_agent",
	}}
}

func ctWith(s ctSpan, kv ...any) ctSpan {
	attrs := map[string]any{}
	for k, v := range s.attrs {
		attrs[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		attrs[kv[i].(string)] = kv[i+1]
	}
	s.attrs = attrs
	return s
}

// ctClaude is a Claude Code log event (body and event.name as Claude Code 2.1 writes them).
func ctClaude(event string, ms int64, session string, kv ...any) ctLog {
	attrs := map[string]any{"event.name": event, "session.id": session, "event.timestamp": time.UnixMilli(ctBase + ms).UTC().Format(time.RFC3339Nano)}
	for i := 0; i < len(kv); i += 2 {
		attrs[kv[i].(string)] = kv[i+1]
	}
	return ctLog{service: "claude-code", time: ms, observed: ms, body: "claude_code." + event, attrs: attrs}
}

func ctClaudeDecision(call, decision string, ms int64) ctLog {
	return ctClaude("tool_decision", ms, "sess-1", "tool_use_id", call, "tool_name", "Bash", "decision", decision, "source", "config")
}

func ctClaudeResult(call string, ms int64) ctLog {
	return ctClaude("tool_result", ms, "sess-1", "tool_use_id", call, "tool_name", "Bash", "success", "true", "duration_ms", "12")
}

// ctCodex is a Codex log event: timeUnixNano 0, the observed time set.
func ctCodex(event string, ms int64, trace byte, kv ...any) ctLog {
	attrs := map[string]any{"event.name": event, "conversation.id": "conv-x"}
	for i := 0; i < len(kv); i += 2 {
		attrs[kv[i].(string)] = kv[i+1]
	}
	return ctLog{service: "codex_exec", observed: ms, body: "event", attrs: attrs, trace: trace}
}

func ctCodexDecision(call, decision string, ms int64) ctLog {
	return ctCodex("codex.tool_decision", ms, 9, "call_id", call, "tool_name", "exec_command", "decision", decision)
}

func ctCodexResult(call string, ms int64) ctLog {
	return ctCodex("codex.tool_result", ms, 9, "call_id", call, "tool_name", "exec_command", "duration_ms", "7", "success", "true")
}

// ctCodexToolSpan is Codex's tool dispatch span (named after the tool, carrying call_id).
func ctCodexToolSpan(call string, start, end int64, aborted bool) ctSpan {
	return ctSpan{service: "codex_exec", trace: 9, id: 0x90, name: "exec_command", start: start, end: end, attrs: map[string]any{
		"tool_name": "exec_command", "call_id": call, "aborted": aborted, "conversation.id": "conv-x",
	}}
}

// ctLine is a transcript line as the filelog receiver emits it (the line as a string body,
// no timestamp, the file's path).
func ctLine(path string, line map[string]any) ctLog {
	b, err := json.Marshal(line)
	if err != nil {
		panic(err)
	}
	return ctLog{service: "transcripts", observed: 999_000, body: string(b), attrs: map[string]any{"log.file.path": path, "log.file.name": path[strings.LastIndexByte(path, '/')+1:]}}
}

func ctISO(ms int64) string {
	return time.UnixMilli(ctBase + ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

// ctClaudeUse is a Claude Code transcript assistant line holding one tool_use block.
func ctClaudeUse(session, agent, msgID, call string, ms int64) map[string]any {
	l := map[string]any{"type": "assistant", "sessionId": session, "timestamp": ctISO(ms), "uuid": call + "-u",
		"message": map[string]any{"id": msgID, "role": "assistant", "content": []any{
			map[string]any{"type": "tool_use", "id": call, "name": "Bash", "input": map[string]any{"command": "cat /etc/secret"}},
		}}}
	if agent != "" {
		l["agentId"], l["isSidechain"] = agent, true
	}
	return l
}

// ctClaudeText is a Claude Code transcript assistant line with text only (a new message).
func ctClaudeText(session, agent, msgID string, ms int64) map[string]any {
	l := map[string]any{"type": "assistant", "sessionId": session, "timestamp": ctISO(ms),
		"message": map[string]any{"id": msgID, "role": "assistant", "content": []any{map[string]any{"type": "text", "text": "done"}}}}
	if agent != "" {
		l["agentId"], l["isSidechain"] = agent, true
	}
	return l
}

// ctClaudeResultLine is a Claude Code transcript user line holding one tool_result block.
func ctClaudeResultLine(session, agent, call, content string, ms int64) map[string]any {
	l := map[string]any{"type": "user", "sessionId": session, "timestamp": ctISO(ms),
		"message": map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "tool_result", "tool_use_id": call, "content": content, "is_error": false},
		}}}
	if agent != "" {
		l["agentId"], l["isSidechain"] = agent, true
	}
	return l
}

// ctPiUse is a pi/OpenClaw assistant entry with one toolCall block (message.timestamp in ms).
// ctClaudeRefusalLine is a Claude Code transcript line answering call with an is_error
// tool_result of content, with the top-level toolUseResult "User rejected tool use" and, when
// denial is not "", a toolDenialKind.
func ctClaudeRefusalLine(session, call, content, denial string, ms int64) map[string]any {
	l := ctClaudeResultLine(session, "", call, content, ms)
	l["message"].(map[string]any)["content"].([]any)[0].(map[string]any)["is_error"] = true
	l["toolUseResult"] = "User rejected tool use"
	if denial != "" {
		l["toolDenialKind"] = denial
	}
	return l
}

func ctPiUse(entryID, call string, ms int64) map[string]any {
	return map[string]any{"type": "message", "id": entryID, "parentId": nil, "timestamp": ctISO(ms + 5),
		"message": map[string]any{"role": "assistant", "timestamp": ctBase + ms, "content": []any{
			map[string]any{"type": "toolCall", "id": call, "name": "bash", "arguments": map[string]any{"command": "cat /etc/secret"}},
		}}}
}

func ctPiResult(entryID, call string, ms int64, details map[string]any) map[string]any {
	msg := map[string]any{"role": "toolResult", "toolCallId": call, "toolName": "bash", "timestamp": ctBase + ms,
		"isError": false, "content": []any{map[string]any{"type": "text", "text": "secret"}}}
	if details != nil {
		msg["details"] = details
	}
	return map[string]any{"type": "message", "id": entryID, "timestamp": ctISO(ms + 5), "message": msg}
}

// Reading the output.

// ctCallIDOf reads the call ID of an output record: the semconv attribute, else the Claude
// Code or Codex one.
func ctCallIDOf(attrs pcommon.Map) string {
	for _, k := range []string{"gen_ai.tool.call.id", "tool_use_id", "call_id"} {
		if v, ok := attrs.Get(k); ok {
			return v.AsString()
		}
	}
	return ""
}

func ctStr(attrs pcommon.Map, k string) string {
	if v, ok := attrs.Get(k); ok {
		return v.AsString()
	}
	return ""
}

// ctMark describes what the processor wrote on one record: its outcome, "/reason" when it
// has one, and "+synthetic" for a synthetic record ("span:" or "log:" first).
func ctMark(signal string, attrs pcommon.Map) string {
	s := signal + ":" + ctStr(attrs, "toolpair.outcome")
	if r := ctStr(attrs, "toolpair.interrupt.reason"); r != "" {
		s += "/" + r
	}
	if v, ok := attrs.Get("toolpair.synthetic"); ok && v.Bool() {
		s += "+synthetic"
	}
	return s
}

// marks returns, per call ID, what was written on the records of the call that carry a
// toolpair.outcome, sorted. Records whose call ID sits in a body (transcripts) are found by
// idOf when given.
func (r *ctRig) marks(idOf func(plog.LogRecord) string) map[string][]string {
	out := map[string][]string{}
	for _, s := range r.outSpans() {
		if _, ok := s.Attributes().Get("toolpair.outcome"); ok {
			id := ctCallIDOf(s.Attributes())
			out[id] = append(out[id], ctMark("span", s.Attributes()))
		}
	}
	for _, lr := range r.outLogs() {
		if _, ok := lr.Attributes().Get("toolpair.outcome"); ok {
			id := ctCallIDOf(lr.Attributes())
			if id == "" && idOf != nil {
				id = idOf(lr)
			}
			out[id] = append(out[id], ctMark("log", lr.Attributes()))
		}
	}
	for _, v := range out {
		sort.Strings(v)
	}
	return out
}

// ctTranscriptCallID reads the call ID of a transcript line body (the first tool block).
func ctTranscriptCallID(lr plog.LogRecord) string {
	var l struct {
		Message struct {
			ToolCallID string `json:"toolCallId"`
			Content    []struct {
				ID        string `json:"id"`
				ToolUseID string `json:"tool_use_id"`
			} `json:"content"`
		} `json:"message"`
	}
	if lr.Body().Type() != pcommon.ValueTypeStr || json.Unmarshal([]byte(lr.Body().Str()), &l) != nil {
		return ""
	}
	if l.Message.ToolCallID != "" {
		return l.Message.ToolCallID
	}
	for _, c := range l.Message.Content {
		if c.ToolUseID != "" {
			return c.ToolUseID
		}
		if c.ID != "" {
			return c.ID
		}
	}
	return ""
}

// sum returns the sum of the data points of an int64 metric (sum or gauge) whose attributes
// include every key/value of match (nil: all points), 0 when the metric was never recorded.
func (r *ctRig) sum(name string, match map[string]string) int64 {
	r.t.Helper()
	m, err := r.tel.GetMetric(name)
	if r.final != nil {
		m, err = metricIn(r.final, name)
	}
	if err != nil {
		return 0
	}
	var dps []metricdata.DataPoint[int64]
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		dps = d.DataPoints
	case metricdata.Gauge[int64]:
		dps = d.DataPoints
	default:
		r.t.Fatalf("%s: unexpected data %T", name, m.Data)
	}
	var n int64
	for _, dp := range dps {
		ok := true
		for k, v := range match {
			if got, found := dp.Attributes.Value(attribute.Key(k)); !found || got.AsString() != v {
				ok = false
			}
		}
		if ok {
			n += dp.Value
		}
	}
	return n
}

// checkConservation checks specification section 7 on the component's metrics: uses seen = paired
// + interrupted + rejected + pending; results seen = paired + aborted + orphan + duplicate +
// standalone + waiting.
func (r *ctRig) checkConservation() {
	r.t.Helper()
	const outcomes = "otelcol_processor_toolpair_outcomes"
	paired := r.sum(outcomes, map[string]string{"toolpair.outcome": "paired"})
	interrupted := r.sum(outcomes, map[string]string{"toolpair.outcome": "interrupted"})
	aborted := r.sum(outcomes, map[string]string{"toolpair.outcome": "interrupted", "toolpair.interrupt.reason": "aborted"})
	rejected := r.sum(outcomes, map[string]string{"toolpair.outcome": "rejected"})
	orphan := r.sum(outcomes, map[string]string{"toolpair.outcome": "orphan"})
	duplicate := r.sum(outcomes, map[string]string{"toolpair.outcome": "duplicate"})
	standalone := r.sum(outcomes, map[string]string{"toolpair.outcome": "standalone"})
	uses := r.sum("otelcol_processor_toolpair_uses", nil)
	results := r.sum("otelcol_processor_toolpair_results", nil)
	pending := r.sum("otelcol_processor_toolpair_pending_calls", nil)
	waiting := r.sum("otelcol_processor_toolpair_waiting_results", nil)
	assert.Positive(r.t, uses+results, "the component's metrics are read")
	assert.Equal(r.t, uses, paired+interrupted+rejected+pending,
		"uses %d = paired %d + interrupted %d + rejected %d + pending %d", uses, paired, interrupted, rejected, pending)
	assert.Equal(r.t, results, paired+aborted+orphan+duplicate+standalone+waiting,
		"results %d = paired %d + aborted %d + orphan %d + duplicate %d + standalone %d + waiting %d", results, paired, aborted, orphan, duplicate, standalone, waiting)
}

// ctSyntheticSpanID is the specification's deterministic span ID, computed independently: the
// first 8 bytes of SHA-256(trace ID || call ID).
func ctSyntheticSpanID(trace pcommon.TraceID, call string) pcommon.SpanID {
	sum := sha256.Sum256(append(trace[:], call...))
	var id pcommon.SpanID
	copy(id[:], sum[:8])
	return id
}

// TestContractPublicFactory runs the exported NewFactory with the system clock and
// processortest.NewNopSettings, as a collector builds the component: a call pending at
// shutdown leaves as a synthetic span ending at the shutdown, with its result paired in the
// meantime for the other call.
func TestContractPublicFactory(t *testing.T) {
	f := NewFactory()
	assert.Equal(t, "toolpair", f.Type().String())
	cfg := f.CreateDefaultConfig()
	sink := new(consumertest.TracesSink)
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, p.ConsumeTraces(context.Background(), ctTraces(ctChat(1, 1, 7, 0, 100, "c1", "c2"), ctTool(1, 2, 7, "c2", 100, 180))))
	before := time.Now()
	require.NoError(t, p.Shutdown(context.Background()))
	var got []string
	for _, td := range sink.AllTraces() {
		ctEachSpan(td, func(_ pcommon.Resource, s ptrace.Span) {
			if o := ctStr(s.Attributes(), "toolpair.outcome"); o != "" {
				got = append(got, ctCallIDOf(s.Attributes())+":"+ctMark("span", s.Attributes()))
				if ctStr(s.Attributes(), "toolpair.synthetic") == "true" {
					assert.GreaterOrEqual(t, s.EndTimestamp().AsTime(), before.Truncate(time.Millisecond))
				}
			}
		})
	}
	slices.Sort(got)
	assert.Equal(t, []string{"c1:span:interrupted/shutdown+synthetic", "c2:span:paired"}, got)
}

// TestContractS1CallKey: a result pairs only with a use of the same call key (tenant, scope,
// call ID). Scope: the first of scope_attributes present on the record, else on its
// resource; else the trace ID; else none. Tenant: service.name plus tenant_attributes.
func TestContractS1CallKey(t *testing.T) {
	res := func(s ctSpan, kv ...any) ctSpan {
		s.res = map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			s.res[kv[i].(string)] = kv[i+1]
		}
		return s
	}
	tests := []struct {
		name   string
		mutate func(*Config)
		use    ctSpan
		result ctSpan
		want   string // outcome of the result record
	}{
		{name: "same trace, no scope attribute: the trace ID is the scope",
			use: ctChat(1, 1, 0, 0, 100, "c1"), result: ctTool(1, 2, 0, "c1", 110, 150), want: "paired"},
		{name: "other trace, no scope attribute: other scope",
			use: ctChat(1, 1, 0, 0, 100, "c1"), result: ctTool(2, 2, 0, "c1", 110, 150), want: "standalone"},
		{name: "gen_ai.conversation.id on the records keys across traces",
			use:    ctWith(ctChat(1, 1, 0, 0, 100, "c1"), "gen_ai.conversation.id", "conv-a"),
			result: ctWith(ctTool(2, 2, 0, "c1", 110, 150), "gen_ai.conversation.id", "conv-a"), want: "paired"},
		{name: "session.id on the records keys across traces",
			use:    ctWith(ctChat(1, 1, 0, 0, 100, "c1"), "session.id", "s-a"),
			result: ctWith(ctTool(2, 2, 0, "c1", 110, 150), "session.id", "s-a"), want: "paired"},
		{name: "conversation.id on the records keys across traces",
			use:    ctWith(ctChat(1, 1, 0, 0, 100, "c1"), "conversation.id", "k-a"),
			result: ctWith(ctTool(2, 2, 0, "c1", 110, 150), "conversation.id", "k-a"), want: "paired"},
		{name: "different conversation in one trace: other scope",
			use:    ctWith(ctChat(1, 1, 0, 0, 100, "c1"), "gen_ai.conversation.id", "conv-a"),
			result: ctWith(ctTool(1, 2, 0, "c1", 110, 150), "gen_ai.conversation.id", "conv-b"), want: "standalone"},
		{name: "scope on the resource",
			use:    res(ctChat(1, 1, 0, 0, 100, "c1"), "session.id", "s-r"),
			result: res(ctTool(2, 2, 0, "c1", 110, 150), "session.id", "s-r"), want: "paired"},
		{name: "the record's scope attribute wins over its resource's",
			use:    ctWith(res(ctChat(1, 1, 0, 0, 100, "c1"), "session.id", "s-r"), "session.id", "s-own"),
			result: res(ctTool(2, 2, 0, "c1", 110, 150), "session.id", "s-r"), want: "standalone"},
		{name: "a record attribute later in the list wins over the resource's first",
			use:    ctWith(res(ctChat(1, 1, 0, 0, 100, "c1"), "gen_ai.conversation.id", "conv-r"), "conversation.id", "k-own"),
			result: ctWith(ctTool(2, 2, 0, "c1", 110, 150), "conversation.id", "k-own"), want: "paired"},
		{name: "the first attribute of scope_attributes wins",
			use:    ctWith(ctChat(1, 1, 0, 0, 100, "c1"), "gen_ai.conversation.id", "conv-a", "session.id", "s-a"),
			result: ctWith(ctTool(2, 2, 0, "c1", 110, 150), "session.id", "s-a"), want: "standalone"},
		{name: "configured scope_attributes replace the defaults",
			mutate: func(c *Config) { c.ScopeAttributes = []string{"thread.id"} },
			use:    ctWith(ctChat(1, 1, 0, 0, 100, "c1"), "thread.id", "th", "gen_ai.conversation.id", "conv-a"),
			result: ctWith(ctTool(2, 2, 0, "c1", 110, 150), "thread.id", "th", "gen_ai.conversation.id", "conv-b"), want: "paired"},
		{name: "another service.name is another tenant",
			use: ctChat(1, 1, 0, 0, 100, "c1"), result: func() ctSpan { s := ctTool(1, 2, 0, "c1", 110, 150); s.service = "other"; return s }(),
			want: "standalone"},
		{name: "tenant_attributes: another value is another tenant",
			mutate: func(c *Config) { c.TenantAttributes = []string{"deployment.environment.name"} },
			use:    res(ctChat(1, 1, 0, 0, 100, "c1"), "deployment.environment.name", "prod"),
			result: res(ctTool(1, 2, 0, "c1", 110, 150), "deployment.environment.name", "dev"), want: "standalone"},
		{name: "tenant_attributes: the same value pairs",
			mutate: func(c *Config) { c.TenantAttributes = []string{"deployment.environment.name"} },
			use:    res(ctChat(1, 1, 0, 0, 100, "c1"), "deployment.environment.name", "prod"),
			result: res(ctTool(1, 2, 0, "c1", 110, 150), "deployment.environment.name", "prod"), want: "paired"},
		{name: "a resource attribute not in tenant_attributes does not split tenants",
			use:    res(ctChat(1, 1, 0, 0, 100, "c1"), "host.name", "a"),
			result: res(ctTool(1, 2, 0, "c1", 110, 150), "host.name", "b"), want: "paired"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newCTRig(t, tt.mutate)
			r.spans(tt.use, tt.result)
			r.advance(r.cfg.OrphanGrace + time.Second)
			got := r.marks(nil)["c1"]
			require.NotEmpty(t, got)
			assert.Equal(t, "span:"+tt.want, got[0])
			r.checkConservation()
		})
	}

	// No scope at all (log records without scope attribute or trace ID): the call key is
	// (tenant, no scope, call ID), and records of one tenant pair.
	t.Run("no scope: log records without scope attribute or trace ID", func(t *testing.T) {
		r := newCTRig(t, nil)
		use, result := ctClaudeDecision("c1", "accept", 100), ctClaudeResult("c1", 300)
		delete(use.attrs, "session.id")
		delete(result.attrs, "session.id")
		r.logRecords(use, result)
		assert.Equal(t, map[string][]string{"c1": {"log:paired"}}, r.marks(nil))
		r.checkConservation()
	})
}

// TestContractS2Outcomes: every tool_use ends in exactly one outcome, and so does every
// tool_result; what is written on the records of each call (result records and synthetic
// records), for every outcome and reason, with the conservation of section 7 checked on the
// component's metrics after each.
func TestContractS2Outcomes(t *testing.T) {
	mark := func(c *Config) { c.Duplicates, c.Orphans = DispositionMark, DispositionMark }
	tests := []struct {
		name   string
		mutate func(*Config)
		run    func(r *ctRig)
		want   map[string][]string
	}{
		{name: "paired: use then result", run: func(r *ctRig) {
			r.spans(ctChat(1, 1, 0, 0, 100, "c1"), ctTool(1, 2, 0, "c1", 110, 150))
		}, want: map[string][]string{"c1": {"span:paired"}}},
		{name: "paired: result first, waits up to orphan_grace for its use", run: func(r *ctRig) {
			r.spans(ctTool(1, 2, 0, "c1", 110, 150))
			r.advance(29 * time.Second)
			r.spans(ctChat(1, 1, 0, 0, 100, "c1"))
		}, want: map[string][]string{"c1": {"span:paired"}}},
		{name: "paired: across signals (Claude Code decision log, tool result span)", run: func(r *ctRig) {
			r.logRecords(ctClaudeDecision("toolu_1", "accept", 100))
			r.spans(ctSpan{service: "claude-code", trace: 3, id: 1, name: "claude_code.tool", start: 100, end: 180,
				attrs: map[string]any{"tool_use_id": "toolu_1", "tool_name": "Bash", "session.id": "sess-1"}})
		}, want: map[string][]string{"toolu_1": {"span:paired"}}},
		{name: "interrupted next_step: a later model request under the same agent", run: func(r *ctRig) {
			r.spans(ctChat(1, 1, 7, 0, 100, "c1", "c2"), ctTool(1, 2, 7, "c2", 110, 150), ctChat(1, 3, 7, 200, 300))
			r.advance(31 * time.Second)
		}, want: map[string][]string{"c1": {"span:interrupted/next_step+synthetic"}, "c2": {"span:paired"}}},
		{name: "interrupted session_end: invoke_agent end", run: func(r *ctRig) {
			r.spans(ctChat(1, 1, 7, 0, 100, "c1"), ctAgent(1, 7, 0, 0, 500))
			r.advance(31 * time.Second)
		}, want: map[string][]string{"c1": {"span:interrupted/session_end+synthetic"}}},
		{name: "interrupted session_end: claude_code.interaction end", run: func(r *ctRig) {
			d := ctClaudeDecision("toolu_1", "accept", 100)
			d.trace = 4
			r.logRecords(d)
			r.spans(ctSpan{service: "claude-code", trace: 4, id: 1, name: "claude_code.interaction", start: 0, end: 900,
				attrs: map[string]any{"session.id": "sess-1"}})
			r.advance(31 * time.Second)
		}, want: map[string][]string{"toolu_1": {"log:interrupted/session_end+synthetic", "span:interrupted/session_end+synthetic"}}},
		{name: "interrupted expired: no result within pairing_timeout", run: func(r *ctRig) {
			r.spans(ctChat(1, 1, 0, 0, 100, "c1"))
			r.advance(9 * time.Minute)
			require.Empty(t, r.marks(nil), "not before pairing_timeout")
			r.advance(time.Minute)
		}, want: map[string][]string{"c1": {"span:interrupted/expired+synthetic"}}},
		{name: "interrupted evicted: max_pending_calls reached, oldest first", mutate: func(c *Config) { c.MaxPendingCalls = 2 }, run: func(r *ctRig) {
			r.spans(ctChat(1, 1, 0, 0, 100, "c1"))
			r.spans(ctChat(2, 1, 0, 0, 100, "c2"))
			r.spans(ctChat(3, 1, 0, 0, 100, "c3"))
		}, want: map[string][]string{"c1": {"span:interrupted/evicted+synthetic"}}},
		{name: "interrupted shutdown: pending at shutdown", run: func(r *ctRig) {
			r.spans(ctChat(1, 1, 0, 0, 100, "c1"))
			r.logRecords(ctClaudeDecision("toolu_1", "accept", 100))
			r.shutdown()
		}, want: map[string][]string{"c1": {"span:interrupted/shutdown+synthetic"}, "toolu_1": {"log:interrupted/shutdown+synthetic"}}},
		{name: "interrupted aborted: Codex tool span aborted=true marks the result, no synthetic", run: func(r *ctRig) {
			r.logRecords(ctCodexDecision("call_1", "approved", 100))
			r.spans(ctCodexToolSpan("call_1", 110, 900, true))
			r.shutdown()
		}, want: map[string][]string{"call_1": {"span:interrupted/aborted"}}},
		{name: "interrupted aborted: Claude Code transcript interrupt marker", run: func(r *ctRig) {
			r.logRecords(ctLine("/p/s1.jsonl", ctClaudeUse("s1", "", "msg_1", "toolu_9", 100)),
				ctLine("/p/s1.jsonl", ctClaudeResultLine("s1", "", "toolu_9", "[Request interrupted by user for tool use]", 200)))
			r.shutdown()
		}, want: map[string][]string{"toolu_9": {"log:interrupted/aborted"}}},
		{name: "interrupted aborted: OpenClaw synthetic missing tool result", run: func(r *ctRig) {
			r.logRecords(ctLine("/oc/a.jsonl", ctPiUse("e1", "call_oc", 100)),
				ctLine("/oc/a.jsonl", ctPiResult("e2", "call_oc", 200, map[string]any{"openclawSyntheticMissingToolResult": true})))
			r.shutdown()
		}, want: map[string][]string{"call_oc": {"log:interrupted/aborted"}}},
		{name: "interrupted aborted: the aborted result arriving before its use", run: func(r *ctRig) {
			r.logRecords(ctLine("/p/s1.jsonl", ctClaudeResultLine("s1", "", "toolu_9", "[Request interrupted by user for tool use]", 200)))
			r.advance(10 * time.Second)
			r.logRecords(ctLine("/p/s1.jsonl", ctClaudeUse("s1", "", "msg_1", "toolu_9", 100)))
			r.shutdown()
		}, want: map[string][]string{"toolu_9": {"log:interrupted/aborted"}}},
		{name: "rejected: Claude Code decision reject, no synthetic even at shutdown", run: func(r *ctRig) {
			r.logRecords(ctClaudeDecision("toolu_r", "reject", 100))
			r.shutdown()
		}, want: map[string][]string{}},
		{name: "rejected: a Claude Code transcript result the user refused, marked on the result, no synthetic even at shutdown", run: func(r *ctRig) {
			r.logRecords(ctLine("/p/s1.jsonl", ctClaudeUse("s1", "", "msg_1", "toolu_9", 100)))
			r.logRecords(ctLine("/p/s1.jsonl", ctClaudeRefusalLine("s1", "toolu_9", "The user doesn't want to proceed with this tool use.", "permission_prompt", 200)))
			r.shutdown()
		}, want: map[string][]string{"toolu_9": {"log:rejected"}}},
		{name: "rejected: ... also when the user interrupted the running tool, and the refusal comes first", run: func(r *ctRig) {
			r.logRecords(ctLine("/p/s1.jsonl", ctClaudeRefusalLine("s1", "toolu_9", "[Request interrupted by user for tool use]", "interrupt", 200)))
			r.logRecords(ctLine("/p/s1.jsonl", ctClaudeUse("s1", "", "msg_1", "toolu_9", 100)))
			r.shutdown()
		}, want: map[string][]string{"toolu_9": {"log:rejected"}}},
		{name: "paired: a refusal text without toolDenialKind is an ordinary result", run: func(r *ctRig) {
			l := ctClaudeRefusalLine("s1", "toolu_9", "The user doesn't want to proceed with this tool use.", "", 200)
			r.logRecords(ctLine("/p/s1.jsonl", ctClaudeUse("s1", "", "msg_1", "toolu_9", 100)), ctLine("/p/s1.jsonl", l))
		}, want: map[string][]string{"toolu_9": {"log:paired"}}},
		{name: "rejected: Codex denied and abort", run: func(r *ctRig) {
			r.logRecords(ctCodexDecision("call_d", "denied", 100), ctCodexDecision("call_a", "abort", 100))
			r.shutdown()
		}, want: map[string][]string{}},
		{name: "rejected: a later result of the call is a duplicate", mutate: mark, run: func(r *ctRig) {
			r.logRecords(ctClaudeDecision("toolu_r", "reject", 100))
			r.logRecords(ctClaudeResult("toolu_r", 300))
		}, want: map[string][]string{"toolu_r": {"log:duplicate"}}},
		{name: "rejected: the result of a refused call is kept, marked duplicate, whether it comes after the refusal", run: func(r *ctRig) {
			r.logRecords(ctCodexDecision("call_d", "denied", 100))
			r.logRecords(ctCodexResult("call_d", 110))
			r.logRecords(ctCodexResult("call_d", 110)) // an export retry: dropped
			r.spans(ctCodexToolSpan("call_d", 100, 110, false))
			r.advance(31 * time.Second)
			assert.Len(t, r.outLogs(), 2)
		}, want: map[string][]string{"call_d": {"log:duplicate", "span:duplicate"}}},
		{name: "rejected: ... or before it", run: func(r *ctRig) {
			r.logRecords(ctCodexResult("call_d", 110))
			r.spans(ctCodexToolSpan("call_d", 100, 110, false))
			r.logRecords(ctCodexDecision("call_d", "denied", 100))
			r.logRecords(ctCodexResult("call_d", 110)) // an export retry: dropped
			r.advance(31 * time.Second)
			assert.Len(t, r.outLogs(), 2)
		}, want: map[string][]string{"call_d": {"log:duplicate", "span:duplicate"}}},
		{name: "orphan: no use within orphan_grace, in a scope where uses are visible", run: func(r *ctRig) {
			r.spans(ctChat(1, 1, 0, 0, 100, "c1"), ctTool(1, 2, 0, "c1", 110, 150), ctTool(1, 3, 0, "ghost", 110, 160))
			r.advance(29 * time.Second)
			require.NotContains(t, r.marks(nil), "ghost", "held for orphan_grace")
			r.advance(2 * time.Second)
		}, want: map[string][]string{"c1": {"span:paired"}, "ghost": {"span:orphan"}}},
		{name: "standalone: no use visible in the scope", run: func(r *ctRig) {
			r.spans(ctChat(1, 1, 0, 0, 100), ctTool(1, 2, 0, "c1", 110, 150))
			r.advance(31 * time.Second)
		}, want: map[string][]string{"c1": {"span:standalone"}}},
		{name: "duplicate: a second result of a paired call (marked)", mutate: mark, run: func(r *ctRig) {
			r.spans(ctChat(1, 1, 0, 0, 100, "c1"), ctTool(1, 2, 0, "c1", 110, 150))
			r.spans(ctTool(1, 2, 0, "c1", 110, 150))
		}, want: map[string][]string{"c1": {"span:duplicate", "span:paired"}}},
		{name: "duplicate: a result after the call was interrupted and synthesized", mutate: mark, run: func(r *ctRig) {
			r.spans(ctChat(1, 1, 0, 0, 100, "c1"))
			r.advance(10 * time.Minute)
			r.spans(ctTool(1, 2, 0, "c1", 110, 150))
		}, want: map[string][]string{"c1": {"span:duplicate", "span:interrupted/expired+synthetic"}}},
		{name: "a second copy of a held result: the first resolves the call, the second is a duplicate", mutate: mark, run: func(r *ctRig) {
			r.spans(ctChat(1, 1, 0, 0, 100, "other"), ctTool(1, 3, 0, "other", 100, 200))
			r.spans(ctTool(1, 2, 0, "c1", 110, 150))
			r.spans(ctTool(1, 2, 0, "c1", 110, 150))
			r.advance(31 * time.Second)
		}, want: map[string][]string{"c1": {"span:duplicate", "span:orphan"}, "other": {"span:paired"}}},
		{name: "a use arriving after its result was released standalone is a repeat, never interrupted (docs/pairing.md)", run: func(r *ctRig) {
			r.spans(ctTool(1, 2, 0, "c1", 110, 150))
			r.advance(31 * time.Second)
			r.spans(ctChat(1, 1, 0, 0, 100, "c1"))
			r.shutdown()
			assert.Equal(t, int64(1), r.sum("otelcol_processor_toolpair_uses_repeated", nil))
		}, want: map[string][]string{"c1": {"span:standalone"}}},
		{name: "order of arrival: a boundary seen before the result it follows still lets the call pair", run: func(r *ctRig) {
			r.spans(ctChat(1, 1, 7, 0, 100, "c1"), ctChat(1, 3, 7, 400, 500))
			r.advance(20 * time.Second)
			r.spans(ctTool(1, 2, 7, "c1", 110, 350))
			r.advance(20 * time.Second)
		}, want: map[string][]string{"c1": {"span:paired"}}},
		{name: "order of arrival: a session end seen before the result still lets the call pair", run: func(r *ctRig) {
			r.spans(ctChat(1, 1, 7, 0, 100, "c1"), ctAgent(1, 7, 0, 0, 500))
			r.advance(20 * time.Second)
			r.spans(ctTool(1, 2, 7, "c1", 110, 350))
			r.advance(20 * time.Second)
		}, want: map[string][]string{"c1": {"span:paired"}}},
		{name: "evicted: a waiting result counts against max_pending_calls and is released when evicted", mutate: func(c *Config) { c.MaxPendingCalls = 2 }, run: func(r *ctRig) {
			r.spans(ctTool(1, 2, 0, "w1", 110, 150))
			r.spans(ctChat(2, 1, 0, 0, 100, "c1"))
			require.Empty(t, r.marks(nil))
			r.spans(ctChat(3, 1, 0, 0, 100, "c2"))
		}, want: map[string][]string{"w1": {"span:standalone"}}},
		{name: "a repeated use is not a new call (invoke_agent repeats its chat spans' calls)", run: func(r *ctRig) {
			agent := ctAgent(1, 7, 0, 0, 500)
			agent.attrs["gen_ai.output.messages"] = ctChat(1, 0, 0, 0, 0, "c1").attrs["gen_ai.output.messages"]
			r.spans(ctChat(1, 1, 7, 0, 100, "c1"), ctTool(1, 2, 7, "c1", 110, 150), agent)
			r.spans(ctChat(1, 1, 7, 0, 100, "c1")) // an export retry
			r.advance(11 * time.Minute)
			r.shutdown()
			assert.Equal(t, int64(2), r.sum("otelcol_processor_toolpair_uses_repeated", nil))
			assert.Equal(t, int64(1), r.sum("otelcol_processor_toolpair_uses", nil))
		}, want: map[string][]string{"c1": {"span:paired"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newCTRig(t, tt.mutate)
			tt.run(r)
			assert.Equal(t, tt.want, r.marks(ctTranscriptCallID))
			r.checkConservation()
		})
	}
}

// TestContractS2RepeatedKeysLastWins: a key repeated within one record's attributes (or its
// resource's) is read at its last occurrence, for every field the processor reads: call IDs,
// scope and tenant attributes, event names, decisions. Each case sends one record (and its
// resource) with a stale first occurrence of one key before the real one; read at the first,
// the call would not pair (or would be refused, or its result would not be one).
func TestContractS2RepeatedKeysLastWins(t *testing.T) {
	tests := []struct {
		name   string
		logs   []ctLog
		spans  []ctSpan
		key    string // repeated on record repeatOn (and its resource), stale value first
		stale  string
		signal string // where the paired result is
		// repeatOn is the index, in logs or spans, of the record whose key is repeated; each
		// record goes in a batch of its own.
		repeatOn int
	}{
		{name: "call ID (tool_use_id)", logs: []ctLog{ctClaudeDecision("toolu_1", "accept", 100), ctClaudeResult("toolu_1", 300)},
			key: "tool_use_id", stale: "toolu_stale", signal: "log", repeatOn: 1},
		{name: "call ID (gen_ai.tool.call.id)", spans: []ctSpan{ctChat(1, 1, 0, 0, 100, "c1"), ctTool(1, 2, 0, "c1", 110, 150)},
			key: "gen_ai.tool.call.id", stale: "c_stale", signal: "span", repeatOn: 1},
		{name: "scope (session.id)", logs: []ctLog{ctClaudeDecision("toolu_1", "accept", 100), ctClaudeResult("toolu_1", 300)},
			key: "session.id", stale: "sess-stale", signal: "log", repeatOn: 1},
		{name: "tenant (service.name, a resource attribute)", logs: []ctLog{ctClaudeDecision("toolu_1", "accept", 100), ctClaudeResult("toolu_1", 300)},
			key: "service.name", stale: "other-service", signal: "log", repeatOn: 0},
		{name: "event name (event.name)", logs: []ctLog{ctCodexDecision("call_1", "approved", 100), ctCodexResult("call_1", 300)},
			key: "event.name", stale: "codex.sse_event", signal: "log", repeatOn: 1},
		{name: "decision", logs: []ctLog{ctCodexDecision("call_1", "approved", 100), ctCodexResult("call_1", 300)},
			key: "decision", stale: "denied", signal: "log", repeatOn: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newCTRig(t, nil)
			for i, s := range tt.spans {
				td := ctTraces(s)
				if i == tt.repeatOn {
					td = ctRepeatKey(t, td, tt.key, tt.stale)
				}
				require.NoError(t, r.traces.ConsumeTraces(context.Background(), td))
			}
			for i, l := range tt.logs {
				ld := ctLogs(l)
				if i == tt.repeatOn {
					ld = ctRepeatKey(t, ld, tt.key, tt.stale)
				}
				require.NoError(t, r.logs.ConsumeLogs(context.Background(), ld))
			}
			r.advance(11 * time.Minute)
			r.shutdown()
			var marks []string
			for _, s := range r.outSpans() {
				if o := ctStr(s.Attributes(), "toolpair.outcome"); o != "" {
					marks = append(marks, ctMark("span", s.Attributes()))
				}
			}
			for _, lr := range r.outLogs() {
				if o := ctStr(lr.Attributes(), "toolpair.outcome"); o != "" {
					marks = append(marks, ctMark("log", lr.Attributes()))
				}
			}
			assert.Equal(t, []string{tt.signal + ":paired"}, marks)
			r.checkConservation()
		})
	}
}

// ctRepeatKey returns a copy of data (plog.Logs or ptrace.Traces) in which every attribute
// list holding key (of resources and records) first holds key again with the string value
// stale: repeated keys as OTLP carries them (pcommon's Put methods cannot make them).
func ctRepeatKey[T plog.Logs | ptrace.Traces](t *testing.T, data T, key, stale string) T {
	t.Helper()
	var raw []byte
	var err error
	switch d := any(data).(type) {
	case plog.Logs:
		raw, err = (&plog.JSONMarshaler{}).MarshalLogs(d)
	case ptrace.Traces:
		raw, err = (&ptrace.JSONMarshaler{}).MarshalTraces(d)
	}
	require.NoError(t, err)
	var doc any
	require.NoError(t, json.Unmarshal(raw, &doc))
	repeated := 0
	var walk func(any)
	walk = func(n any) {
		switch n := n.(type) {
		case map[string]any:
			for k, v := range n {
				if list, ok := v.([]any); ok && k == "attributes" {
					for _, a := range list {
						if a.(map[string]any)["key"] == key {
							stalePair := map[string]any{"key": key, "value": map[string]any{"stringValue": stale}}
							n[k] = append([]any{stalePair}, list...)
							repeated++
							break
						}
					}
					continue
				}
				walk(v)
			}
		case []any:
			for _, v := range n {
				walk(v)
			}
		}
	}
	walk(doc)
	require.Positive(t, repeated, "no attribute %s to repeat", key)
	raw, err = json.Marshal(doc)
	require.NoError(t, err)
	var out any
	switch any(data).(type) {
	case plog.Logs:
		out, err = (&plog.JSONUnmarshaler{}).UnmarshalLogs(raw)
	case ptrace.Traces:
		out, err = (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
	}
	require.NoError(t, err)
	return out.(T)
}

// TestContractS2TranscriptRefusals runs the real Claude Code transcript short.jsonl, whose two
// refused calls (toolUseResult "User rejected tool use", Claude Code 2.1.38) are given the
// toolDenialKind later versions write: those two result records are marked rejected, no
// synthetic record is made, every other call stays paired, and the processor's telemetry
// counts them under rejected with the conservation of section 7 holding.
func TestContractS2TranscriptRefusals(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "transcripts", "claude-code", "short.jsonl")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	const marker = `"toolUseResult":"User rejected tool use"`
	require.Equal(t, 2, strings.Count(string(data), marker))
	data = []byte(strings.ReplaceAll(string(data), marker, marker+`,"toolDenialKind":"permission_prompt"`))
	edited := filepath.Join(t.TempDir(), "short.jsonl")
	require.NoError(t, os.WriteFile(edited, data, 0o600))

	r := newCTRig(t, nil)
	for _, ld := range transcriptBatches(t, edited) {
		require.NoError(t, r.logs.ConsumeLogs(context.Background(), ld))
	}
	r.advance(time.Minute)
	r.shutdown()
	outcomes := map[string]int{}
	rejected := 0
	for _, lr := range r.outLogs() {
		o := ctStr(lr.Attributes(), "toolpair.outcome")
		outcomes[o]++
		if o == "rejected" {
			rejected++
			assert.Contains(t, lr.Body().Str(), marker)
			_, ok := lr.Attributes().Get("toolpair.call.duration_ms")
			assert.False(t, ok, "only paired results carry a duration")
		}
	}
	assert.Equal(t, 2, rejected)
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	assert.Equal(t, transcriptResults(t, lines)-2, outcomes["paired"], "every other call paired")
	assert.Zero(t, outcomes["interrupted"], "no synthetic record")
	const m = "otelcol_processor_toolpair_"
	assert.Equal(t, int64(2), r.sum(m+"outcomes", map[string]string{"toolpair.outcome": "rejected"}))
	r.checkConservation()
}

// TestContractS3ResultAttributes: toolpair.outcome (string) on every recognised result record,
// toolpair.call.duration_ms (int, ms: result time minus use time) on paired ones only.
func TestContractS3ResultAttributes(t *testing.T) {
	r := newCTRig(t, func(c *Config) { c.Duplicates = DispositionMark })
	r.spans(ctChat(1, 1, 0, 0, 100, "c1"), ctTool(1, 2, 0, "c1", 110, 1337))
	r.spans(ctTool(1, 2, 0, "c1", 110, 1337))
	r.logRecords(ctClaudeDecision("toolu_1", "accept", 1000), ctClaudeResult("toolu_1", 3500))
	var seen int
	for _, s := range r.outSpans() {
		if s.Name() != "execute_tool run_shell" {
			continue
		}
		seen++
		o, ok := s.Attributes().Get("toolpair.outcome")
		require.True(t, ok)
		assert.Equal(t, pcommon.ValueTypeStr, o.Type())
		d, hasDuration := s.Attributes().Get("toolpair.call.duration_ms")
		if o.Str() == "paired" {
			require.True(t, hasDuration)
			assert.Equal(t, pcommon.ValueTypeInt, d.Type())
			assert.Equal(t, int64(1237), d.Int(), "result end minus the announcing chat span's end")
		} else {
			assert.Equal(t, "duplicate", o.Str())
			assert.False(t, hasDuration, "only paired results carry a duration")
		}
	}
	assert.Equal(t, 2, seen)
	for _, lr := range r.outLogs() {
		if ctStr(lr.Attributes(), "event.name") == "tool_result" {
			d, ok := lr.Attributes().Get("toolpair.call.duration_ms")
			require.True(t, ok)
			assert.Equal(t, pcommon.ValueTypeInt, d.Type())
			assert.Equal(t, int64(2500), d.Int(), "includes permission and queueing time, not the source's duration_ms")
			assert.Equal(t, "12", ctStr(lr.Attributes(), "duration_ms"), "the source's own duration is kept")
		}
		if ctStr(lr.Attributes(), "event.name") == "tool_decision" {
			_, ok := lr.Attributes().Get("toolpair.outcome")
			assert.False(t, ok, "nothing is required on use records")
		}
	}
}

// TestContractS3CallStart: a call starts at the earliest time any of its records shows (the
// announcing record, a decision, the start of the result span, the start a result event's own
// duration_ms shows), in any order of arrival, so the paired duration is never shorter than
// the tool's own.
func TestContractS3CallStart(t *testing.T) {
	tests := []struct {
		name   string
		run    func(r *ctRig)
		result func(r *ctRig) pcommon.Map // the result record's attributes
		wantMs int64
	}{
		{name: "a Codex tool span that starts before the decision", run: func(r *ctRig) {
			r.logRecords(ctCodexDecision("call_1", "approved", 1000))
			r.spans(ctCodexToolSpan("call_1", 900, 1500, false))
		}, result: ctOutSpanAttrs("exec_command"), wantMs: 600},
		{name: "the tool span first, then the decision", run: func(r *ctRig) {
			r.spans(ctCodexToolSpan("call_1", 900, 1500, false))
			r.logRecords(ctCodexDecision("call_1", "approved", 1000))
		}, result: ctOutSpanAttrs("exec_command"), wantMs: 600},
		{name: "a tool span that starts after the decision", run: func(r *ctRig) {
			r.logRecords(ctCodexDecision("call_1", "approved", 1000))
			r.spans(ctCodexToolSpan("call_1", 1100, 1500, false))
		}, result: ctOutSpanAttrs("exec_command"), wantMs: 500},
		{name: "an execute_tool span that starts before the chat span ends", run: func(r *ctRig) {
			r.spans(ctChat(1, 1, 0, 0, 100, "c1"), ctTool(1, 2, 0, "c1", 60, 400))
		}, result: ctOutSpanAttrs("execute_tool run_shell"), wantMs: 340},
		{name: "a result event whose duration_ms reaches back before the decision", run: func(r *ctRig) {
			// duration_ms "7": the tool started at 1003, before the decision at 1005.
			r.logRecords(ctCodexDecision("call_1", "approved", 1005), ctCodexResult("call_1", 1010))
		}, result: ctOutLogAttrs("codex.tool_result"), wantMs: 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newCTRig(t, nil)
			tt.run(r)
			r.advance(time.Minute)
			attrs := tt.result(r)
			assert.Equal(t, "paired", ctStr(attrs, "toolpair.outcome"))
			d, ok := attrs.Get("toolpair.call.duration_ms")
			require.True(t, ok)
			assert.Equal(t, tt.wantMs, d.Int())
		})
	}
}

// ctOutSpanAttrs returns a getter of the attributes of the one output span named name.
func ctOutSpanAttrs(name string) func(r *ctRig) pcommon.Map {
	return func(r *ctRig) pcommon.Map {
		var found []pcommon.Map
		for _, s := range r.outSpans() {
			if s.Name() == name {
				found = append(found, s.Attributes())
			}
		}
		require.Len(r.t, found, 1)
		return found[0]
	}
}

// ctOutLogAttrs returns a getter of the attributes of the one output log record of event.
func ctOutLogAttrs(event string) func(r *ctRig) pcommon.Map {
	return func(r *ctRig) pcommon.Map {
		var found []pcommon.Map
		for _, lr := range r.outLogs() {
			if ctStr(lr.Attributes(), "event.name") == event {
				found = append(found, lr.Attributes())
			}
		}
		require.Len(r.t, found, 1)
		return found[0]
	}
}

// TestContractS3SyntheticSpan: the synthetic span of an interrupted call announced by a span,
// field by field, for each reason that makes one; its ID is the same on a replay.
func TestContractS3SyntheticSpan(t *testing.T) {
	res := map[string]any{"service.version": "1.2.3", "host.name": "box"}
	withRes := func(s ctSpan) ctSpan { s.res = res; return s }
	tests := []struct {
		name     string
		mutate   func(*Config)
		run      func(r *ctRig)
		reason   string
		parent   pcommon.SpanID // want
		end      func(r *ctRig) pcommon.Timestamp
		scopeKey string // scope attribute expected on the synthetic span, "" for none
	}{
		{name: "expired: parent is the announcing span's parent, end the scope's last sign of life", run: func(r *ctRig) {
			r.spans(withRes(ctWith(ctChat(1, 1, 7, 0, 100, "c1"), "gen_ai.conversation.id", "conv-1")))
			// Another call's tool span in the same conversation, later in record time, and one
			// of another conversation later still: the first is the scope's last sign of life.
			r.spans(ctWith(ctTool(1, 4, 7, "c2", 300, 700), "gen_ai.conversation.id", "conv-1"),
				ctWith(ctTool(2, 5, 7, "c3", 300, 9000), "gen_ai.conversation.id", "conv-2"))
			r.advance(10 * time.Minute)
		}, reason: "expired", parent: ctSpanID(7), end: func(*ctRig) pcommon.Timestamp { return ctTS(700) }, scopeKey: "gen_ai.conversation.id"},
		{name: "shutdown: a root announcing span is the parent, end the use time when nothing followed", run: func(r *ctRig) {
			r.spans(withRes(ctChat(1, 1, 0, 0, 100, "c1")))
			r.shutdown()
		}, reason: "shutdown", parent: ctSpanID(1), end: func(*ctRig) pcommon.Timestamp { return ctTS(100) }},
		{name: "next_step: ends at the boundary", run: func(r *ctRig) {
			r.spans(withRes(ctChat(1, 1, 7, 0, 100, "c1")), ctChat(1, 3, 7, 400, 500))
			r.advance(31 * time.Second)
		}, reason: "next_step", parent: ctSpanID(7), end: func(*ctRig) pcommon.Timestamp { return ctTS(400) }},
		{name: "session_end: ends at the session end", run: func(r *ctRig) {
			r.spans(withRes(ctWith(ctChat(1, 1, 7, 0, 100, "c1"), "session.id", "s-9")), ctWith(ctAgent(1, 7, 0, 0, 800), "session.id", "s-9"))
			r.advance(31 * time.Second)
		}, reason: "session_end", parent: ctSpanID(7), end: func(*ctRig) pcommon.Timestamp { return ctTS(800) }, scopeKey: "session.id"},
		{name: "evicted: ends in record time, not at the detection time", mutate: func(c *Config) { c.MaxPendingCalls = 1 }, run: func(r *ctRig) {
			r.spans(withRes(ctChat(1, 1, 7, 0, 100, "c1")))
			r.spans(ctChat(2, 1, 7, 0, 100, "c2"))
		}, reason: "evicted", parent: ctSpanID(7), end: func(*ctRig) pcommon.Timestamp { return ctTS(100) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ids []pcommon.SpanID
			for range 2 { // a replay yields the same span ID
				r := newCTRig(t, tt.mutate)
				tt.run(r)
				var synthetic []ptrace.Span
				var resource pcommon.Resource
				for _, td := range r.tsink.AllTraces() {
					ctEachSpan(td, func(res pcommon.Resource, s ptrace.Span) {
						if v, ok := s.Attributes().Get("toolpair.synthetic"); ok && v.Bool() && ctStr(s.Attributes(), "gen_ai.tool.call.id") == "c1" {
							synthetic = append(synthetic, s)
							resource = res
						}
					})
				}
				require.Len(t, synthetic, 1)
				s := synthetic[0]
				assert.Equal(t, "execute_tool run_shell", s.Name())
				assert.Equal(t, ptrace.SpanKindInternal, s.Kind())
				assert.Equal(t, ctTraceID(1), s.TraceID())
				assert.Equal(t, tt.parent, s.ParentSpanID())
				assert.Equal(t, ctSyntheticSpanID(ctTraceID(1), "c1"), s.SpanID())
				assert.Equal(t, ctTS(100), s.StartTimestamp(), "start = use time (the chat span's end)")
				assert.Equal(t, tt.end(r), s.EndTimestamp())
				assert.Equal(t, ptrace.StatusCodeError, s.Status().Code())
				assert.Equal(t, "tool call interrupted: "+tt.reason, s.Status().Message())
				want := map[string]any{
					"gen_ai.operation.name":     "execute_tool",
					"gen_ai.tool.name":          "run_shell",
					"gen_ai.tool.call.id":       "c1",
					"error.type":                "tool_call_interrupted",
					"toolpair.synthetic":        true,
					"toolpair.outcome":          "interrupted",
					"toolpair.interrupt.reason": tt.reason,
					"toolpair.call.counted":     int64(1),
				}
				if tt.scopeKey != "" {
					v, _ := ctWith(ctChat(0, 0, 0, 0, 0), "gen_ai.conversation.id", "conv-1", "session.id", "s-9").attrs[tt.scopeKey].(string)
					want[tt.scopeKey] = v
				}
				assert.Equal(t, want, s.Attributes().AsRaw(), "exact attributes: no content copied")
				assert.Equal(t, map[string]any{"service.name": "app", "service.version": "1.2.3", "host.name": "box"}, resource.Attributes().AsRaw(), "resource copied")
				ids = append(ids, s.SpanID())
				r.shutdown()
			}
			assert.Equal(t, ids[0], ids[1])
		})
	}
}

// TestContractS3SyntheticLogRecord: the synthetic log record of an interrupted call announced
// by a log record (Claude Code and Codex decisions, transcript lines), field by field.
func TestContractS3SyntheticLogRecord(t *testing.T) {
	tests := []struct {
		name     string
		records  []ctLog
		call     string
		tool     string
		scope    map[string]any // the scope attribute that keyed the call
		resource map[string]any
		useTime  int64
	}{
		{name: "Claude Code tool_decision", records: []ctLog{func() ctLog {
			l := ctClaudeDecision("toolu_1", "accept", 100)
			l.res = map[string]any{"service.version": "2.1.330", "os.type": "linux"}
			return l
		}()}, call: "toolu_1", tool: "Bash", scope: map[string]any{"session.id": "sess-1"},
			resource: map[string]any{"service.name": "claude-code", "service.version": "2.1.330", "os.type": "linux"}},
		{name: "Codex tool_decision", records: []ctLog{ctCodexDecision("call_1", "approved", 100)},
			call: "call_1", tool: "exec_command", scope: map[string]any{"conversation.id": "conv-x"},
			resource: map[string]any{"service.name": "codex_exec"}},
		{name: "Claude Code transcript tool_use", records: []ctLog{ctLine("/p/s1.jsonl", ctClaudeUse("s1", "", "msg_1", "toolu_9", 100))},
			call: "toolu_9", tool: "Bash", scope: map[string]any{"session.id": "s1"},
			resource: map[string]any{"service.name": "transcripts"}},
		{name: "Claude Code subagent transcript tool_use", records: []ctLog{ctLine("/p/s1/subagents/agent-a7.jsonl", ctClaudeUse("s1", "a7", "msg_1", "toolu_8", 100))},
			call: "toolu_8", tool: "Bash", scope: map[string]any{"session.id": "s1/a7"},
			resource: map[string]any{"service.name": "transcripts"}},
		{name: "pi transcript toolCall", records: []ctLog{ctLine("/pi/sessions/x.jsonl", ctPiUse("e1", "call_pi", 100))},
			call: "call_pi", tool: "bash", scope: map[string]any{"log.file.path": "/pi/sessions/x.jsonl"},
			resource: map[string]any{"service.name": "transcripts"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newCTRig(t, nil)
			r.logRecords(tt.records...)
			r.advance(10 * time.Minute)
			var synthetic []plog.LogRecord
			var resource pcommon.Resource
			for _, ld := range r.lsink.AllLogs() {
				ctEachLog(ld, func(res pcommon.Resource, lr plog.LogRecord) {
					if v, ok := lr.Attributes().Get("toolpair.synthetic"); ok && v.Bool() {
						synthetic = append(synthetic, lr)
						resource = res
					}
				})
			}
			require.Len(t, synthetic, 1)
			lr := synthetic[0]
			assert.Equal(t, "toolpair.tool_call.interrupted", lr.EventName())
			assert.Equal(t, plog.SeverityNumberWarn, lr.SeverityNumber())
			assert.Equal(t, "WARN", lr.SeverityText())
			assert.Equal(t, ctTS(100), lr.Timestamp(), "timestamp = end: the use time when nothing followed in the scope, never the clock")
			assert.Equal(t, pcommon.ValueTypeStr, lr.Body().Type())
			assert.Equal(t, fmt.Sprintf("tool call %s (%s) interrupted: expired", tt.call, tt.tool), lr.Body().Str())
			want := map[string]any{
				"gen_ai.operation.name":     "execute_tool",
				"gen_ai.tool.name":          tt.tool,
				"gen_ai.tool.call.id":       tt.call,
				"error.type":                "tool_call_interrupted",
				"toolpair.synthetic":        true,
				"toolpair.outcome":          "interrupted",
				"toolpair.interrupt.reason": "expired",
				"toolpair.call.counted":     int64(1),
			}
			for k, v := range tt.scope {
				want[k] = v
			}
			assert.Equal(t, want, lr.Attributes().AsRaw(), "exact attributes: no content copied")
			assert.Equal(t, tt.resource, resource.Attributes().AsRaw(), "resource copied from the announcing record")
			assert.NotContains(t, lr.Body().Str(), "secret", "no tool arguments")
		})
	}
}

// TestContractS3Dispositions: orphans and duplicates are marked or dropped; defaults orphans
// mark, duplicates drop; dropped records are still counted.
func TestContractS3Dispositions(t *testing.T) {
	tests := []struct {
		name       string
		mutate     func(*Config)
		wantOrphan []string
		wantDupe   []string
	}{
		{name: "defaults", wantOrphan: []string{"span:orphan"}, wantDupe: []string{"span:paired"}},
		{name: "orphans drop, duplicates mark", mutate: func(c *Config) { c.Orphans, c.Duplicates = DispositionDrop, DispositionMark },
			wantDupe: []string{"span:duplicate", "span:paired"}},
		{name: "both mark", mutate: func(c *Config) { c.Orphans, c.Duplicates = DispositionMark, DispositionMark },
			wantOrphan: []string{"span:orphan"}, wantDupe: []string{"span:duplicate", "span:paired"}},
		{name: "both drop", mutate: func(c *Config) { c.Orphans, c.Duplicates = DispositionDrop, DispositionDrop },
			wantDupe: []string{"span:paired"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newCTRig(t, tt.mutate)
			r.spans(ctChat(1, 1, 0, 0, 100, "c1"), ctTool(1, 2, 0, "c1", 110, 150), ctTool(1, 3, 0, "ghost", 110, 150))
			r.spans(ctTool(1, 2, 0, "c1", 110, 150))
			r.advance(31 * time.Second)
			m := r.marks(nil)
			assert.Equal(t, tt.wantOrphan, m["ghost"])
			assert.Equal(t, tt.wantDupe, m["c1"])
			assert.Len(t, r.outSpans(), 1+len(tt.wantOrphan)+len(tt.wantDupe), "nothing else dropped")
			const outcomes = "otelcol_processor_toolpair_outcomes"
			assert.Equal(t, int64(1), r.sum(outcomes, map[string]string{"toolpair.outcome": "orphan"}))
			assert.Equal(t, int64(1), r.sum(outcomes, map[string]string{"toolpair.outcome": "duplicate"}))
			r.checkConservation()
		})
	}
}

// TestContractS4Recognition: which records are timeouts. A record is a timeout when its
// error.type is one of the set, an HTTP status code is 408 or 504, or a status/error/exception
// message matches `timed? ?out|deadline exceeded` case-insensitively; a timeout record gets
// toolpair.timeout.phase, anything else nothing. The records are model call spans (phase
// provider) and Codex/Claude Code model-call log events, so only recognition is at stake.
func TestContractS4Recognition(t *testing.T) {
	chat := func(mod func(*ctSpan)) ctSpan {
		s := ctChat(1, 1, 0, 0, 100)
		mod(&s)
		return s
	}
	attr := func(kv ...any) func(*ctSpan) { return func(s *ctSpan) { *s = ctWith(*s, kv...) } }
	status := func(msg string) func(*ctSpan) {
		return func(s *ctSpan) { s.status, s.statusMessage = ptrace.StatusCodeError, msg }
	}
	spanTests := []struct {
		name    string
		span    ctSpan
		timeout bool
	}{
		{"error.type timeout", chat(attr("error.type", "timeout")), true},
		{"error.type TimeoutError", chat(attr("error.type", "TimeoutError")), true},
		{"error.type APITimeoutError", chat(attr("error.type", "APITimeoutError")), true},
		{"error.type DeadlineExceeded", chat(attr("error.type", "DeadlineExceeded")), true},
		{"error.type 408", chat(attr("error.type", "408")), true},
		{"error.type 504", chat(attr("error.type", "504")), true},
		{"error.type other", chat(attr("error.type", "tool_error")), false},
		{"error.type 500", chat(attr("error.type", "500")), false},
		{"http.response.status_code 408 (int)", chat(attr("http.response.status_code", int64(408))), true},
		{"http.response.status_code 504 (string)", chat(attr("http.response.status_code", "504")), true},
		{"http.status_code 504", chat(attr("http.status_code", int64(504))), true},
		{"status_code 408", chat(attr("status_code", "408")), true},
		{"http.response.status_code 429", chat(attr("http.response.status_code", int64(429))), false},
		{"http.response.status_code 503", chat(attr("http.response.status_code", int64(503))), false},
		{"http.response.status_code 529", chat(attr("http.response.status_code", "529")), false},
		{"http.response.status_code 200", chat(attr("http.response.status_code", int64(200))), false},
		{"status message timed out", chat(status("Request timed out.")), true},
		{"status message upper case", chat(status("REQUEST TIMED OUT")), true},
		{"status message timeout", chat(status("connect Timeout after 30s")), true},
		{"status message time out", chat(status("read time out")), true},
		{"status message deadline exceeded", chat(status("context Deadline Exceeded")), true},
		{"status message DEADLINE EXCEEDED", chat(status("rpc error: code = DEADLINE EXCEEDED")), true},
		{"status message other error", chat(status("overloaded_error")), false},
		{"error.message", chat(attr("error.message", "idle timeout waiting for SSE")), true},
		{"exception.message on an exception event", chat(func(s *ctSpan) {
			s.events = []ctEvent{{name: "exception", attrs: map[string]any{"exception.type": "Error", "exception.message": "The operation was aborted due to timeout"}}}
		}), true},
		{"exception.type on an exception event", chat(func(s *ctSpan) {
			s.events = []ctEvent{{name: "exception", attrs: map[string]any{"exception.type": "TimeoutError", "exception.message": "aborted"}}}
		}), true},
		{"fetch failed is not a timeout", chat(func(s *ctSpan) {
			s.status, s.statusMessage = ptrace.StatusCodeError, "fetch failed sending request"
			s.events = []ctEvent{{name: "exception", attrs: map[string]any{"exception.type": "TypeError", "exception.message": "fetch failed"}}}
		}), false},
		{"no error at all", chat(func(*ctSpan) {}), false},
	}
	for _, tt := range spanTests {
		t.Run("span/"+tt.name, func(t *testing.T) {
			r := newCTRig(t, nil)
			r.spans(tt.span)
			out := r.outSpans()
			require.Len(t, out, 1)
			phase, ok := out[0].Attributes().Get("toolpair.timeout.phase")
			require.Equal(t, tt.timeout, ok, "timeout recognised")
			if ok {
				assert.Equal(t, "provider", phase.Str(), "a model call's timeout")
				n, ok := out[0].Attributes().Get("toolpair.timeout.active_tools")
				require.True(t, ok)
				assert.Equal(t, pcommon.ValueTypeInt, n.Type())
				assert.Equal(t, int64(1), r.sum("otelcol_processor_toolpair_timeouts", map[string]string{"toolpair.timeout.phase": "provider"}))
			}
		})
	}

	logTests := []struct {
		name   string
		record ctLog
		phase  string // "" when not a timeout
	}{
		{"Codex codex.sse_event idle timeout waiting for SSE", ctCodex("codex.sse_event", 100, 9, "event.kind", "response", "error.message", "idle timeout waiting for SSE", "duration_ms", "6000"), "provider"},
		{"Codex codex.api_request 504", ctCodex("codex.api_request", 100, 9, "http.response.status_code", "504", "duration_ms", "10"), "provider"},
		{"Codex codex.api_request 200", ctCodex("codex.api_request", 100, 9, "http.response.status_code", "200", "duration_ms", "10"), ""},
		{"Codex codex.tool_result timed out", ctCodex("codex.tool_result", 100, 9, "call_id", "call_t", "tool_name", "exec_command", "duration_ms", "50", "success", "false", "error.message", "command timed out"), "tool_execution"},
		{"Claude Code api_error Request timed out.", ctClaude("api_error", 100, "sess-1", "error", "Request timed out.", "status_code", "undefined", "duration_ms", "60000"), "provider"},
		{"Claude Code api_error 504", ctClaude("api_error", 100, "sess-1", "error", "upstream", "status_code", "504", "duration_ms", "60000"), "provider"},
		{"Claude Code api_error overloaded (529)", ctClaude("api_error", 100, "sess-1", "error", "Overloaded", "status_code", "529", "duration_ms", "900"), ""},
		{"Claude Code api_error error_class api_timeout", ctClaude("api_error", 100, "sess-1", "error_class", "api_timeout", "duration_ms", "60000"), "provider"},
		{"Claude Code tool_result Command timed out", ctClaude("tool_result", 100, "sess-1", "tool_use_id", "toolu_t", "tool_name", "Bash", "success", "false", "duration_ms", "120000", "error", "Command timed out after 2m 0s"), "tool_execution"},
		{"Claude Code tool_result Shell command failed", ctClaude("tool_result", 100, "sess-1", "tool_use_id", "toolu_t", "tool_name", "Bash", "success", "false", "duration_ms", "120000", "error", "Shell command failed"), ""},
		{"a gen_ai.choice with error.type DeadlineExceeded", ctLog{time: 100, body: "x", attrs: map[string]any{"event.name": "gen_ai.choice", "error.type": "DeadlineExceeded"}}, "provider"},
		{"a log record with exception.type TimeoutError", ctLog{time: 100, body: "boom", attrs: map[string]any{"exception.type": "TimeoutError", "exception.message": "x"}}, "unknown"},
		{"a transcript api_error line, status 504, no timeout text", ctLog{time: 100, body: `{"type":"system","subtype":"api_error","error":{"message":"Bad gateway","status":504},"sessionId":"sess-1","timestamp":"2026-11-22T04:54:51.724Z"}`}, "provider"},
		{"a transcript api_error line, status 502", ctLog{time: 100, body: `{"type":"system","subtype":"api_error","error":{"message":"Bad gateway","status":502,"requestId":"req_504"},"sessionId":"sess-1","timestamp":"2026-11-22T04:54:51.724Z"}`}, ""},
	}
	for _, tt := range logTests {
		t.Run("log/"+tt.name, func(t *testing.T) {
			r := newCTRig(t, nil)
			r.logRecords(tt.record)
			r.advance(31 * time.Second) // a result without its use is held for orphan_grace
			out := r.outLogs()
			require.Len(t, out, 1)
			assert.Equal(t, tt.phase, ctStr(out[0].Attributes(), "toolpair.timeout.phase"))
		})
	}
}

// TestContractS4Phase: the phase and what was in flight, on GenAI spans of one trace (the
// scope): tool_execution for a tool record, or for an agent/turn-level record with a tool
// call of its scope in flight at its end; provider for a model call, or when a model call and
// no tool was in flight; compaction; unknown. active_tools counts calls once each;
// active_tool.* describe the most recently started call in flight.
func TestContractS4Phase(t *testing.T) {
	timedOut := func(s ctSpan) ctSpan {
		s.status, s.statusMessage = ptrace.StatusCodeError, "timed out"
		return s
	}
	tests := []struct {
		name  string
		spans []ctSpan
		check string // name of the span checked
		want  map[string]any
	}{
		{name: "agent timeout with two calls in flight", spans: []ctSpan{
			ctChat(1, 1, 7, 0, 100, "c1", "c2"), ctChat(1, 2, 7, 100, 300, "c3"), ctTool(1, 3, 7, "c3", 300, 400),
			timedOut(ctAgent(1, 7, 0, 0, 60_300)),
		}, check: "invoke_agent a", want: map[string]any{
			"toolpair.timeout.phase": "tool_execution", "toolpair.timeout.active_tools": int64(2),
			"toolpair.timeout.active_tool.name": "run_shell", "toolpair.timeout.active_tool.call_id": "c2",
			"toolpair.timeout.active_tool.elapsed_ms": int64(60_200),
		}},
		{name: "a call announced twice counts once", spans: []ctSpan{
			ctChat(1, 1, 7, 0, 100, "c1"), ctChat(1, 1, 7, 0, 100, "c1"),
			timedOut(ctAgent(1, 7, 0, 0, 5100)),
		}, check: "invoke_agent a", want: map[string]any{
			"toolpair.timeout.phase": "tool_execution", "toolpair.timeout.active_tools": int64(1),
			"toolpair.timeout.active_tool.name": "run_shell", "toolpair.timeout.active_tool.call_id": "c1",
			"toolpair.timeout.active_tool.elapsed_ms": int64(5000),
		}},
		{name: "the tool record's own timeout", spans: []ctSpan{
			ctChat(1, 1, 7, 0, 100, "c1"), ctWith(ctTool(1, 3, 7, "c1", 100, 2100), "error.type", "timeout"),
		}, check: "execute_tool run_shell", want: map[string]any{
			"toolpair.timeout.phase": "tool_execution", "toolpair.timeout.active_tools": int64(1),
			"toolpair.timeout.active_tool.name": "run_shell", "toolpair.timeout.active_tool.call_id": "c1",
			"toolpair.timeout.active_tool.elapsed_ms": int64(2000),
		}},
		{name: "a model call's timeout, a tool of the scope in flight too: provider", spans: []ctSpan{
			ctChat(1, 1, 7, 0, 100, "c1"), timedOut(ctChat(1, 2, 7, 200, 9000)),
		}, check: "chat m", want: map[string]any{
			"toolpair.timeout.phase": "provider", "toolpair.timeout.active_tools": int64(1),
			"toolpair.timeout.active_tool.name": "run_shell", "toolpair.timeout.active_tool.call_id": "c1",
			"toolpair.timeout.active_tool.elapsed_ms": int64(8900),
		}},
		{name: "agent timeout, the model call in flight and no tool: provider", spans: []ctSpan{
			ctChat(1, 1, 7, 0, 100, "c1"), ctTool(1, 3, 7, "c1", 100, 200), timedOut(ctChat(1, 2, 7, 300, 30_000)),
			timedOut(ctAgent(1, 7, 0, 0, 30_001)),
		}, check: "invoke_agent a", want: map[string]any{"toolpair.timeout.phase": "provider", "toolpair.timeout.active_tools": int64(0)}},
		{name: "agent timeout during a compaction: compaction", spans: []ctSpan{
			{trace: 1, id: 4, parent: 7, name: "claude_code.compaction", start: 100, end: 40_000},
			timedOut(ctAgent(1, 7, 0, 0, 40_000)),
		}, check: "invoke_agent a", want: map[string]any{"toolpair.timeout.phase": "compaction", "toolpair.timeout.active_tools": int64(0)}},
		{name: "agent timeout with nothing in flight: unknown", spans: []ctSpan{
			ctChat(1, 1, 7, 0, 100, "c1"), ctTool(1, 3, 7, "c1", 100, 200),
			timedOut(ctAgent(1, 7, 0, 0, 50_000)),
		}, check: "invoke_agent a", want: map[string]any{"toolpair.timeout.phase": "unknown", "toolpair.timeout.active_tools": int64(0)}},
		{name: "a call of another scope is not counted", spans: []ctSpan{
			ctChat(2, 1, 7, 0, 100, "c1"),
			timedOut(ctAgent(1, 7, 0, 0, 50_000)),
		}, check: "invoke_agent a", want: map[string]any{"toolpair.timeout.phase": "unknown", "toolpair.timeout.active_tools": int64(0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newCTRig(t, nil)
			r.spans(tt.spans...)
			var checked int
			for _, s := range r.outSpans() {
				if s.Name() != tt.check {
					continue
				}
				if _, ok := s.Attributes().Get("toolpair.timeout.phase"); !ok {
					continue
				}
				checked++
				got := map[string]any{}
				s.Attributes().Range(func(k string, v pcommon.Value) bool {
					if strings.HasPrefix(k, "toolpair.timeout.") {
						got[k] = v.AsRaw()
					}
					return true
				})
				assert.Equal(t, tt.want, got)
			}
			assert.Equal(t, 1, checked)
		})
	}
}

// TestContractS4Transcripts: the markers the agents write in their transcripts (section 8):
// Claude Code's and pi's `Command timed out` tool results and OpenClaw's details.timedOut make
// a tool_execution timeout, with the call in flight (the real captures are in timeouts_test.go).
func TestContractS4Transcripts(t *testing.T) {
	tests := []struct {
		name  string
		line  ctLog
		use   ctLog
		phase string
	}{
		{name: "Claude Code Bash Command timed out", use: ctLine("/p/s1.jsonl", ctClaudeUse("s1", "", "msg_1", "toolu_1", 100)),
			line: func() ctLog {
				l := ctClaudeResultLine("s1", "", "toolu_1", "Exit code 143\nCommand timed out after 2s", 2200)
				l["message"].(map[string]any)["content"].([]any)[0].(map[string]any)["is_error"] = true
				return ctLine("/p/s1.jsonl", l)
			}(), phase: "tool_execution"},
		{name: "OpenClaw details.timedOut", use: ctLine("/oc/a.jsonl", ctPiUse("e1", "call_oc", 100)),
			line: ctLine("/oc/a.jsonl", func() map[string]any {
				l := ctPiResult("e2", "call_oc", 2200, map[string]any{"timedOut": true, "exitCode": nil})
				l["message"].(map[string]any)["isError"] = true
				return l
			}()), phase: "tool_execution"},
		{name: "pi Command timed out", use: ctLine("/pi/a.jsonl", ctPiUse("e1", "call_pi", 100)),
			line: ctLine("/pi/a.jsonl", func() map[string]any {
				l := ctPiResult("e2", "call_pi", 2200, nil)
				l["message"].(map[string]any)["isError"] = true
				l["message"].(map[string]any)["content"] = []any{map[string]any{"type": "text", "text": "partial\n\nCommand timed out after 2 seconds"}}
				return l
			}()), phase: "tool_execution"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newCTRig(t, nil)
			r.logRecords(tt.use, tt.line)
			out := r.outLogs()
			require.Len(t, out, 2)
			attrs := out[1].Attributes()
			assert.Equal(t, tt.phase, ctStr(attrs, "toolpair.timeout.phase"))
			assert.Equal(t, "1", ctStr(attrs, "toolpair.timeout.active_tools"))
			assert.Equal(t, int64(2100), func() int64 { v, _ := attrs.Get("toolpair.timeout.active_tool.elapsed_ms"); return v.Int() }())
			assert.Equal(t, "paired", ctStr(attrs, "toolpair.outcome"))
		})
	}
}

// TestContractS5DurationNormalization: on tool_result records (attributes, and map bodies),
// when the canonical field exists (int, double or numeric string) every mirror that exists is
// set to it as an int of milliseconds; a missing canonical field writes nothing, a mirror-only
// record is never promoted, a mirror is never created; disabled, records pass untouched. Use
// records and records that are not tool records are never touched.
func TestContractS5DurationNormalization(t *testing.T) {
	type rec struct {
		attrs map[string]any
		body  map[string]any // a pi/OpenClaw toolResult entry as a map body when set
	}
	tests := []struct {
		name      string
		mutate    func(*Config)
		in        rec
		wantAttrs map[string]any // the attributes asked about, after
		wantBody  map[string]any // the body's details after, when a body is given
	}{
		{name: "int canonical, every existing mirror set, none created",
			in:        rec{attrs: map[string]any{"durationMs": int64(461), "metadata.durationMs": int64(3), "details": map[string]any{"durationMs": "9"}}},
			wantAttrs: map[string]any{"durationMs": int64(461), "metadata.durationMs": int64(461), "details": map[string]any{"durationMs": int64(461)}}},
		{name: "numeric string canonical becomes an int on the mirrors; the canonical is left as it is",
			in:        rec{attrs: map[string]any{"durationMs": "461", "details": map[string]any{"durationMs": 1.5, "metadata": map[string]any{"durationMs": "x"}}}},
			wantAttrs: map[string]any{"durationMs": "461", "details": map[string]any{"durationMs": int64(461), "metadata": map[string]any{"durationMs": int64(461)}}}},
		{name: "double canonical rounded to ms",
			in:        rec{attrs: map[string]any{"durationMs": 460.6, "metadata.durationMs": int64(0)}},
			wantAttrs: map[string]any{"durationMs": 460.6, "metadata.durationMs": int64(461)}},
		{name: "missing canonical writes nothing (a mirror-only record is never promoted)",
			in:        rec{attrs: map[string]any{"metadata.durationMs": int64(3), "details": map[string]any{"durationMs": "9"}}},
			wantAttrs: map[string]any{"metadata.durationMs": int64(3), "details": map[string]any{"durationMs": "9"}}},
		{name: "a non-numeric canonical counts as missing",
			in:        rec{attrs: map[string]any{"durationMs": "fast", "metadata.durationMs": int64(3)}},
			wantAttrs: map[string]any{"durationMs": "fast", "metadata.durationMs": int64(3)}},
		{name: "disabled: untouched", mutate: func(c *Config) { c.DurationNormalization.Enabled = false },
			in:        rec{attrs: map[string]any{"durationMs": int64(461), "metadata.durationMs": int64(3)}},
			wantAttrs: map[string]any{"durationMs": int64(461), "metadata.durationMs": int64(3)}},
		{name: "configured canonical and mirrors", mutate: func(c *Config) {
			c.DurationNormalization.Canonical, c.DurationNormalization.Mirrors = "details.durationMs", []string{"durationMs", "timing.ms"}
		},
			in:        rec{attrs: map[string]any{"durationMs": int64(1), "metadata.durationMs": int64(3), "timing": map[string]any{"ms": int64(2)}, "details": map[string]any{"durationMs": int64(77)}}},
			wantAttrs: map[string]any{"durationMs": int64(77), "metadata.durationMs": int64(3), "timing": map[string]any{"ms": int64(77)}, "details": map[string]any{"durationMs": int64(77)}}},
		{name: "map body of a transcript result",
			in:       rec{body: map[string]any{"durationMs": "461", "details": map[string]any{"durationMs": int64(3), "metadata": map[string]any{}}}},
			wantBody: map[string]any{"durationMs": "461", "details": map[string]any{"durationMs": int64(461), "metadata": map[string]any{}}}},
	}
	for _, tt := range tests {
		for _, signal := range []string{"span", "log"} {
			if tt.in.body != nil && signal == "span" {
				continue
			}
			t.Run(signal+"/"+tt.name, func(t *testing.T) {
				r := newCTRig(t, tt.mutate)
				switch {
				case tt.in.body != nil:
					body := ctPiResult("e2", "call_pi", 200, nil)
					for k, v := range tt.in.body {
						body[k] = v
					}
					use := ctLine("/pi/a.jsonl", ctPiUse("e1", "call_pi", 100))
					res := ctLog{service: "transcripts", observed: 999_000, body: body, attrs: map[string]any{"log.file.path": "/pi/a.jsonl"}}
					r.logRecords(use, res)
					out := r.outLogs()
					require.Len(t, out, 2)
					got := out[1].Body().Map().AsRaw()
					assert.Equal(t, tt.wantBody["durationMs"], got["durationMs"])
					assert.Equal(t, tt.wantBody["details"], got["details"])
					assert.Equal(t, "paired", ctStr(out[1].Attributes(), "toolpair.outcome"))
				case signal == "span":
					res := ctTool(1, 2, 0, "c1", 110, 150)
					for k, v := range tt.in.attrs {
						res.attrs[k] = v
					}
					use := ctChat(1, 1, 0, 0, 100, "c1")
					for k, v := range tt.in.attrs {
						use.attrs[k] = v // a use record is never normalized
					}
					r.spans(res) // held while its use is missing: normalized as it leaves
					r.spans(use)
					out := r.outSpans()
					require.Len(t, out, 2)
					for _, s := range out {
						got := s.Attributes().AsRaw()
						want := tt.wantAttrs
						if s.Name() == "chat m" {
							want = tt.in.attrs
						} else {
							assert.Equal(t, "paired", got["toolpair.outcome"])
						}
						for k, v := range want {
							assert.Equal(t, v, got[k], "%s %s", s.Name(), k)
						}
						for k := range got {
							if strings.Contains(strings.ToLower(k), "duration") && k != "toolpair.call.duration_ms" {
								assert.Contains(t, want, k, "%s: no field created", s.Name())
							}
						}
					}
				default:
					res := ctClaudeResult("toolu_1", 300)
					for k, v := range tt.in.attrs {
						res.attrs[k] = v
					}
					r.logRecords(ctClaudeDecision("toolu_1", "accept", 100), res)
					out := r.outLogs()
					require.Len(t, out, 2)
					got := out[1].Attributes().AsRaw()
					for k, v := range tt.wantAttrs {
						assert.Equal(t, v, got[k], k)
					}
					assert.Equal(t, "12", got["duration_ms"], "not a mirror")
				}
			})
		}
	}

	t.Run("records that are not tool results are untouched", func(t *testing.T) {
		r := newCTRig(t, nil)
		in := map[string]any{"durationMs": int64(461), "metadata.durationMs": int64(3)}
		r.spans(ctSpan{trace: 1, id: 1, name: "GET /", start: 0, end: 10, attrs: in})
		out := r.outSpans()
		require.Len(t, out, 1)
		assert.Equal(t, in, out[0].Attributes().AsRaw())
	})
}

// TestContractS6Configuration: the defaults of the specification's table, each key's meaning
// through the processor, and refusal of invalid values with an error naming the key.
func TestContractS6Configuration(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	assert.Equal(t, []string{"gen_ai.conversation.id", "session.id", "conversation.id"}, cfg.ScopeAttributes)
	assert.Empty(t, cfg.TenantAttributes)
	assert.Equal(t, 10*time.Minute, cfg.PairingTimeout)
	assert.Equal(t, 30*time.Second, cfg.OrphanGrace)
	assert.Equal(t, 100000, cfg.MaxPendingCalls)
	assert.ElementsMatch(t, []string{"genai", "genai_events", "claude_code", "codex", "transcript", "gemini_cli", "ai_sdk", "openinference", "openllmetry"}, cfg.Dialects, "all built in")
	assert.Equal(t, Disposition("mark"), cfg.Orphans)
	assert.Equal(t, Disposition("drop"), cfg.Duplicates)
	assert.True(t, cfg.Synthesize)
	assert.True(t, cfg.TimeoutClassification.Enabled)
	assert.True(t, cfg.DurationNormalization.Enabled)
	assert.Equal(t, "durationMs", cfg.DurationNormalization.Canonical)
	assert.Equal(t, []string{"metadata.durationMs", "details.durationMs", "details.metadata.durationMs"}, cfg.DurationNormalization.Mirrors)
	require.NoError(t, cfg.Validate())

	refused := []struct {
		key    string
		mutate func(*Config)
	}{
		{"pairing_timeout", func(c *Config) { c.PairingTimeout = 0 }},
		{"pairing_timeout", func(c *Config) { c.PairingTimeout = -time.Second }},
		{"orphan_grace", func(c *Config) { c.OrphanGrace = 0 }},
		{"orphan_grace", func(c *Config) { c.OrphanGrace = -time.Second }},
		{"max_pending_calls", func(c *Config) { c.MaxPendingCalls = 0 }},
		{"dialects", func(c *Config) { c.Dialects = []string{"genai", "openinference2"} }},
		{"orphans", func(c *Config) { c.Orphans = "keep" }},
		{"duplicates", func(c *Config) { c.Duplicates = "" }},
		{"timeout_classification.retention", func(c *Config) { c.TimeoutClassification.Retention = 0 }},
		{"timeout_classification.max_tracked_operations", func(c *Config) { c.TimeoutClassification.MaxTrackedOperations = 0 }},
		{"duration_normalization.canonical", func(c *Config) { c.DurationNormalization.Canonical = "" }},
	}
	for _, tt := range refused {
		t.Run("refused/"+tt.key, func(t *testing.T) {
			c := NewFactory().CreateDefaultConfig().(*Config)
			tt.mutate(c)
			err := c.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.key)
		})
	}

	t.Run("dialects: only the configured formats are recognised", func(t *testing.T) {
		r := newCTRig(t, func(c *Config) { c.Dialects = []string{"genai"} })
		r.logRecords(ctClaudeDecision("toolu_1", "accept", 100), ctClaudeResult("toolu_1", 200))
		r.spans(ctChat(1, 1, 0, 0, 100, "c1"), ctTool(1, 2, 0, "c1", 110, 150))
		assert.Equal(t, map[string][]string{"c1": {"span:paired"}}, r.marks(nil))
		assert.Equal(t, int64(2), r.sum("otelcol_processor_toolpair_records_unrecognized", map[string]string{"otel.signal": "logs"}))
	})
	t.Run("synthesize false: interrupted calls are counted, nothing is emitted", func(t *testing.T) {
		r := newCTRig(t, func(c *Config) { c.Synthesize = false })
		r.spans(ctChat(1, 1, 0, 0, 100, "c1"))
		r.logRecords(ctClaudeDecision("toolu_1", "accept", 100))
		r.advance(10 * time.Minute)
		assert.Len(t, r.outSpans(), 1)
		assert.Len(t, r.outLogs(), 1)
		assert.Equal(t, int64(2), r.sum("otelcol_processor_toolpair_outcomes", map[string]string{"toolpair.outcome": "interrupted", "toolpair.interrupt.reason": "expired"}))
		r.checkConservation()
	})
	t.Run("timeout_classification.enabled false: timeout records untouched", func(t *testing.T) {
		r := newCTRig(t, func(c *Config) { c.TimeoutClassification.Enabled = false })
		r.spans(ctWith(ctChat(1, 1, 0, 0, 100), "error.type", "timeout"))
		out := r.outSpans()
		require.Len(t, out, 1)
		assert.Equal(t, map[string]any{"gen_ai.operation.name": "chat", "error.type": "timeout"}, out[0].Attributes().AsRaw())
	})
	t.Run("pairing_timeout and orphan_grace as configured", func(t *testing.T) {
		r := newCTRig(t, func(c *Config) { c.PairingTimeout, c.OrphanGrace = 3*time.Second, time.Second })
		r.spans(ctChat(1, 1, 0, 0, 100, "c1"), ctTool(1, 3, 0, "ghost", 110, 150))
		r.advance(900 * time.Millisecond)
		assert.Empty(t, r.marks(nil))
		r.advance(200 * time.Millisecond)
		assert.Equal(t, map[string][]string{"ghost": {"span:orphan"}}, r.marks(nil))
		r.advance(2 * time.Second)
		assert.Equal(t, map[string][]string{"ghost": {"span:orphan"}, "c1": {"span:interrupted/expired+synthetic"}}, r.marks(nil))
	})
}

// TestContractS7Telemetry: the processor's own metrics through the component's
// TelemetrySettings.MeterProvider: calls by outcome (and reason), records not recognised,
// pending calls and waiting results (gauges), malformed inputs; conservation at any moment,
// including while calls are pending and results waiting.
func TestContractS7Telemetry(t *testing.T) {
	r := newCTRig(t, func(c *Config) { c.Duplicates = DispositionMark })
	r.spans(
		ctChat(1, 1, 7, 0, 100, "p1", "p2", "n1"), ctTool(1, 2, 7, "p1", 100, 200), ctTool(1, 3, 7, "p2", 100, 200),
		ctChat(1, 4, 7, 300, 400, "e1"), // next_step closes n1; e1 stays pending
		ctTool(1, 5, 7, "w1", 100, 200), // waits for its use
		ctSpan{trace: 1, id: 6, name: "GET /", start: 0, end: 1},
		ctSpan{trace: 1, id: 8, name: "chat bad", start: 0, end: 1, attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.output.messages": `[{"parts":[{"type":"tool_call","id":null}]}]`}},
	)
	r.logRecords(ctClaudeDecision("toolu_r", "reject", 100), ctLog{time: 5, body: "hello"})
	r.spans(ctTool(1, 2, 7, "p1", 100, 200)) // a duplicate
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
}

// ctEvent is an OTel GenAI semantic-convention event (v1.28-v1.36 per-message events): the
// OTLP EventName, the body a map.
func ctGenAIEvent(name string, ms int64, body map[string]any) ctLog {
	return ctLog{service: "py-agent", time: ms, eventName: name, body: body, trace: 5, spanID: byte(ms % 250),
		attrs: map[string]any{"gen_ai.system": "openai", "gen_ai.conversation.id": "conv-e"}}
}

func ctChoice(ms int64, calls ...string) ctLog {
	tc := []any{}
	for _, c := range calls {
		tc = append(tc, map[string]any{"id": c, "type": "function", "function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris"}`}})
	}
	return ctGenAIEvent("gen_ai.choice", ms, map[string]any{"index": int64(0), "finish_reason": "tool_calls",
		"message": map[string]any{"role": "assistant", "tool_calls": tc}})
}

func ctToolMessage(ms int64, call string) ctLog {
	return ctGenAIEvent("gen_ai.tool.message", ms, map[string]any{"id": call, "role": "tool", "content": "sunny"})
}

// TestContractS8GenAIEvents: the genai_events dialect. gen_ai.choice and
// gen_ai.assistant.message tool_calls[].id announce calls; gen_ai.tool.message id resolves
// them. The next gen_ai.choice is deliberately not a step boundary (docs/dialects/genai_events.md "Step boundaries
// and session ends": these events carry nothing that tells a nested agent's requests
// from its parent's, so the next choice would close the call of an outer agent waiting for a
// nested one); the call is closed by pairing_timeout instead.
func TestContractS8GenAIEvents(t *testing.T) {
	t.Run("gen_ai.choice tool_calls announce, gen_ai.tool.message resolves", func(t *testing.T) {
		r := newCTRig(t, nil)
		r.logRecords(ctChoice(100, "call_1", "call_2"))
		r.logRecords(ctToolMessage(900, "call_1"), ctToolMessage(901, "call_2"))
		r.shutdown()
		assert.Equal(t, int64(2), r.sum("otelcol_processor_toolpair_outcomes", map[string]string{"toolpair.outcome": "paired"}))
		for _, lr := range r.outLogs() {
			assert.Empty(t, ctStr(lr.Attributes(), "toolpair.synthetic"), "no call interrupted")
		}
		r.checkConservation()
	})
	t.Run("gen_ai.tool.message that resolves a call carries its outcome (specification section 3)", func(t *testing.T) {
		r := newCTRig(t, nil)
		r.logRecords(ctChoice(100, "call_1"), ctToolMessage(900, "call_1"))
		out := r.outLogs()
		require.Len(t, out, 2)
		assert.Equal(t, "paired", ctStr(out[1].Attributes(), "toolpair.outcome"))
		d, ok := out[1].Attributes().Get("toolpair.call.duration_ms")
		require.True(t, ok)
		assert.Equal(t, int64(800), d.Int())
	})
	t.Run("gen_ai.assistant.message tool_calls at the top level announce", func(t *testing.T) {
		r := newCTRig(t, nil)
		r.logRecords(ctGenAIEvent("gen_ai.assistant.message", 100, map[string]any{"role": "assistant", "tool_calls": []any{
			map[string]any{"id": "call_a", "type": "function", "function": map[string]any{"name": "get_weather"}},
		}}))
		r.advance(10 * time.Minute)
		assert.Equal(t, map[string][]string{"call_a": {"log:interrupted/expired+synthetic"}}, r.marks(nil))
		syn := r.outLogs()[1]
		assert.Equal(t, "conv-e", ctStr(syn.Attributes(), "gen_ai.conversation.id"), "the scope attribute that keyed the call")
		assert.Equal(t, "tool call call_a (get_weather) interrupted: expired", syn.Body().Str())
	})
	t.Run("event name from the event.name attribute and a JSON string body", func(t *testing.T) {
		r := newCTRig(t, nil)
		l := ctChoice(100, "call_s")
		b, err := json.Marshal(l.body)
		require.NoError(t, err)
		l.body, l.eventName = string(b), ""
		l.attrs["event.name"] = "gen_ai.choice"
		r.logRecords(l)
		r.shutdown()
		assert.Equal(t, map[string][]string{"call_s": {"log:interrupted/shutdown+synthetic"}}, r.marks(nil))
	})
	t.Run("the next gen_ai.choice is not a step boundary (documented)", func(t *testing.T) {
		r := newCTRig(t, nil)
		r.logRecords(ctChoice(100, "call_outer"))
		r.logRecords(ctChoice(300, "call_inner"), ctToolMessage(400, "call_inner"), ctChoice(500))
		r.advance(time.Minute)
		assert.NotContains(t, r.marks(nil), "call_outer", "not closed by the later choices")
		r.advance(9 * time.Minute)
		assert.Equal(t, []string{"log:interrupted/expired+synthetic"}, r.marks(nil)["call_outer"])
	})
}

// TestContractS8ClaudeCode: the claude_code dialect. tool_decision (tool_use_id, decision)
// announces or rejects, tool_result (duration_ms a string) and the claude_code.tool span
// resolve; the claude_code.interaction span's end is a session end. claude_code.api_request
// is deliberately not a step boundary (docs/dialects/claude_code.md: sub-agents share the session.id and their
// requests carry nothing that tells them apart, so a sub-agent's request would close the
// parent's pending Task call).
func TestContractS8ClaudeCode(t *testing.T) {
	t.Run("real capture: every tool_result paired with its decision", func(t *testing.T) {
		r := newCTRig(t, nil)
		td, ld := readClaude(t, "parallel")
		require.NoError(t, r.logs.ConsumeLogs(context.Background(), ld))
		require.NoError(t, r.traces.ConsumeTraces(context.Background(), td))
		r.shutdown()
		decided := map[string]pcommon.Timestamp{}
		for _, lr := range r.outLogs() {
			if ctStr(lr.Attributes(), "event.name") == "tool_decision" {
				decided[ctStr(lr.Attributes(), "tool_use_id")] = lr.Timestamp()
			}
		}
		require.Len(t, decided, 2)
		n := 0
		for _, lr := range r.outLogs() {
			if ctStr(lr.Attributes(), "event.name") != "tool_result" {
				continue
			}
			n++
			id := ctStr(lr.Attributes(), "tool_use_id")
			assert.Equal(t, "paired", ctStr(lr.Attributes(), "toolpair.outcome"), id)
			d, _ := lr.Attributes().Get("toolpair.call.duration_ms")
			assert.Equal(t, (int64(lr.Timestamp())-int64(decided[id]))/1e6, d.Int(), id)
			v, _ := lr.Attributes().Get("duration_ms")
			assert.Equal(t, pcommon.ValueTypeStr, v.Type(), "the source's duration_ms is left as it is")
		}
		assert.Equal(t, 2, n)
		for _, s := range r.outSpans() {
			if s.Name() == "claude_code.tool" {
				assert.Equal(t, "paired", strAttr(s, "toolpair.outcome"), "the same result in the other signal: its source's first record (section 2)")
			}
		}
		r.checkConservation()
	})
	t.Run("claude_code.api_request is not a step boundary (documented)", func(t *testing.T) {
		r := newCTRig(t, nil)
		r.logRecords(ctClaudeDecision("toolu_task", "accept", 100),
			ctClaude("api_request", 5000, "sess-1", "model", "claude", "duration_ms", "900"),
			ctClaudeDecision("toolu_sub", "accept", 6000), ctClaudeResult("toolu_sub", 6500),
			ctClaude("api_request", 7000, "sess-1", "model", "claude", "duration_ms", "900"))
		r.advance(time.Minute)
		r.logRecords(ctClaudeResult("toolu_task", 60_000))
		assert.Equal(t, map[string][]string{"toolu_task": {"log:paired"}, "toolu_sub": {"log:paired"}}, r.marks(nil))
	})
}

// TestContractS8Codex: the codex dialect. codex.tool_decision (call_id; denied/abort reject)
// announces, codex.tool_result resolves, codex.api_request is a step boundary: a call of the
// turn still unanswered at the next request is interrupted next_step, ending at that request.
func TestContractS8Codex(t *testing.T) {
	t.Run("decision and result pair; duration from the observed times", func(t *testing.T) {
		r := newCTRig(t, nil)
		r.logRecords(ctCodex("codex.api_request", 50, 9, "duration_ms", "10", "http.response.status_code", "200"),
			ctCodexDecision("call_1", "approved", 100), ctCodexResult("call_1", 420),
			ctCodex("codex.api_request", 500, 9, "duration_ms", "10", "http.response.status_code", "200"))
		r.advance(time.Minute)
		assert.Equal(t, map[string][]string{"call_1": {"log:paired"}}, r.marks(nil))
		for _, lr := range r.outLogs() {
			if v, ok := lr.Attributes().Get("toolpair.call.duration_ms"); ok {
				assert.Equal(t, int64(320), v.Int())
			}
		}
	})
	t.Run("the next codex.api_request closes an unanswered call of the turn", func(t *testing.T) {
		r := newCTRig(t, nil)
		r.logRecords(ctCodex("codex.api_request", 50, 9, "duration_ms", "10"),
			ctCodexDecision("call_1", "approved", 100), ctCodexDecision("call_2", "approved", 101), ctCodexResult("call_2", 300),
			ctCodex("codex.api_request", 500, 9, "duration_ms", "10"))
		r.advance(29 * time.Second)
		assert.Equal(t, map[string][]string{"call_2": {"log:paired"}}, r.marks(nil), "closings wait orphan_grace")
		r.advance(2 * time.Second)
		assert.Equal(t, map[string][]string{"call_1": {"log:interrupted/next_step+synthetic"}, "call_2": {"log:paired"}}, r.marks(nil))
		for _, lr := range r.outLogs() {
			if lr.EventName() == "toolpair.tool_call.interrupted" {
				assert.Equal(t, ctTS(500), lr.Timestamp())
			}
		}
	})
	t.Run("a request of another turn (trace) does not close the call", func(t *testing.T) {
		r := newCTRig(t, nil)
		r.logRecords(ctCodexDecision("call_1", "approved", 100), ctCodex("codex.api_request", 500, 8, "duration_ms", "10"))
		r.advance(time.Minute)
		assert.Empty(t, r.marks(nil))
	})
}

// TestContractS8Transcripts: the transcript dialect. Claude Code: scope sessionId plus agentId
// (a subagent's steps are not boundaries of its parent), a new message.id is a step boundary
// (one message spans several lines); pi/OpenClaw: scope log.file.path else log.file.name, the
// next assistant entry is a step boundary. Time: the record's timestamp, else the line's
// (pi/OpenClaw: message.timestamp in ms, else the entry's ISO timestamp). Bodies as strings or
// parsed maps.
func TestContractS8Transcripts(t *testing.T) {
	const f = "/home/u/.claude/projects/p/s1.jsonl"
	durations := func(r *ctRig) map[string]int64 {
		out := map[string]int64{}
		for _, lr := range r.outLogs() {
			if v, ok := lr.Attributes().Get("toolpair.call.duration_ms"); ok {
				out[ctTranscriptCallID(lr)] = v.Int()
			}
		}
		return out
	}
	t.Run("Claude Code: a result of another session does not pair", func(t *testing.T) {
		r := newCTRig(t, nil)
		r.logRecords(ctLine(f, ctClaudeUse("s1", "", "msg_1", "toolu_1", 100)), ctLine(f, ctClaudeResultLine("s2", "", "toolu_1", "ok", 200)))
		r.advance(31 * time.Second)
		assert.Equal(t, map[string][]string{"toolu_1": {"log:standalone"}}, r.marks(ctTranscriptCallID))
	})
	t.Run("Claude Code: lines of one message are one step; the next message closes its unanswered calls", func(t *testing.T) {
		r := newCTRig(t, nil)
		r.logRecords(
			ctLine(f, ctClaudeUse("s1", "", "msg_1", "toolu_1", 100)),
			ctLine(f, ctClaudeUse("s1", "", "msg_1", "toolu_2", 150)), // same message, next line
			ctLine(f, ctClaudeResultLine("s1", "", "toolu_2", "ok", 400)),
			ctLine(f, ctClaudeText("s1", "", "msg_2", 700)),
		)
		r.advance(31 * time.Second)
		got := r.marks(ctTranscriptCallID)
		assert.Equal(t, []string{"log:paired"}, got["toolu_2"])
		assert.Equal(t, []string{"log:interrupted/next_step+synthetic"}, got["toolu_1"])
		for _, lr := range r.outLogs() {
			if lr.EventName() == "toolpair.tool_call.interrupted" {
				assert.Equal(t, ctTS(700), lr.Timestamp(), "ends at the next message")
				assert.Equal(t, "s1", ctStr(lr.Attributes(), "session.id"))
			}
		}
		assert.Equal(t, map[string]int64{"toolu_2": 250}, durations(r), "times from the lines' timestamp fields")
	})
	t.Run("Claude Code: a subagent's steps are not boundaries of its parent", func(t *testing.T) {
		r := newCTRig(t, nil)
		sub := "/home/u/.claude/projects/p/s1/subagents/agent-a1.jsonl"
		r.logRecords(
			ctLine(f, ctClaudeUse("s1", "", "msg_1", "toolu_task", 100)),
			ctLine(sub, ctClaudeUse("s1", "a1", "msg_s1", "toolu_s", 200)),
			ctLine(sub, ctClaudeResultLine("s1", "a1", "toolu_s", "ok", 300)),
			ctLine(sub, ctClaudeText("s1", "a1", "msg_s2", 400)),
			ctLine(f, ctClaudeResultLine("s1", "", "toolu_task", "done", 500)),
			ctLine(f, ctClaudeText("s1", "", "msg_2", 600)),
		)
		r.advance(31 * time.Second)
		assert.Equal(t, map[string][]string{"toolu_task": {"log:paired"}, "toolu_s": {"log:paired"}}, r.marks(ctTranscriptCallID))
	})
	t.Run("Claude Code: a subagent call of the same ID is another scope", func(t *testing.T) {
		r := newCTRig(t, nil)
		r.logRecords(ctLine(f, ctClaudeUse("s1", "a1", "msg_1", "toolu_1", 100)), ctLine(f, ctClaudeResultLine("s1", "", "toolu_1", "ok", 200)))
		r.advance(31 * time.Second)
		assert.Equal(t, map[string][]string{"toolu_1": {"log:standalone"}}, r.marks(ctTranscriptCallID))
	})
	t.Run("the log record's own timestamp wins over the line's", func(t *testing.T) {
		r := newCTRig(t, nil)
		use, res := ctLine(f, ctClaudeUse("s1", "", "msg_1", "toolu_1", 100)), ctLine(f, ctClaudeResultLine("s1", "", "toolu_1", "ok", 200))
		use.time, res.time = 1000, 4000
		r.logRecords(use, res)
		assert.Equal(t, map[string]int64{"toolu_1": 3000}, durations(r))
	})
	t.Run("a parsed map body reads the same", func(t *testing.T) {
		r := newCTRig(t, nil)
		use := ctLog{service: "transcripts", observed: 999_000, body: ctClaudeUse("s1", "", "msg_1", "toolu_1", 100)}
		res := ctLog{service: "transcripts", observed: 999_000, body: ctClaudeResultLine("s1", "", "toolu_1", "ok", 350)}
		r.logRecords(use, res)
		var got []string
		for _, lr := range r.outLogs() {
			if o := ctStr(lr.Attributes(), "toolpair.outcome"); o != "" {
				got = append(got, o)
				v, _ := lr.Attributes().Get("toolpair.call.duration_ms")
				assert.Equal(t, int64(250), v.Int())
			}
		}
		assert.Equal(t, []string{"paired"}, got)
	})
	t.Run("pi/OpenClaw: the scope is log.file.path, else log.file.name", func(t *testing.T) {
		r := newCTRig(t, nil)
		a, b := ctLine("/s/a/x.jsonl", ctPiUse("e1", "call_1", 100)), ctLine("/s/b/x.jsonl", ctPiResult("e2", "call_1", 300, nil))
		r.logRecords(a, b) // same call ID, same file name, other paths
		r.advance(31 * time.Second)
		assert.Equal(t, map[string][]string{"call_1": {"log:standalone"}}, r.marks(ctTranscriptCallID))

		r2 := newCTRig(t, nil)
		a, b = ctLine("/s/a/x.jsonl", ctPiUse("e1", "call_1", 100)), ctLine("/s/b/x.jsonl", ctPiResult("e2", "call_1", 300, nil))
		delete(a.attrs, "log.file.path")
		delete(b.attrs, "log.file.path")
		r2.logRecords(a, b) // only the names: the same scope
		assert.Equal(t, map[string][]string{"call_1": {"log:paired"}}, r2.marks(ctTranscriptCallID))
		r2.shutdown()
	})
	t.Run("pi/OpenClaw: synthetic records carry the file scope", func(t *testing.T) {
		r := newCTRig(t, nil)
		l := ctLine("/s/a/x.jsonl", ctPiUse("e1", "call_1", 100))
		delete(l.attrs, "log.file.path")
		r.logRecords(l)
		r.shutdown()
		var syn []plog.LogRecord
		for _, lr := range r.outLogs() {
			if lr.EventName() == "toolpair.tool_call.interrupted" {
				syn = append(syn, lr)
			}
		}
		require.Len(t, syn, 1)
		assert.Equal(t, "x.jsonl", ctStr(syn[0].Attributes(), "log.file.name"))
	})
	t.Run("pi/OpenClaw: time from message.timestamp (ms), else the entry's ISO timestamp", func(t *testing.T) {
		r := newCTRig(t, nil)
		use := ctPiUse("e1", "call_1", 100)
		res := ctPiResult("e2", "call_1", 300, nil)
		delete(res["message"].(map[string]any), "timestamp") // the entry's ISO timestamp: 305
		r.logRecords(ctLine("/s/a.jsonl", use), ctLine("/s/a.jsonl", res))
		assert.Equal(t, map[string]int64{"call_1": 205}, durations(r))
	})
	t.Run("pi/OpenClaw: the next assistant entry closes unanswered calls", func(t *testing.T) {
		r := newCTRig(t, nil)
		next := ctPiUse("e3", "call_2", 900)
		r.logRecords(ctLine("/s/a.jsonl", ctPiUse("e1", "call_1", 100)), ctLine("/s/a.jsonl", next))
		r.advance(31 * time.Second)
		got := r.marks(ctTranscriptCallID)
		assert.Equal(t, map[string][]string{"call_1": {"log:interrupted/next_step+synthetic"}}, got)
		for _, lr := range r.outLogs() {
			if lr.EventName() == "toolpair.tool_call.interrupted" {
				assert.Equal(t, ctTS(900), lr.Timestamp())
				assert.Equal(t, "/s/a.jsonl", ctStr(lr.Attributes(), "log.file.path"))
			}
		}
	})
	t.Run("real pi and OpenClaw interrupted sessions", func(t *testing.T) {
		for _, path := range []string{"../../testdata/transcripts/pi/interrupt_sigterm.jsonl", "../../testdata/transcripts/openclaw/interrupt_sigterm.jsonl"} {
			r := newCTRig(t, nil)
			lines := readTranscriptLines(t, path)
			for _, ld := range logRecordsOf(lines, "/sessions/"+path[strings.LastIndexByte(path, '/')+1:]) {
				require.NoError(t, r.logs.ConsumeLogs(context.Background(), ld))
			}
			r.shutdown()
			var outcomes []string
			for _, v := range r.marks(ctTranscriptCallID) {
				outcomes = append(outcomes, v...)
			}
			if strings.Contains(path, "openclaw") {
				assert.Contains(t, outcomes, "log:interrupted/aborted", path)
			} else {
				assert.Contains(t, outcomes, "log:interrupted/shutdown+synthetic", path)
			}
			r.checkConservation()
		}
	})
}

// TestContractS4TranscriptModelErrors: a model error line of a transcript whose message
// matches the pattern, case-insensitively, is a provider timeout.
func TestContractS4TranscriptModelErrors(t *testing.T) {
	for _, msg := range []string{"LLM idle timeout (6s): no response from model", "Request timed out.", "REQUEST TIMED OUT", "context deadline exceeded", "rpc: DEADLINE EXCEEDED"} {
		t.Run(msg, func(t *testing.T) {
			r := newCTRig(t, nil)
			line := map[string]any{"type": "message", "id": "e9", "timestamp": ctISO(5000), "message": map[string]any{
				"role": "assistant", "timestamp": ctBase + 100, "stopReason": "error", "errorMessage": msg, "content": []any{}}}
			r.logRecords(ctLine("/oc/a.jsonl", line))
			out := r.outLogs()
			require.Len(t, out, 1)
			assert.Equal(t, "provider", ctStr(out[0].Attributes(), "toolpair.timeout.phase"))
		})
	}
}

// TestContractS3UnnamedTool: a call whose use named no tool (the specification is silent; README
// "Attributes written"): the span is named execute_tool, the log body says "unknown tool",
// gen_ai.tool.name is absent.
func TestContractS3UnnamedTool(t *testing.T) {
	r := newCTRig(t, nil)
	r.spans(ctSpan{trace: 1, id: 1, name: "chat m", start: 0, end: 100, attrs: map[string]any{
		"gen_ai.operation.name": "chat", "gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"tool_call","id":"c9"}]}]`,
	}})
	d := ctClaudeDecision("toolu_9", "accept", 100)
	delete(d.attrs, "tool_name")
	r.logRecords(d)
	r.shutdown()
	var spans, logs int
	for _, s := range r.outSpans() {
		if ctStr(s.Attributes(), "toolpair.synthetic") == "true" {
			spans++
			assert.Equal(t, "execute_tool", s.Name())
			_, ok := s.Attributes().Get("gen_ai.tool.name")
			assert.False(t, ok)
		}
	}
	for _, lr := range r.outLogs() {
		if lr.EventName() == "toolpair.tool_call.interrupted" {
			logs++
			assert.Equal(t, "tool call toolu_9 (unknown tool) interrupted: shutdown", lr.Body().Str())
			_, ok := lr.Attributes().Get("gen_ai.tool.name")
			assert.False(t, ok)
		}
	}
	assert.Equal(t, 1, spans)
	assert.Equal(t, 1, logs)
}
