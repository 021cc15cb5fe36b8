// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package custom

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// acmeLogs is a log dialect in the shape of the made-up agent of examples/custom-dialect.yaml
// (shorter attribute names).
func acmeLogs() Config {
	return Config{
		Name:         "acme_logs",
		Context:      ContextLog,
		Use:          `event_name == "acme.tool.start"`,
		Result:       `event_name == "acme.tool.end"`,
		Abort:        `event_name == "acme.tool.end" and attributes["acme.status"] == "cancelled"`,
		Reject:       `event_name == "acme.tool.denied"`,
		StepBoundary: `event_name == "acme.llm.request"`,
		SessionEnd:   `log.event_name == "acme.session.end"`,
		CallID:       `attributes["acme.call_id"]`,
		ToolName:     `attributes["acme.tool"]`,
		Conversation: `attributes["acme.session"]`,
	}
}

const recordTime = 1_700_000_000_000_000_000

func newLog(t *testing.T, event string, attrs map[string]any) (plog.ResourceLogs, plog.ScopeLogs, plog.LogRecord) {
	t.Helper()
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "acme-agent")
	sl := rl.ScopeLogs().AppendEmpty()
	lr := sl.LogRecords().AppendEmpty()
	lr.SetEventName(event)
	lr.SetTimestamp(recordTime)
	require.NoError(t, lr.Attributes().FromRaw(attrs))
	return rl, sl, lr
}

func extractLog(t *testing.T, d *Dialect, event string, attrs map[string]any) (bool, dialect.Found) {
	t.Helper()
	tc := NewLogContext(newLog(t, event, attrs))
	defer tc.Close()
	var f dialect.Found
	return d.ExtractLog(context.Background(), tc, &f), f
}

func TestExtractLog(t *testing.T) {
	d, err := New(acmeLogs(), componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)
	item := func(k pairing.Kind, id, tool, step string) dialect.Item {
		return dialect.Item{Kind: k, CallID: id, ToolName: tool, Time: recordTime, Conversation: "s1", ConversationAttr: DefaultScopeAttribute, Step: step}
	}
	tests := []struct {
		name      string
		event     string
		attrs     map[string]any
		claimed   bool
		items     []dialect.Item
		malformed []string
	}{
		{
			name: "use", event: "acme.tool.start",
			attrs:   map[string]any{"acme.call_id": "c1", "acme.tool": "grep", "acme.session": "s1"},
			claimed: true, items: []dialect.Item{item(pairing.KindUse, "c1", "grep", stepUse)},
		},
		{
			name: "result", event: "acme.tool.end",
			attrs:   map[string]any{"acme.call_id": "c1", "acme.tool": "grep", "acme.session": "s1", "acme.status": "ok"},
			claimed: true, items: []dialect.Item{item(pairing.KindResult, "c1", "grep", "")},
		},
		{
			name: "abort before result", event: "acme.tool.end",
			attrs:   map[string]any{"acme.call_id": "c1", "acme.session": "s1", "acme.status": "cancelled"},
			claimed: true, items: []dialect.Item{item(pairing.KindAbort, "c1", "", "")},
		},
		{
			name: "reject", event: "acme.tool.denied",
			attrs:   map[string]any{"acme.call_id": "c2", "acme.session": "s1"},
			claimed: true, items: []dialect.Item{item(pairing.KindReject, "c2", "", "")},
		},
		{
			name: "step boundary", event: "acme.llm.request",
			attrs:   map[string]any{"acme.session": "s1"},
			claimed: true, items: []dialect.Item{item(pairing.KindBoundary, "", "", stepBoundary)},
		},
		{
			name: "session end, context-qualified path", event: "acme.session.end",
			attrs:   map[string]any{"acme.session": "s1"},
			claimed: true, items: []dialect.Item{item(pairing.KindSessionEnd, "", "", "")},
		},
		{
			name: "no scope: the processor's rules apply", event: "acme.tool.start",
			attrs:   map[string]any{"acme.call_id": "c3"},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindUse, CallID: "c3", Time: recordTime, Step: stepUse}},
		},
		{
			name: "missing call ID", event: "acme.tool.end",
			attrs:   map[string]any{"acme.session": "s1"},
			claimed: true, malformed: []string{dialect.ReasonMissingCallID},
		},
		{
			name: "empty call ID", event: "acme.tool.end",
			attrs:   map[string]any{"acme.call_id": "", "acme.session": "s1"},
			claimed: true, malformed: []string{dialect.ReasonMissingCallID},
		},
		{
			name: "numeric call ID", event: "acme.tool.end",
			attrs:   map[string]any{"acme.call_id": 7, "acme.session": "s1"},
			claimed: true, malformed: []string{dialect.ReasonInvalidCallID},
		},
		{
			name: "tool name of a wrong type: kept without a name", event: "acme.tool.start",
			attrs:   map[string]any{"acme.call_id": "c4", "acme.tool": []any{"x"}, "acme.session": "s1"},
			claimed: true, items: []dialect.Item{item(pairing.KindUse, "c4", "", stepUse)},
			malformed: []string{dialect.ReasonInvalidType},
		},
		{
			name: "scope of a wrong type: the processor's rules apply", event: "acme.tool.start",
			attrs:   map[string]any{"acme.call_id": "c5", "acme.session": 12},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindUse, CallID: "c5", Time: recordTime, Step: stepUse}},
			malformed: []string{dialect.ReasonInvalidType},
		},
		{name: "another event", event: "acme.heartbeat", attrs: map[string]any{"acme.call_id": "c1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			claimed, f := extractLog(t, d, tt.event, tt.attrs)
			assert.Equal(t, tt.claimed, claimed)
			assert.Equal(t, tt.items, nilIfEmpty(f.Items))
			assert.Equal(t, tt.malformed, nilIfEmpty(f.Malformed))
		})
	}
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// TestExtractLogCalls: uses announced in a JSON body or attribute, with paths to the list and
// into each entry.
func TestExtractLogCalls(t *testing.T) {
	tests := []struct {
		name      string
		cfg       func(*Config)
		attrs     map[string]any
		body      func(pcommon.Value)
		items     []dialect.Item
		malformed []string
	}{
		{
			name: "JSON string attribute, OpenAI shape",
			cfg: func(c *Config) {
				c.Calls, c.CallsPath, c.ToolNamePath = `attributes["acme.tool_calls"]`, "", "function.name"
			},
			attrs: map[string]any{"acme.tool_calls": `[{"id":"a","function":{"name":"ls"}},{"id":"b","function":{"name":"cat"}}]`},
			items: []dialect.Item{use("a", "ls"), use("b", "cat")},
		},
		{
			name: "map body, list under a path with an index",
			cfg: func(c *Config) {
				c.Calls, c.CallsPath, c.CallIDPath = `body`, "choices.0.calls", "call.id"
			},
			body: func(v pcommon.Value) {
				_ = v.SetEmptyMap().FromRaw(map[string]any{"choices": []any{map[string]any{"calls": []any{
					map[string]any{"call": map[string]any{"id": "x"}, "name": "edit"},
				}}}})
			},
			items: []dialect.Item{use("x", "edit")},
		},
		{
			name:  "structured list attribute",
			cfg:   func(c *Config) { c.Calls = `attributes["acme.tool_calls"]` },
			attrs: map[string]any{"acme.tool_calls": []any{map[string]any{"id": "a", "name": "ls"}}},
			items: []dialect.Item{use("a", "ls")},
		},
		{
			name:  "ParseJSON in the expression",
			cfg:   func(c *Config) { c.Calls, c.CallsPath = `ParseJSON(attributes["acme.payload"])`, "calls" },
			attrs: map[string]any{"acme.payload": `{"calls":[{"id":"p","name":"run"}]}`},
			items: []dialect.Item{use("p", "run")},
		},
		{
			name:      "ParseJSON failing at run time",
			cfg:       func(c *Config) { c.Calls, c.CallsPath = `ParseJSON(attributes["acme.payload"])`, "calls" },
			attrs:     map[string]any{"acme.payload": `{"calls":[`},
			malformed: []string{ReasonExpressionError},
		},
		{
			name:      "invalid JSON",
			cfg:       func(c *Config) { c.Calls = `attributes["acme.tool_calls"]` },
			attrs:     map[string]any{"acme.tool_calls": `[{"id":`},
			malformed: []string{dialect.ReasonInvalidJSON},
		},
		{
			name:      "a list path leading to an object",
			cfg:       func(c *Config) { c.Calls, c.CallsPath = `attributes["acme.tool_calls"]`, "calls" },
			attrs:     map[string]any{"acme.tool_calls": `{"calls":{"id":"a"}}`},
			malformed: []string{dialect.ReasonInvalidType},
		},
		{
			name:      "a value that is not a document",
			cfg:       func(c *Config) { c.Calls = `attributes["acme.n"]` },
			attrs:     map[string]any{"acme.n": 3},
			malformed: []string{dialect.ReasonInvalidType},
		},
		{
			name:      "entries with a null, a missing, a numeric ID",
			cfg:       func(c *Config) { c.Calls = `attributes["acme.tool_calls"]` },
			attrs:     map[string]any{"acme.tool_calls": `[{"id":null},{"name":"x"},{"id":5},{"id":"ok"}]`},
			items:     []dialect.Item{use("ok", "")},
			malformed: []string{dialect.ReasonNullCallID, dialect.ReasonMissingCallID, dialect.ReasonInvalidCallID},
		},
		{
			name: "no calls attribute: a use record announcing nothing",
			cfg:  func(c *Config) { c.Calls = `attributes["acme.tool_calls"]` },
		},
		{
			name:  "repeated key in the JSON: the last wins",
			cfg:   func(c *Config) { c.Calls = `attributes["acme.tool_calls"]` },
			attrs: map[string]any{"acme.tool_calls": `[{"id":"first","id":"last"}]`},
			items: []dialect.Item{use("last", "")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Name: "acme", Context: ContextLog, Use: `event_name == "acme.llm.response"`}
			tt.cfg(&cfg)
			d, err := New(cfg, componenttest.NewNopTelemetrySettings())
			require.NoError(t, err)
			rl, sl, lr := newLog(t, "acme.llm.response", tt.attrs)
			if tt.body != nil {
				tt.body(lr.Body())
			}
			tc := NewLogContext(rl, sl, lr)
			defer tc.Close()
			var f dialect.Found
			assert.True(t, d.ExtractLog(context.Background(), tc, &f))
			assert.Equal(t, tt.items, nilIfEmpty(f.Items))
			assert.Equal(t, tt.malformed, nilIfEmpty(f.Malformed))
		})
	}
}

func use(id, tool string) dialect.Item {
	return dialect.Item{Kind: pairing.KindUse, CallID: id, ToolName: tool, Time: recordTime, Step: stepUse}
}

// TestExtractSpan: the span form. A model request span is a step boundary at its start and
// announces calls at its end, under its own step; a tool span resolves a call at its end.
func TestExtractSpan(t *testing.T) {
	d, err := New(Config{
		Name:         "acme_spans",
		Context:      ContextSpan,
		Use:          `name == "acme.llm" and attributes["acme.tool_calls"] != nil`,
		StepBoundary: `span.name == "acme.llm"`,
		Calls:        `attributes["acme.tool_calls"]`,
		Result:       `name == "acme.tool"`,
		SessionEnd:   `name == "acme.turn"`,
		CallID:       `attributes["acme.call_id"]`,
		ToolName:     `attributes["acme.tool"]`,
		Conversation: `resource.attributes["acme.workspace"]`,
	}, componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)
	const start, end = 1000, 5000
	sid := pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, 8}
	step := "0102030405060708"
	tests := []struct {
		name    string
		span    string
		attrs   map[string]any
		claimed bool
		items   []dialect.Item
	}{
		{
			name: "model request with calls", span: "acme.llm",
			attrs:   map[string]any{"acme.tool_calls": `[{"id":"a","name":"ls"}]`},
			claimed: true,
			items: []dialect.Item{
				{Kind: pairing.KindBoundary, Time: start, Conversation: "w1", ConversationAttr: DefaultScopeAttribute, Step: step},
				{Kind: pairing.KindUse, CallID: "a", ToolName: "ls", Time: end, Conversation: "w1", ConversationAttr: DefaultScopeAttribute, Step: step},
			},
		},
		{
			name: "model request without calls", span: "acme.llm", claimed: true,
			items: []dialect.Item{{Kind: pairing.KindBoundary, Time: start, Conversation: "w1", ConversationAttr: DefaultScopeAttribute, Step: step}},
		},
		{
			name: "tool span", span: "acme.tool", attrs: map[string]any{"acme.call_id": "a", "acme.tool": "ls"}, claimed: true,
			items: []dialect.Item{{Kind: pairing.KindResult, CallID: "a", ToolName: "ls", Time: end, Conversation: "w1", ConversationAttr: DefaultScopeAttribute}},
		},
		{
			name: "turn span", span: "acme.turn", claimed: true,
			items: []dialect.Item{{Kind: pairing.KindSessionEnd, Time: end, Conversation: "w1", ConversationAttr: DefaultScopeAttribute}},
		},
		{name: "other span", span: "http.request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			td := ptrace.NewTraces()
			rs := td.ResourceSpans().AppendEmpty()
			rs.Resource().Attributes().PutStr("acme.workspace", "w1")
			ss := rs.ScopeSpans().AppendEmpty()
			span := ss.Spans().AppendEmpty()
			span.SetName(tt.span)
			span.SetSpanID(sid)
			span.SetStartTimestamp(start)
			span.SetEndTimestamp(end)
			require.NoError(t, span.Attributes().FromRaw(tt.attrs))
			tc := NewSpanContext(rs, ss, span)
			defer tc.Close()
			var f dialect.Found
			assert.Equal(t, tt.claimed, d.ExtractSpan(context.Background(), tc, &f))
			assert.Equal(t, tt.items, nilIfEmpty(f.Items))
			assert.Empty(t, f.Malformed)
		})
	}
}

// TestTimeExpression: the time expression's accepted types, and the default time kept when
// it yields nothing or a wrong type.
func TestTimeExpression(t *testing.T) {
	iso := "2026-11-25T10:00:00.5Z"
	isoNanos := time.Date(2026, 11, 25, 10, 0, 0, 500_000_000, time.UTC).UnixNano()
	tests := []struct {
		name      string
		expr      string
		attrs     map[string]any
		want      int64
		malformed []string
	}{
		{name: "Unix nanoseconds", expr: `attributes["ts"]`, attrs: map[string]any{"ts": int64(42)}, want: 42},
		{name: "RFC 3339 string", expr: `attributes["ts"]`, attrs: map[string]any{"ts": iso}, want: isoNanos},
		{name: "Time converter", expr: `Time(attributes["ts"], "%Y-%m-%dT%H:%M:%S.%fZ")`, attrs: map[string]any{"ts": iso}, want: isoNanos},
		{name: "milliseconds scaled in OTTL", expr: `attributes["ms"] * 1000000`, attrs: map[string]any{"ms": int64(7)}, want: 7_000_000},
		{name: "absent: the record time", expr: `attributes["ts"]`, want: recordTime},
		{name: "not a time: the record time", expr: `attributes["ts"]`, attrs: map[string]any{"ts": "yesterday"}, want: recordTime, malformed: []string{dialect.ReasonInvalidType}},
		{name: "converter error: the record time", expr: `Time(attributes["ts"], "%Y")`, attrs: map[string]any{"ts": "x"}, want: recordTime, malformed: []string{ReasonExpressionError}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := acmeLogs()
			cfg.Time = tt.expr
			d, err := New(cfg, componenttest.NewNopTelemetrySettings())
			require.NoError(t, err)
			attrs := map[string]any{"acme.call_id": "c"}
			for k, v := range tt.attrs {
				attrs[k] = v
			}
			claimed, f := extractLog(t, d, "acme.tool.end", attrs)
			require.True(t, claimed)
			require.Len(t, f.Items, 1)
			assert.Equal(t, tt.want, f.Items[0].Time)
			assert.Equal(t, tt.malformed, nilIfEmpty(f.Malformed))
		})
	}
}

// TestConditionErrorClaims: a condition that fails at run time is counted and claims the
// record (it is the dialect's, not unrecognised); the other conditions still decide.
func TestConditionErrorClaims(t *testing.T) {
	cfg := acmeLogs()
	cfg.Reject = `ParseJSON(attributes["acme.decision"])["verdict"] == "deny"`
	d, err := New(cfg, componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)

	claimed, f := extractLog(t, d, "acme.other", map[string]any{"acme.decision": "{not json", "acme.call_id": "c"})
	assert.True(t, claimed)
	assert.Empty(t, f.Items)
	assert.Equal(t, []string{ReasonExpressionError}, f.Malformed)

	claimed, f = extractLog(t, d, "acme.tool.end", map[string]any{"acme.decision": "{not json", "acme.call_id": "c"})
	assert.True(t, claimed)
	assert.Equal(t, []dialect.Item{{Kind: pairing.KindResult, CallID: "c", Time: recordTime}}, f.Items)
	assert.Equal(t, []string{ReasonExpressionError}, f.Malformed)

	claimed, f = extractLog(t, d, "acme.other", map[string]any{"acme.decision": `{"verdict":"deny"}`, "acme.call_id": "c"})
	assert.True(t, claimed)
	assert.Equal(t, []dialect.Item{{Kind: pairing.KindReject, CallID: "c", Time: recordTime}}, f.Items)
	assert.Empty(t, f.Malformed)
}

func TestNewErrorsNameTheKey(t *testing.T) {
	tests := []struct {
		name string
		cfg  func(*Config)
		want []string
	}{
		{name: "condition that does not parse", cfg: func(c *Config) { c.Use = `event_name ==` }, want: []string{"use: "}},
		{name: "unknown function", cfg: func(c *Config) { c.Result = `Nope(event_name)` }, want: []string{"result: ", "Nope"}},
		{name: "value that does not parse", cfg: func(c *Config) { c.CallID = `attributes[` }, want: []string{"call_id: "}},
		{name: "path of another context", cfg: func(c *Config) { c.Conversation = `span.name` }, want: []string{"scope: "}},
		{name: "bad context", cfg: func(c *Config) { c.Context = "metric" }, want: []string{`context: must be "span", "spanevent" or "log", got "metric"`}},
		{name: "no role", cfg: func(c *Config) { *c = Config{Name: "x", Context: ContextLog} }, want: []string{"use: at least one of use"}},
		{name: "no call ID", cfg: func(c *Config) { c.CallID = "" }, want: []string{"call_id: must be set"}},
		{name: "calls without use", cfg: func(c *Config) { c.Use, c.Calls = "", `body` }, want: []string{"calls: is read on use records"}},
		{name: "empty path segment", cfg: func(c *Config) { c.Calls, c.CallsPath = `body`, "a..b" }, want: []string{"calls_path: "}},
		{name: "two errors at once", cfg: func(c *Config) { c.Use, c.Result = `(`, `)` }, want: []string{"use: ", "result: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := acmeLogs()
			tt.cfg(&cfg)
			err := Validate(cfg)
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
	require.NoError(t, Validate(acmeLogs()))
}
