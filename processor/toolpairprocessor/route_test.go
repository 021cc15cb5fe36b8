// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/batchpersignal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/batch"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/callkey"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadata"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// routeAgents are the agents whose OTLP captures testdata/ holds, by directory: the trace
// captures of each of the first list, the log captures of each of the second.
var (
	routeTraceAgents = []string{"agents", "aisdk", "aisdk6", "claude", "codex", "custom", "adk", "gemini", "openllmetry", "voltagent"}
	routeLogAgents   = []string{"claude", "codex", "custom", "gemini", "voltagent"}
)

// routeCaptures returns the real OTLP captures of testdata/ of one signal ("traces" or
// "logs"), as paths under testdata/: every agent's scenarios (testdata/<agent>/<scenario>/)
// and the custom dialect's sample telemetry (testdata/custom/). It fails unless every agent
// the signal's list names has a capture.
func routeCaptures(t *testing.T, signal string) []string {
	t.Helper()
	root := filepath.Join("..", "..", "testdata")
	paths, err := filepath.Glob(filepath.Join(root, "*", "*", signal+".json"))
	require.NoError(t, err)
	paths = append(paths, filepath.Join(root, "custom", signal+".json"))
	agents := map[string]bool{}
	for i, p := range paths {
		paths[i] = filepath.ToSlash(strings.TrimPrefix(p, root+string(filepath.Separator)))
		agents[strings.Split(paths[i], "/")[0]] = true
	}
	want := routeTraceAgents
	if signal == "logs" {
		want = routeLogAgents
	}
	for _, a := range want {
		require.True(t, agents[a], "no %s capture of %s in testdata/", signal, a)
	}
	return paths
}

// transcriptFiles returns every transcript file of testdata/ (Claude Code, pi, OpenClaw).
func routeTranscriptFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	root := filepath.Join("..", "..", "testdata")
	require.NoError(t, filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".jsonl") {
			files = append(files, path)
		}
		return err
	}))
	require.GreaterOrEqual(t, len(files), 15)
	return files
}

// pairingKeys runs a copy of a batch through a toolpair in pair mode and returns the call keys
// the engine is handed for each record, by position.
func pairingKeys(t *testing.T, mutate func(*Config), td ptrace.Traces, ld plog.Logs) map[batch.Pos][]pairing.Key {
	t.Helper()
	b := newRig(t, withConfig(mutate))
	keys := map[batch.Pos][]pairing.Key{}
	b.observeKeys(func(pos batch.Pos, key pairing.Key) { keys[pos] = append(keys[pos], key) })
	if td != (ptrace.Traces{}) {
		c := ptrace.NewTraces()
		td.CopyTo(c)
		require.NoError(t, b.traces.ConsumeTraces(context.Background(), c))
	} else {
		c := plog.NewLogs()
		ld.CopyTo(c)
		require.NoError(t, b.logs.ConsumeLogs(context.Background(), c))
	}
	b.shutdown()
	return keys
}

func routeAttr(attrs pcommon.Map) string {
	v, _ := attrs.Get(DefaultRouteAttribute)
	return v.Str()
}

func defaultRouter(t testing.TB) *testRouteMode { return testRouter(t, nil) }

// testRouteMode is a component in route mode, built through the factory, with one traces and
// one logs pipeline whose next consumers drop what they get: processTraces and processLogs
// route a batch in place and return it.
type testRouteMode struct {
	traces processor.Traces
	logs   processor.Logs
}

func (r *testRouteMode) processTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	return td, r.traces.ConsumeTraces(ctx, td)
}

func (r *testRouteMode) processLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	return ld, r.logs.ConsumeLogs(ctx, ld)
}

func testRouter(t testing.TB, mutate func(*Config)) *testRouteMode {
	cfg := createDefaultConfig().(*Config)
	if mutate != nil {
		mutate(cfg)
	}
	cfg.Mode = ModeRoute
	require.NoError(t, cfg.Validate())
	f := NewFactory()
	set := processortest.NewNopSettings(metadata.Type)
	tp, err := f.CreateTraces(context.Background(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	lp, err := f.CreateLogs(context.Background(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	return &testRouteMode{traces: tp, logs: lp}
}

// checkLogRoutes routes ld and checks that every record has a route and that every record
// pairing keys has the route of each of its keys' tenant and scope. It returns the number of
// keyed records and the routed batch.
func checkLogRoutes(t *testing.T, mutate func(*Config), ld plog.Logs) (int, plog.Logs) {
	t.Helper()
	keys := pairingKeys(t, mutate, ptrace.Traces{}, ld)
	routed := plog.NewLogs()
	ld.CopyTo(routed)
	_, err := testRouter(t, mutate).processLogs(context.Background(), routed)
	require.NoError(t, err)
	require.Equal(t, ld.LogRecordCount(), routed.LogRecordCount())
	rls := routed.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				got := routeAttr(lrs.At(k).Attributes())
				require.Len(t, got, 16, "every record has a route")
				for _, key := range keys[batch.Pos{Res: i, Scope: j, Rec: k}] {
					assert.Equal(t, callkey.Route(key.Tenant, key.Conversation), got, "record %d/%d/%d, call %s", i, j, k, key.CallID)
				}
			}
		}
	}
	return len(keys), routed
}

// TestRouteIsTheCallKeysTenantAndScope: on every real capture of testdata/, each record that
// a dialect recognises gets, in route mode, the route of the tenant and scope of the call keys
// pair mode hands the engine for it; every other record gets a route too. With the default
// keys, with other scope and tenant attributes, with the custom dialects of
// examples/custom-dialect.yaml beside the built-in ones (whose scope is an OTTL expression), and
// without the transcript dialect (no log dialect then gives its calls a scope of its own, and
// route mode reads no log record with the dialects).
func TestRouteIsTheCallKeysTenantAndScope(t *testing.T) {
	custom := exampleConfig(t, "custom-dialect.yaml").CustomDialects
	require.NotEmpty(t, custom)
	configs := []struct {
		name   string
		mutate func(*Config)
		// keyed: the agents whose captures must have records pair mode keys; transcripts:
		// every transcript file must have tool lines it keys
		keyedTraces, keyedLogs []string
		transcripts            bool
	}{
		{"defaults", nil, without(routeTraceAgents, "custom"), without(routeLogAgents, "custom"), true},
		{"other keys", func(c *Config) {
			c.ConversationAttributes = []string{"session.id", "gen_ai.conversation.id"}
			c.TenantAttributes = []string{"host.name", "service.version", "log.file.name"}
		}, without(routeTraceAgents, "custom"), without(routeLogAgents, "custom"), true},
		{"custom dialects", func(c *Config) { c.CustomDialects = custom }, routeTraceAgents, routeLogAgents, true},
		{"no transcript dialect", func(c *Config) { c.Dialects = without(knownDialects, DialectTranscript) },
			without(routeTraceAgents, "custom"), without(routeLogAgents, "custom"), false},
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) { checkCaptureRoutes(t, c.mutate, c.keyedTraces, c.keyedLogs, c.transcripts) })
	}
}

func without(list []string, drop string) []string {
	var out []string
	for _, s := range list {
		if s != drop {
			out = append(out, s)
		}
	}
	return out
}

// checkCaptureRoutes checks every capture and transcript file of testdata/ under the
// configuration mutate makes, and that the captures of each agent of keyedTraces (keyedLogs)
// have spans (log records) pair mode keys, and, with keyedTranscripts, every transcript file
// lines.
func checkCaptureRoutes(t *testing.T, mutate func(*Config), keyedTraces, keyedLogs []string, keyedTranscripts bool) {
	keyedSpans, keyedLogRecords := map[string]int{}, map[string]int{}
	for _, name := range routeCaptures(t, "traces") {
		t.Run(name, func(t *testing.T) {
			td := loadTraces(t, strings.Split(name, "/")...)
			keys := pairingKeys(t, mutate, td, plog.Logs{})
			keyedSpans[strings.Split(name, "/")[0]] += len(keys)
			byID := map[[24]byte]string{}
			routed := ptrace.NewTraces()
			td.CopyTo(routed)
			_, err := testRouter(t, mutate).processTraces(context.Background(), routed)
			require.NoError(t, err)
			require.Equal(t, td.SpanCount(), routed.SpanCount())
			forEachSpanAt(routed, func(_ batch.Pos, s ptrace.Span) {
				require.Len(t, routeAttr(s.Attributes()), 16, "every span has a route")
				byID[spanKey(s)] = routeAttr(s.Attributes())
			})
			forEachSpanAt(td, func(pos batch.Pos, s ptrace.Span) {
				for _, key := range keys[pos] {
					assert.Equal(t, callkey.Route(key.Tenant, key.Conversation), byID[spanKey(s)], "span %s, call %s", s.Name(), key.CallID)
				}
			})
		})
	}
	for _, agent := range keyedTraces {
		assert.Positive(t, keyedSpans[agent], "the %s trace captures have tool spans", agent)
	}
	for _, name := range routeCaptures(t, "logs") {
		t.Run(name, func(t *testing.T) {
			n, _ := checkLogRoutes(t, mutate, loadLogs(t, strings.Split(name, "/")...))
			keyedLogRecords[strings.Split(name, "/")[0]] += n
		})
	}
	for _, agent := range keyedLogs {
		assert.Positive(t, keyedLogRecords[agent], "the %s log captures have tool records", agent)
	}
	for _, path := range routeTranscriptFiles(t) {
		t.Run(path, func(t *testing.T) {
			n, _ := checkLogRoutes(t, mutate, dialecttest.TranscriptLogs(t, path))
			if keyedTranscripts {
				require.Positive(t, n, "the transcript has tool lines")
			}
		})
	}
}

// TestRouteOfTranscriptLinesWithoutTools: every line of a Claude Code transcript that names
// its session, tool line or not, is routed by its sessionId and agentId (read here with
// encoding/json); every line of a pi or OpenClaw file by the file.
func TestRouteOfTranscriptLinesWithoutTools(t *testing.T) {
	for _, path := range routeTranscriptFiles(t) {
		t.Run(path, func(t *testing.T) {
			ld := dialecttest.TranscriptLogs(t, path)
			_, err := defaultRouter(t).processLogs(context.Background(), ld)
			require.NoError(t, err)
			lrs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
			checked := 0
			for k := 0; k < lrs.Len(); k++ {
				lr := lrs.At(k)
				var l struct{ SessionID, AgentID string }
				require.NoError(t, json.Unmarshal([]byte(lr.Body().Str()), &l))
				want := ""
				switch {
				case l.SessionID != "" && l.AgentID != "":
					want = callkey.Route("", l.SessionID+"/"+l.AgentID)
				case l.SessionID != "":
					want = callkey.Route("", l.SessionID)
				case strings.Contains(path, "/pi/") || strings.Contains(path, "/openclaw/"):
					p, _ := lr.Attributes().Get("log.file.path")
					want = callkey.Route("", p.Str())
				default:
					continue // a Claude Code line naming no session: neither tool nor timeout
				}
				assert.Equal(t, want, routeAttr(lr.Attributes()), "line %d", k+1)
				checked++
			}
			require.Positive(t, checked)
		})
	}
}

func forEachSpanAt(td ptrace.Traces, f func(batch.Pos, ptrace.Span)) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				f(batch.Pos{Res: i, Scope: j, Rec: k}, spans.At(k))
			}
		}
	}
}

func spanKey(s ptrace.Span) [24]byte {
	var k [24]byte
	tid, sid := s.TraceID(), s.SpanID()
	copy(k[:16], tid[:])
	copy(k[16:], sid[:])
	return k
}

// lbTraceGroups returns the groups the load_balancing exporter (contrib v0.158.0,
// routing_key: attributes) routes spans by: batchpersignal.SplitTraces's one group per
// resource, instrumentation scope and trace ID, routed as a whole on its first span's
// attribute.
func lbTraceGroups(td ptrace.Traces) []ptrace.SpanSlice {
	var groups []ptrace.SpanSlice
	for _, g := range batchpersignal.SplitTraces(td) {
		groups = append(groups, g.ResourceSpans().At(0).ScopeSpans().At(0).Spans())
	}
	return groups
}

// TestRouteSplitsTracesOfSeveralScopes: one trace holding spans of two conversations, in one
// scope group, leaves as groups the exporter routes each on a route all its spans share, and
// nothing is lost; a route attribute on the resource or instrumentation scope (which the
// exporter would read first) is removed.
func TestRouteSplitsTracesOfSeveralScopes(t *testing.T) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "agent")
	rs.Resource().Attributes().PutStr(DefaultRouteAttribute, "stale")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("agent-sdk")
	ss.Scope().Attributes().PutStr(DefaultRouteAttribute, "stale")
	shared := pcommon.TraceID{1}
	add := func(name string, tid pcommon.TraceID, conv string) {
		s := ss.Spans().AppendEmpty()
		s.SetName(name)
		s.SetTraceID(tid)
		s.SetSpanID(pcommon.SpanID{byte(ss.Spans().Len())})
		if conv != "" {
			s.Attributes().PutStr("gen_ai.conversation.id", conv)
		}
	}
	add("chat a", shared, "conv-a")
	add("chat b", shared, "conv-b")
	add("execute_tool a", shared, "conv-a")
	add("no scope attribute", shared, "")
	add("other trace", pcommon.TraceID{2}, "conv-b")

	_, err := defaultRouter(t).processTraces(context.Background(), td)
	require.NoError(t, err)
	assert.Equal(t, 5, td.SpanCount())
	_, onResource := rs.Resource().Attributes().Get(DefaultRouteAttribute)
	assert.False(t, onResource)
	routes := map[string]string{}
	for _, g := range lbTraceGroups(td) {
		first := routeAttr(g.At(0).Attributes())
		for k := 0; k < g.Len(); k++ {
			assert.Equal(t, first, routeAttr(g.At(k).Attributes()), "group of %s: %s", g.At(0).Name(), g.At(k).Name())
			routes[g.At(k).Name()] = routeAttr(g.At(k).Attributes())
		}
	}
	assert.Len(t, routes, 5)
	assert.Equal(t, callkey.Route("agent", "conv-a"), routes["chat a"])
	assert.Equal(t, routes["chat a"], routes["execute_tool a"])
	assert.Equal(t, callkey.Route("agent", "conv-b"), routes["chat b"])
	assert.Equal(t, routes["chat b"], routes["other trace"])
	assert.Equal(t, callkey.Route("agent", shared.String()), routes["no scope attribute"], "the trace ID fallback")
	for i := 0; i < rs.ScopeSpans().Len(); i++ {
		assert.Equal(t, "agent-sdk", rs.ScopeSpans().At(i).Scope().Name())
		_, onScope := rs.ScopeSpans().At(i).Scope().Attributes().Get(DefaultRouteAttribute)
		assert.False(t, onScope)
	}
}

// TestRouteGroupsOfRealTraces: on the real trace captures, every group the exporter routes
// as a whole carries one route.
func TestRouteGroupsOfRealTraces(t *testing.T) {
	for _, name := range routeCaptures(t, "traces") {
		td := loadTraces(t, strings.Split(name, "/")...)
		_, err := defaultRouter(t).processTraces(context.Background(), td)
		require.NoError(t, err)
		for _, g := range lbTraceGroups(td) {
			for k := 0; k < g.Len(); k++ {
				require.Equal(t, routeAttr(g.At(0).Attributes()), routeAttr(g.At(k).Attributes()), name)
			}
		}
	}
}

// TestRouteModeKeepsNoState: in route mode the factory makes no pairing state (no shared
// instance, no ticker), passes every record on the same call, and a configured attribute name
// is the one written.
func TestRouteModeKeepsNoState(t *testing.T) {
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.Mode, cfg.RouteAttribute = ModeRoute, "lb.key"
	set := processortest.NewNopSettings(metadata.Type)
	tsink, lsink := new(consumertest.TracesSink), new(consumertest.LogsSink)
	tp, err := f.CreateTraces(context.Background(), set, cfg, tsink)
	require.NoError(t, err)
	lp, err := f.CreateLogs(context.Background(), set, cfg, lsink)
	require.NoError(t, err)
	require.NoError(t, tp.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, lp.Start(context.Background(), componenttest.NewNopHost()))
	made := sharedOf(cfg) != nil
	assert.False(t, made, "no pairing state in route mode")

	td := loadTraces(t, "aisdk", "interrupt_sigterm", "traces.json")
	ld := loadLogs(t, "claude", "interrupt_sigterm", "logs.json")
	nSpans, nLogs := td.SpanCount(), ld.LogRecordCount()
	require.NoError(t, tp.ConsumeTraces(context.Background(), td))
	require.NoError(t, lp.ConsumeLogs(context.Background(), ld))
	require.NoError(t, tp.Shutdown(context.Background()))
	require.NoError(t, lp.Shutdown(context.Background()))
	require.Equal(t, nSpans, tsink.SpanCount(), "every span passes, no synthetic one")
	require.Equal(t, nLogs, lsink.LogRecordCount(), "every record passes, nothing held")
	forEachSpanAt(tsink.AllTraces()[0], func(_ batch.Pos, s ptrace.Span) {
		v, ok := s.Attributes().Get("lb.key")
		require.True(t, ok)
		assert.Len(t, v.Str(), 16)
		_, outcome := s.Attributes().Get(synth.AttrOutcome)
		assert.False(t, outcome, "route mode pairs nothing")
	})
}

// TestRouteOfCustomDialects: with the custom dialects of examples/custom-dialect.yaml, whose
// scope is an OTTL expression (acme.session_id, not a scope attribute), the sample telemetry's
// records get the routes of the call keys pair mode gives them, and the spans of one session
// share one route across its traces.
func TestRouteOfCustomDialects(t *testing.T) {
	cfg := exampleConfig(t, "custom-dialect.yaml")
	mutate := func(c *Config) { *c = *cfg }
	n, _ := checkLogRoutes(t, mutate, loadLogs(t, "custom", "logs.json"))
	require.Positive(t, n)

	td := loadTraces(t, "custom", "traces.json")
	keys := pairingKeys(t, mutate, td, plog.Logs{})
	require.NotEmpty(t, keys)
	routed := ptrace.NewTraces()
	td.CopyTo(routed)
	_, err := testRouter(t, mutate).processTraces(context.Background(), routed)
	require.NoError(t, err)
	byID := map[[24]byte]string{}
	forEachSpanAt(routed, func(_ batch.Pos, s ptrace.Span) { byID[spanKey(s)] = routeAttr(s.Attributes()) })
	bySession := map[string]map[string]bool{}
	forEachSpanAt(td, func(pos batch.Pos, s ptrace.Span) {
		for _, key := range keys[pos] {
			assert.Equal(t, callkey.Route(key.Tenant, key.Conversation), byID[spanKey(s)], "span %s, call %s", s.Name(), key.CallID)
		}
		if v, ok := s.Attributes().Get("acme.session_id"); ok && len(keys[pos]) > 0 {
			if bySession[v.Str()] == nil {
				bySession[v.Str()] = map[string]bool{}
			}
			bySession[v.Str()][byID[spanKey(s)]] = true
		}
	})
	require.NotEmpty(t, bySession)
	for session, routes := range bySession {
		assert.Len(t, routes, 1, "session %s", session)
	}
}
