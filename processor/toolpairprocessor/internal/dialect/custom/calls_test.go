// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package custom

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// copilotOutput is a gen_ai.output.messages value in the shape GitHub Copilot CLI writes on
// its chat spans (corpus agents/copilot): a list of messages, each with a list of parts, of
// which only the tool_call parts carry an ID.
const copilotOutput = `[
	{"role":"assistant","parts":[
		{"type":"text","content":"I'll run the requested command."},
		{"type":"tool_call","id":"call_1","name":"bash","arguments":{"command":"echo hello"}}]},
	{"role":"assistant","parts":[
		{"type":"reasoning","content":"and read the notes"},
		{"type":"tool_call","id":"call_2","name":"view"}]}]`

// TestCallsPathAndMatch: a calls_path with wildcard segments reads the lists of every entry
// it passes through, and calls_match passes over the entries that do not meet it (no call,
// nothing malformed), where the paths of before still read as they did.
func TestCallsPathAndMatch(t *testing.T) {
	typeToolCall := map[string]string{"type": "tool_call"}
	tests := []struct {
		name      string
		path      string
		match     map[string]string
		value     any
		items     []dialect.Item
		malformed []string
	}{
		{
			name: "every message's parts, tool_call parts only", path: "*.parts", match: typeToolCall,
			value: copilotOutput,
			items: []dialect.Item{use("call_1", "bash"), use("call_2", "view")},
		},
		{
			name: "every message's parts, unfiltered: text and reasoning parts lack an ID", path: "*.parts",
			value:     copilotOutput,
			items:     []dialect.Item{use("call_1", "bash"), use("call_2", "view")},
			malformed: []string{dialect.ReasonMissingCallID, dialect.ReasonMissingCallID},
		},
		{
			name: "an index still reads one message", path: "1.parts", match: typeToolCall,
			value: copilotOutput,
			items: []dialect.Item{use("call_2", "view")},
		},
		{
			name: "structured list attribute", path: "*.parts", match: typeToolCall,
			value: []any{
				map[string]any{"parts": []any{map[string]any{"type": "text"}, map[string]any{"type": "tool_call", "id": "s1", "name": "ls"}}},
			},
			items: []dialect.Item{use("s1", "ls")},
		},
		{
			name: "entries passed over whatever their ID: none, null, a number", path: "*.parts", match: typeToolCall,
			value:     `[{"parts":[{"type":"text","id":null},{"type":"text","id":5},{"content":"no type"},{"type":7,"id":"n"},{"type":"tool_call","id":null}]}]`,
			malformed: []string{dialect.ReasonNullCallID},
		},
		{
			name: "a message without parts, one with parts of a wrong type, one with null parts", path: "*.parts", match: typeToolCall,
			value:     `[{"role":"user"},{"parts":"text"},{"parts":null},{"parts":[{"type":"tool_call","id":"ok"}]}]`,
			items:     []dialect.Item{use("ok", "")},
			malformed: []string{dialect.ReasonInvalidType},
		},
		{
			name: "a wildcard on an object reaches nothing", path: "*.parts", match: typeToolCall,
			value: `{"parts":[{"type":"tool_call","id":"x"}]}`,
		},
		{
			name: "a wildcard in the middle: every choice's tool calls", path: "choices.*.message.tool_calls",
			match: map[string]string{"type": "function"},
			value: `{"choices":[{"message":{"tool_calls":[{"type":"function","id":"a","name":"ls"}]}},{"message":{}},{"message":{"tool_calls":[{"type":"custom","id":"b"},{"type":"function","id":"c"}]}}]}`,
			items: []dialect.Item{use("a", "ls"), use("c", "")},
		},
		{
			name: "a trailing wildcard: a list of lists", path: "*",
			value: `[[{"id":"a"}],[],[{"id":"b"},{"id":"c"}]]`,
			items: []dialect.Item{use("a", ""), use("b", ""), use("c", "")},
		},
		{
			name: "two conditions, a nested path: both must hold", path: "*.parts",
			match: map[string]string{"type": "tool_call", "meta.origin": "model"},
			value: `[{"parts":[{"type":"tool_call","id":"a","meta":{"origin":"model"}},{"type":"tool_call","id":"b","meta":{"origin":"user"}},{"type":"tool_call","id":"c"}]}]`,
			items: []dialect.Item{use("a", "")},
		},
		{
			name: "a match on a list index", path: "", match: map[string]string{"tags.0": "call"},
			value: `[{"tags":["call"],"id":"a"},{"tags":["note"],"id":"b"},{"tags":[],"id":"c"}]`,
			items: []dialect.Item{use("a", "")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{
				Name: "copilot", Context: ContextLog, Use: `event_name == "chat"`,
				Calls: `attributes["gen_ai.output.messages"]`, CallsPath: tt.path, CallsMatch: tt.match,
			}
			d, err := New(cfg, componenttest.NewNopTelemetrySettings())
			require.NoError(t, err)
			claimed, f := extractLog(t, d, "chat", map[string]any{"gen_ai.output.messages": tt.value})
			assert.True(t, claimed)
			assert.Equal(t, tt.items, nilIfEmpty(f.Items))
			assert.Equal(t, tt.malformed, nilIfEmpty(f.Malformed))
		})
	}
}

// TestWhere: the where condition selects the records the dialect reads; its failure claims
// the record, counted, without evaluating the other conditions.
func TestWhere(t *testing.T) {
	cfg := acmeLogs()
	cfg.Precedence = PrecedenceBeforeBuiltin
	cfg.Where = `resource.attributes["service.name"] == "acme-agent" and ParseJSON(attributes["acme.meta"])["v"] != 0`
	d, err := New(cfg, componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)
	assert.True(t, d.BeforeBuiltin())

	claimed, f := extractLog(t, d, "acme.tool.end", map[string]any{"acme.call_id": "c1", "acme.meta": `{"v":1}`})
	assert.True(t, claimed, "selected, and a result")
	assert.Equal(t, []dialect.Item{{Kind: pairing.KindResult, CallID: "c1", Time: recordTime}}, f.Items)

	claimed, f = extractLog(t, d, "acme.heartbeat", map[string]any{"acme.call_id": "c1", "acme.meta": `{"v":1}`})
	assert.False(t, claimed, "selected, but no condition holds: left to the other dialects")
	assert.Empty(t, f.Malformed)

	claimed, f = extractLog(t, d, "acme.tool.end", map[string]any{"acme.call_id": "c1", "acme.meta": `{"v":0}`})
	assert.False(t, claimed, "not selected, though result holds")
	assert.Empty(t, f.Items)

	claimed, f = extractLog(t, d, "acme.tool.end", map[string]any{"acme.call_id": "c1", "acme.meta": `{not json`})
	assert.True(t, claimed, "where failing claims the record")
	assert.Empty(t, f.Items, "and nothing else is read")
	assert.Equal(t, []string{ReasonExpressionError}, f.Malformed)

	other, err := New(acmeLogs(), componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)
	assert.False(t, other.BeforeBuiltin(), "after the built-ins by default")
}

// TestNewKeysErrors: the keys of precedence, where and calls_match are refused by name.
func TestNewKeysErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  func(*Config)
		want string // "" for a valid declaration
	}{
		{name: "before the built-ins, with where", cfg: func(c *Config) { c.Precedence, c.Where = PrecedenceBeforeBuiltin, `attributes["x"] == "y"` }},
		{name: "after the built-ins, spelled out, with where", cfg: func(c *Config) { c.Precedence, c.Where = PrecedenceAfterBuiltin, `attributes["x"] == "y"` }},
		{name: "unknown precedence", cfg: func(c *Config) { c.Precedence, c.Where = "first", "true" }, want: `precedence: must be "after_builtin" or "before_builtin", got "first"`},
		{name: "before the built-ins without where", cfg: func(c *Config) { c.Precedence = PrecedenceBeforeBuiltin }, want: `where: must be set when precedence is "before_builtin"`},
		{name: "where that does not parse", cfg: func(c *Config) { c.Where = `attributes["x"] ==` }, want: "where: "},
		{name: "where of another context", cfg: func(c *Config) { c.Where = `span.name == "x"` }, want: "where: "},
		{name: "calls_match without calls", cfg: func(c *Config) { c.CallsMatch = map[string]string{"type": "tool_call"} }, want: "calls_match: filters the entries of calls: calls must be set"},
		{name: "calls_match with an empty value", cfg: func(c *Config) { c.Calls, c.CallsMatch = "body", map[string]string{"type": ""} }, want: `calls_match: the value of "type" must not be empty`},
		{name: "calls_match with an empty segment", cfg: func(c *Config) { c.Calls, c.CallsMatch = "body", map[string]string{"a..b": "x"} }, want: `calls_match: "a..b" has an empty segment`},
		{name: "calls_match with a wildcard", cfg: func(c *Config) { c.Calls, c.CallsMatch = "body", map[string]string{"*.type": "x"} }, want: `calls_match: "*.type": the wildcard "*" is allowed only in calls_path`},
		{name: "a wildcard in call_id_path", cfg: func(c *Config) { c.Calls, c.CallIDPath = "body", "*.id" }, want: "call_id_path: "},
		{name: "a wildcard in tool_name_path", cfg: func(c *Config) { c.Calls, c.ToolNamePath = "body", "fn.*" }, want: "tool_name_path: "},
		{name: "wildcards in calls_path, with calls_match", cfg: func(c *Config) {
			c.Calls, c.CallsPath, c.CallsMatch = "body", "*.parts.*", map[string]string{"type": "tool_call"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := acmeLogs()
			tt.cfg(&cfg)
			err := Validate(cfg)
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			var ke *KeyError
			assert.ErrorAs(t, err, &ke)
		})
	}
}
