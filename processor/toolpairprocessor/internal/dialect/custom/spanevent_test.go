// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package custom

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// event is a span event of a test span: its name, time and attributes.
type event struct {
	name  string
	time  uint64
	attrs map[string]any
}

// extractEvents builds a span named name (start 1000, end 5000, span ID 01..08, status
// code and message) holding events, and runs d.ExtractSpanEvents on it.
func extractEvents(t *testing.T, d *Dialect, name string, code ptrace.StatusCode, message string, events ...event) (bool, dialect.Found) {
	t.Helper()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "acme-agent")
	ss := rs.ScopeSpans().AppendEmpty()
	span := ss.Spans().AppendEmpty()
	span.SetName(name)
	span.SetSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, 8})
	span.SetStartTimestamp(1000)
	span.SetEndTimestamp(5000)
	span.Status().SetCode(code)
	span.Status().SetMessage(message)
	for _, e := range events {
		ev := span.Events().AppendEmpty()
		ev.SetName(e.name)
		ev.SetTimestamp(pcommon.Timestamp(e.time))
		require.NoError(t, ev.Attributes().FromRaw(e.attrs))
	}
	var f dialect.Found
	return d.ExtractSpanEvents(context.Background(), rs, ss, span, &f), f
}

// TestExtractSpanEvents: a spanevent dialect reads each event of a span in OTTL's span event
// context (the event's name and attributes, the span's under span.*): uses announced in a
// choice event's JSON at the event's time under the span's step, results from a tool event,
// an abort when the span's status carries a cancellation marker; a span none of whose events
// holds is not claimed, and nothing is added for it.
func TestExtractSpanEvents(t *testing.T) {
	d, err := New(Config{
		Name:         "acme_events",
		Context:      ContextSpanEvent,
		Where:        `span.name == "acme.llm" or span.name == "acme.tool"`,
		Use:          `name == "acme.choice" and attributes["finish_reason"] == "tool_use"`,
		Calls:        `ParseJSON(attributes["message"])`,
		CallsMatch:   map[string]string{"type": "tool_use"},
		Result:       `name == "acme.tool.done"`,
		StepBoundary: `name == "acme.request"`,
		CallID:       `attributes["id"]`,
		ToolName:     `span.attributes["tool"]`,
	}, componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)
	const step = "0102030405060708"
	choice := event{name: "acme.choice", time: 4000, attrs: map[string]any{
		"finish_reason": "tool_use",
		"message":       `[{"type":"text","text":"ok"},{"type":"tool_use","id":"c1","name":"ls"},{"type":"tool_use","id":"c2","name":"cat"}]`,
	}}
	tests := []struct {
		name    string
		span    string
		code    ptrace.StatusCode
		message string
		events  []event
		claimed bool
		items   []dialect.Item
	}{
		{
			name: "a choice event announcing two calls, after a request event", span: "acme.llm",
			events:  []event{{name: "acme.request", time: 1500}, {name: "acme.other", time: 2000}, choice},
			claimed: true,
			items: []dialect.Item{
				{Kind: pairing.KindBoundary, Time: 1500, Step: step},
				{Kind: pairing.KindUse, CallID: "c1", ToolName: "ls", Time: 4000, Step: step},
				{Kind: pairing.KindUse, CallID: "c2", ToolName: "cat", Time: 4000, Step: step},
			},
		},
		{
			name: "an event without a time: the span's end", span: "acme.llm",
			events:  []event{{name: "acme.request"}},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindBoundary, Time: 5000, Step: step}},
		},
		{
			name: "a tool event", span: "acme.tool",
			events:  []event{{name: "acme.tool.done", time: 4500, attrs: map[string]any{"id": "c1"}}},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindResult, CallID: "c1", Time: 4500}},
		},
		{
			name: "a tool event of a span ended by an abort", span: "acme.tool", code: ptrace.StatusCodeError, message: "Command aborted: sleep 20",
			events:  []event{{name: "acme.tool.done", time: 4500, attrs: map[string]any{"id": "c1"}}},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindAbort, CallID: "c1", Time: 4500}},
		},
		{name: "no event holds", span: "acme.llm", events: []event{{name: "acme.other", time: 2000}}},
		{name: "a span the where condition leaves out", span: "http.request", events: []event{choice}},
		{name: "no events", span: "acme.llm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			claimed, f := extractEvents(t, d, tt.span, tt.code, tt.message, tt.events...)
			assert.Equal(t, tt.claimed, claimed)
			assert.Equal(t, tt.items, nilIfEmpty(f.Items))
			assert.Empty(t, f.Malformed)
		})
	}
}

// TestModelCall: model_call declares a record a call to the model provider (f.ModelCall, and
// f.ModelScope from the scope expression), evaluated besides the other conditions; it alone
// claims the record.
func TestModelCall(t *testing.T) {
	cfg := acmeLogs()
	cfg.ModelCall = `event_name == "acme.llm.request" or event_name == "acme.llm.response"`
	d, err := New(cfg, componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)

	claimed, f := extractLog(t, d, "acme.llm.response", map[string]any{"acme.session": "s1"})
	assert.True(t, claimed, "model_call alone claims the record")
	assert.True(t, f.ModelCall)
	assert.Equal(t, "s1", f.ModelScope)
	assert.Empty(t, f.Items)

	claimed, f = extractLog(t, d, "acme.llm.request", map[string]any{"acme.session": "s1"})
	assert.True(t, claimed)
	assert.True(t, f.ModelCall, "a boundary and a model call at once")
	require.Len(t, f.Items, 1)
	assert.Equal(t, pairing.KindBoundary, f.Items[0].Kind)

	claimed, f = extractLog(t, d, "acme.tool.end", map[string]any{"acme.call_id": "c1", "acme.session": "s1"})
	assert.True(t, claimed)
	assert.False(t, f.ModelCall)

	f.ModelCall, f.ModelScope = true, "x"
	f.Reset()
	assert.False(t, f.ModelCall)
	assert.Empty(t, f.ModelScope)

	only := Config{Name: "m", Context: ContextSpan, ModelCall: `name == "acme.llm"`}
	require.NoError(t, Validate(only), "model_call is a role of its own")
}

// TestSeveralCallsPerResult: a call_id expression yielding a list names one call per entry,
// on results (a slice attribute, ParseJSON of a JSON list, Keys(SliceToMap(...)) of a list of
// objects) and on uses alike; entries that are no call ID are skipped and counted, an empty
// list is a missing call ID.
func TestSeveralCallsPerResult(t *testing.T) {
	result := func(ids ...string) []dialect.Item {
		var items []dialect.Item
		for _, id := range ids {
			items = append(items, dialect.Item{Kind: pairing.KindResult, CallID: id, Time: recordTime, Conversation: "s1", ConversationAttr: DefaultScopeAttribute})
		}
		return items
	}
	tests := []struct {
		name, callID string
		attrs        map[string]any
		items        []dialect.Item
		malformed    []string
	}{
		{name: "a slice attribute", callID: `attributes["ids"]`, attrs: map[string]any{"ids": []any{"c1", "c2"}}, items: result("c1", "c2")},
		{name: "ParseJSON of a JSON list", callID: `ParseJSON(attributes["ids"])`, attrs: map[string]any{"ids": `["c1","c2","c3"]`}, items: result("c1", "c2", "c3")},
		{
			name: "Keys of SliceToMap of a list of objects", callID: `Keys(SliceToMap(ParseJSON(attributes["results"]), ["id"]))`,
			attrs: map[string]any{"results": `[{"id":"c1","ok":true},{"id":"c2","ok":false}]`}, items: result("c1", "c2"),
		},
		{name: "one string", callID: `attributes["ids"]`, attrs: map[string]any{"ids": "c1"}, items: result("c1")},
		{
			name: "entries that are no call ID", callID: `attributes["ids"]`, attrs: map[string]any{"ids": []any{"c1", "", int64(7), "c2"}},
			items: result("c1", "c2"), malformed: []string{dialect.ReasonMissingCallID, dialect.ReasonInvalidCallID},
		},
		{name: "an empty list", callID: `attributes["ids"]`, attrs: map[string]any{"ids": []any{}}, malformed: []string{dialect.ReasonMissingCallID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := acmeLogs()
			cfg.CallID = tt.callID
			d, err := New(cfg, componenttest.NewNopTelemetrySettings())
			require.NoError(t, err)
			attrs := map[string]any{"acme.session": "s1"}
			for k, v := range tt.attrs {
				attrs[k] = v
			}
			claimed, f := extractLog(t, d, "acme.tool.end", attrs)
			assert.True(t, claimed)
			assert.Equal(t, tt.items, nilIfEmpty(f.Items))
			assert.Equal(t, tt.malformed, nilIfEmpty(f.Malformed))
		})
	}
}
