// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/plogtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/batch"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/callkey"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/custom"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadatatest"
)

// exampleConfig reads the toolpair configuration of an example file under examples/ the way
// the collector does, over the factory's default.
func exampleConfig(t testing.TB, name string) *Config {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", name))
	require.NoError(t, err)
	retrieved, err := confmap.NewRetrievedFromYAML(data)
	require.NoError(t, err)
	conf, err := retrieved.AsConf()
	require.NoError(t, err)
	sub, err := conf.Sub("processors::toolpair")
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, sub.Unmarshal(cfg))
	require.NoError(t, cfg.Validate())
	return cfg
}

// TestCustomDialectExample runs the sample telemetry of the made-up agent of
// examples/custom-dialect.yaml through a component configured by that file: every call ends
// in the outcome its records say, the calls cut off by the next model request get their
// synthetic records, the malformed record is counted and passes untouched, and no record of
// the agent is left unrecognised.
func TestCustomDialectExample(t *testing.T) {
	cfg := exampleConfig(t, "custom-dialect.yaml")
	b := newRig(t, withConfig(func(c *Config) { *c = *cfg }))

	ld, err := golden.ReadLogs(filepath.Join("..", "..", "testdata", "custom", "logs.json"))
	require.NoError(t, err)
	td, err := golden.ReadTraces(filepath.Join("..", "..", "testdata", "custom", "traces.json"))
	require.NoError(t, err)
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), ld))
	require.NoError(t, b.traces.ConsumeTraces(context.Background(), td))
	b.advance(cfg.OrphanGrace + time.Second) // the boundaries' close delay
	b.shutdown()

	base := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }

	logOutcomes := map[string]string{}
	var synthLogs []plog.LogRecord
	records := 0
	for _, lr := range allLogs(b.lsink) {
		records++
		if logAttr(lr, "toolpair.synthetic") == "true" {
			synthLogs = append(synthLogs, lr)
			continue
		}
		if o := logAttr(lr, "toolpair.outcome"); o != "" {
			key := logAttr(lr, "acme.call_id") + " " + lr.EventName()
			logOutcomes[key] = strings.Join(strings.Fields(o+" "+logAttr(lr, "toolpair.interrupt.reason")+" "+logAttr(lr, "toolpair.call.duration_ms")), " ")
		}
	}
	assert.Equal(t, 13+1, records, "every record of the agent leaves, plus one synthetic record")
	assert.Equal(t, map[string]string{
		"tc_01 acme.tool.end": "paired 700",
		"tc_02 acme.tool.end": "interrupted aborted",
		"tc_05 acme.tool.end": "paired 600",
	}, logOutcomes)
	require.Len(t, synthLogs, 1)
	s := synthLogs[0]
	assert.Equal(t, "toolpair.tool_call.interrupted", s.EventName())
	assert.Equal(t, "tool call tc_04 (web_search) interrupted: next_step", s.Body().Str())
	assert.Equal(t, at(9000), s.Timestamp().AsTime(), "ends at the next model request")
	assert.Equal(t, "sess-7f3a", logAttr(s, "acme.session_id"), "the scope, under scope_attribute")
	assert.Equal(t, "web_search", logAttr(s, "gen_ai.tool.name"))

	spanOutcomes := map[string]string{}
	var synthSpans []ptrace.Span
	spans := 0
	for _, td := range b.tsink.AllTraces() {
		for _, sp := range allSpans(td) {
			spans++
			if strAttr(sp, "toolpair.synthetic") == "true" {
				synthSpans = append(synthSpans, sp)
				continue
			}
			if o := strAttr(sp, "toolpair.outcome"); o != "" {
				spanOutcomes[strAttr(sp, "acme.call_id")] = o + " " + strAttr(sp, "toolpair.call.duration_ms")
			}
		}
	}
	assert.Equal(t, 6+1, spans)
	assert.Equal(t, map[string]string{"sp_01": "paired 500", "sp_03": "paired 3700"}, spanOutcomes)
	require.Len(t, synthSpans, 1)
	sp := synthSpans[0]
	assert.Equal(t, "execute_tool edit_file", sp.Name())
	assert.Equal(t, "sp_02", strAttr(sp, "gen_ai.tool.call.id"))
	assert.Equal(t, "next_step", strAttr(sp, "toolpair.interrupt.reason"))
	assert.Equal(t, "4acde0c1b2a3948576afe0d1c2b3a490", sp.TraceID().String())
	assert.Equal(t, "a100000000000001", sp.ParentSpanID().String(), "under the announcing span's parent")
	assert.Equal(t, at(1000), sp.StartTimestamp().AsTime(), "starts at the announcing span's end")
	assert.Equal(t, at(2500), sp.EndTimestamp().AsTime(), "ends at the next model request's start")
	assert.Equal(t, "sess-91bc", strAttr(sp, "acme.session_id"))

	metadatatest.AssertEqualProcessorToolpairMalformed(t, b.tel, []metricdata.DataPoint[int64]{{
		Attributes: attribute.NewSet(attribute.String("toolpair.dialect", "acme_logs"), attribute.String("reason", "missing_call_id")),
		Value:      1,
	}}, metricdatatest.IgnoreTimestamp())
	_, err = b.tel.GetMetric("otelcol_processor_toolpair_records_unrecognized")
	assert.Error(t, err, "no record of the agent counted as unrecognised")
	stats := b.stats()
	assert.Equal(t, uint64(1), stats.Rejected, "tc_03, refused by the policy")
}

// TestCustomDialectsOnlySeeUnclaimedRecords: a record a built-in dialect claims never reaches
// a custom dialect, and a custom dialect's runtime errors count as malformed and leave the
// record as it came.
func TestCustomDialectsOnlySeeUnclaimedRecords(t *testing.T) {
	b := newRig(t, withConfig(func(c *Config) {
		c.CustomDialects = []custom.Config{{
			Name: "strict", Context: custom.ContextLog,
			// ParseJSON fails on every body that is not JSON.
			Result: `ParseJSON(body)["kind"] == "end"`,
			CallID: `attributes["call_id"]`,
		}}
	}))

	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	codex := lrs.AppendEmpty() // claimed by codex: the custom dialect never sees it
	codex.Body().SetStr("event")
	codex.Attributes().PutStr("event.name", "codex.tool_decision")
	codex.Attributes().PutStr("call_id", "call_1")
	codex.SetTimestamp(1)
	plain := lrs.AppendEmpty()
	plain.Body().SetStr("not JSON")
	plain.Attributes().PutStr("call_id", "x")
	plain.SetTimestamp(2)
	want := plog.NewLogs()
	ld.CopyTo(want)

	require.NoError(t, b.logs.ConsumeLogs(context.Background(), ld))
	got := plog.NewLogs()
	for _, l := range b.lsink.AllLogs() {
		l.ResourceLogs().MoveAndAppendTo(got.ResourceLogs())
	}
	require.NoError(t, plogtest.CompareLogs(want, got), "passed through unchanged")
	metadatatest.AssertEqualProcessorToolpairMalformed(t, b.tel, []metricdata.DataPoint[int64]{{
		Attributes: attribute.NewSet(attribute.String("toolpair.dialect", "strict"), attribute.String("reason", custom.ReasonExpressionError)),
		Value:      1,
	}}, metricdatatest.IgnoreTimestamp())
}

func TestCustomDialectConfigErrors(t *testing.T) {
	good := func(name string) custom.Config {
		return custom.Config{Name: name, Context: custom.ContextLog, Use: `event_name == "a"`, CallID: `attributes["id"]`}
	}
	tests := []struct {
		name string
		list func() []custom.Config
		want []string
	}{
		{
			name: "OTTL that does not parse names the entry, the key and the dialect",
			list: func() []custom.Config {
				bad := good("acme")
				bad.Use = `event_name == `
				return []custom.Config{good("first"), bad}
			},
			want: []string{`custom_dialects[1].use: dialect "acme": `},
		},
		{
			name: "a value expression",
			list: func() []custom.Config {
				bad := good("acme")
				bad.CallID = `Nope(attributes["id"])`
				return []custom.Config{bad}
			},
			want: []string{`custom_dialects[0].call_id: dialect "acme": `, "Nope"},
		},
		{
			name: "duplicate names",
			list: func() []custom.Config { return []custom.Config{good("acme"), good("acme")} },
			want: []string{`custom_dialects[1].name: "acme" is already the name of custom_dialects[0]`},
		},
		{
			name: "a built-in name",
			list: func() []custom.Config { return []custom.Config{good("codex")} },
			want: []string{`custom_dialects[0].name: "codex" is the name of a built-in dialect`},
		},
		{
			name: "unknown context",
			list: func() []custom.Config { c := good("acme"); c.Context = "metric"; return []custom.Config{c} },
			want: []string{`custom_dialects[0].context: dialect "acme": must be "span", "spanevent" or "log"`},
		},
		{
			name: "no name",
			list: func() []custom.Config { return []custom.Config{good("")} },
			want: []string{`custom_dialects[0].name: must not be empty`},
		},
		{
			name: "unknown precedence",
			list: func() []custom.Config { c := good("acme"); c.Precedence = "first"; return []custom.Config{c} },
			want: []string{`custom_dialects[0].precedence: dialect "acme": must be "after_builtin" or "before_builtin", got "first"`},
		},
		{
			name: "before_builtin without where",
			list: func() []custom.Config {
				c := good("acme")
				c.Precedence = custom.PrecedenceBeforeBuiltin
				return []custom.Config{good("first"), c}
			},
			want: []string{`custom_dialects[1].where: dialect "acme": must be set when precedence is "before_builtin"`},
		},
		{
			name: "where that does not parse",
			list: func() []custom.Config { c := good("acme"); c.Where = `resource.attributes[`; return []custom.Config{c} },
			want: []string{`custom_dialects[0].where: dialect "acme": `},
		},
		{
			name: "calls_match without calls, and a wildcard in call_id_path",
			list: func() []custom.Config {
				c := good("acme")
				c.CallsMatch = map[string]string{"type": "tool_call"}
				d := good("other")
				d.Use, d.Calls, d.CallIDPath = `event_name == "b"`, `body`, "*.id"
				return []custom.Config{c, d}
			},
			want: []string{
				`custom_dialects[0].calls_match: dialect "acme": filters the entries of calls: calls must be set`,
				`custom_dialects[1].call_id_path: dialect "other": "*.id": the wildcard "*" is allowed only in calls_path`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.CustomDialects = tt.list()
			err := cfg.Validate()
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// TestRouteOfCustomDialectRecords: in route mode, each record of the example agent gets the
// route of the tenant and scope pair mode keys its calls under, the scope its custom dialect's
// scope expression gives (acme.session_id, not a scope attribute); with scope_attributes that
// would give another scope, so that a route from them would differ.
func TestRouteOfCustomDialectRecords(t *testing.T) {
	example := exampleConfig(t, "custom-dialect.yaml")
	mutate := func(c *Config) {
		c.Dialects = example.Dialects
		c.CustomDialects = example.CustomDialects
		c.ConversationAttributes = []string{"service.version"} // on the resource: one scope for all
	}
	n, _ := checkLogRoutes(t, mutate, loadLogs(t, "custom", "logs.json"))
	assert.Equal(t, 12, n, "the records with call items or closings (all but the malformed one)")

	td := loadTraces(t, "custom", "traces.json")
	keys := pairingKeys(t, mutate, td, plog.Logs{})
	require.NotEmpty(t, keys)
	routed := ptrace.NewTraces()
	td.CopyTo(routed)
	_, err := testRouter(t, mutate).processTraces(context.Background(), routed)
	require.NoError(t, err)
	byID := map[[24]byte]string{}
	forEachSpanAt(routed, func(_ batch.Pos, s ptrace.Span) { byID[spanKey(s)] = routeAttr(s.Attributes()) })
	checked := 0
	forEachSpanAt(td, func(pos batch.Pos, s ptrace.Span) {
		for _, key := range keys[pos] {
			assert.Equal(t, "sess-91bc", key.Conversation)
			assert.Equal(t, callkey.Route(key.Tenant, key.Conversation), byID[spanKey(s)], "span %s, call %s", s.Name(), key.CallID)
			checked++
		}
	})
	assert.Positive(t, checked)
}

// TestCustomDialectSessionEnd: a custom session end interrupts the calls of its scope still
// pending, with reason session_end, ending at the session end's time; a call of another scope
// (the scope expression's value) stays pending.
func TestCustomDialectSessionEnd(t *testing.T) {
	b := newRig(t, withConfig(func(c *Config) {
		c.CustomDialects = []custom.Config{{
			Name: "acme", Context: custom.ContextLog,
			Use:                   `event_name == "start"`,
			SessionEnd:            `event_name == "bye"`,
			CallID:                `attributes["id"]`,
			ToolName:              `attributes["tool"]`,
			Conversation:          `attributes["sess"]`,
			ConversationAttribute: "acme.session",
		}}
	}))
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	add := func(event string, ms int64, attrs map[string]any) {
		lr := lrs.AppendEmpty()
		lr.SetEventName(event)
		lr.SetTimestamp(ctTS(ms))
		require.NoError(t, lr.Attributes().FromRaw(attrs))
	}
	add("start", 1000, map[string]any{"id": "c1", "tool": "bash", "sess": "s1"})
	add("start", 1100, map[string]any{"id": "c2", "tool": "bash", "sess": "s2"})
	add("bye", 2000, map[string]any{"sess": "s1"})
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), ld))
	b.advance(31 * time.Second)

	logs := syntheticLogs(b)
	require.Len(t, logs, 1)
	assert.Equal(t, "tool call c1 (bash) interrupted: session_end", logs[0].Body().Str())
	assert.Equal(t, ctTS(2000), logs[0].Timestamp())
	assert.Equal(t, "s1", logAttr(logs[0], "acme.session"))
	assert.Equal(t, 1, b.stats().Pending, "c2, of another scope, is still pending")
}
