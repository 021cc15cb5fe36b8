// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package dashboard checks examples/grafana/otelcol-agent-tools.json against what the
// distribution really serves: every PromQL expression of the dashboard parses with the
// Prometheus parser, and every metric and label it names is among the series scraped from
// bin/otelcol-agent running examples/full.yaml on the real captures under testdata/.
package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-agent/otelcol-agent/internal/distrotest"
)

// dashboardPath is the dashboard, relative to the repository root.
const dashboardPath = "examples/grafana/otelcol-agent-tools.json"

// grafanaVars are the values the test gives the variables the dashboard may use: Grafana's
// interval variables, and the dashboard's own template variables (All).
var grafanaVars = map[string]string{
	"__rate_interval": "5m",
	"__interval":      "1m",
	"__range":         "1h",
	"job":             ".*",
	"tool":            ".*",
}

// promql is the Prometheus PromQL parser with its default options (no experimental syntax:
// what a stock Prometheus accepts).
var promql = parser.NewParser(parser.Options{})

// scrapeTimeLabels are added by Prometheus when it scrapes, not by the target.
var scrapeTimeLabels = []string{"job", "instance"}

// killedCalls is the number of calls interrupted in the replayed captures: the agent was killed
// during the tool in aisdk/killed_during_tool, claude, codex and gemini interrupt_sigterm.
const killedCalls = 4

// query is one PromQL expression of the dashboard and where it is.
type query struct {
	where string
	expr  string
}

// TestDashboardQueriesMatchScrapedSeries runs the full example configuration on every real
// capture, then checks the dashboard's queries against the two scrape endpoints.
func TestDashboardQueriesMatchScrapedSeries(t *testing.T) {
	root := distrotest.RepoRoot(t)
	queries := dashboardQueries(t, filepath.Join(root, dashboardPath))
	require.NotEmpty(t, queries)

	// Parse first: a query that does not parse fails the test without a collector.
	type parsed struct {
		query
		metrics map[string][]string // metric name -> label names the query reads on it
	}
	var all []parsed
	for _, q := range queries {
		text, err := substitute(q.expr)
		if !assert.NoError(t, err, "%s: %s", q.where, q.expr) {
			continue
		}
		expr, err := promql.ParseExpr(text)
		if !assert.NoError(t, err, "%s: %s", q.where, q.expr) {
			continue
		}
		all = append(all, parsed{q, namesIn(expr)})
	}
	require.False(t, t.Failed())

	httpPort, promPort, selfPort := distrotest.FreePort(t), distrotest.FreePort(t), distrotest.FreePort(t)
	c := distrotest.StartCollector(t, "full.yaml",
		[]string{
			fmt.Sprintf("OTELCOL_AGENT_PROM_PORT=%d", promPort),
			fmt.Sprintf("OTELCOL_AGENT_METRICS_PORT=%d", selfPort),
			// No Jaeger here: the traces exporter retries in the background.
			fmt.Sprintf("OTELCOL_AGENT_JAEGER_ENDPOINT=127.0.0.1:%d", distrotest.FreePort(t)),
		},
		fmt.Sprintf("--set=receivers::otlp::protocols::http::endpoint=127.0.0.1:%d", httpPort),
		fmt.Sprintf("--set=receivers::otlp::protocols::grpc::endpoint=127.0.0.1:%d", distrotest.FreePort(t)),
		// Short windows so the interrupted calls of the captures are reported within seconds.
		"--set=processors::toolpair::pairing_timeout=3s",
		"--set=processors::toolpair::orphan_grace=1s",
		"--set=exporters::debug::verbosity=basic")

	captures := replayCaptures(t, c, root, httpPort)
	t.Logf("replayed %d capture files", captures)

	// Wait until every metric the dashboard names has a series, then check the labels.
	endpoints := []string{
		fmt.Sprintf("http://127.0.0.1:%d/metrics", promPort), // the prometheus exporter
		fmt.Sprintf("http://127.0.0.1:%d/metrics", selfPort), // the collector's own telemetry
	}
	// Wait until every metric the dashboard names has a series carrying every label the
	// dashboard reads on it (the interrupted calls come a few seconds after the replay).
	var series map[string][]sample
	problems := func() []string {
		series = scrape(endpoints)
		var out []string
		for _, p := range all {
			for m, used := range p.metrics {
				if len(series[m]) == 0 {
					out = append(out, fmt.Sprintf("%s: no series of %s", p.where, m))
					continue
				}
				have := map[string]bool{}
				for _, sm := range series[m] {
					for k := range sm.labels {
						have[string(k)] = true
					}
				}
				for _, l := range used {
					if !have[l] && !slices.Contains(scrapeTimeLabels, l) {
						out = append(out, fmt.Sprintf("%s: label %s on none of the %d series of %s", p.where, l, len(series[m]), m))
					}
				}
			}
		}
		sort.Strings(out)
		return slices.Compact(out)
	}
	// Each interrupted call counts once in the tool-call metrics, whether it was announced in
	// spans or in logs (with its companion span left out), as in the processor's own counter.
	interrupted := func() (metrics, processor float64) {
		return sumWhere(series["toolpair_tool_calls_total"], "toolpair_outcome", "interrupted"),
			sumWhere(series["otelcol_processor_toolpair_outcomes"], "toolpair_outcome", "interrupted")
	}
	c.WaitFor(func() bool {
		if len(problems()) != 0 {
			return false
		}
		m, p := interrupted()
		return p >= killedCalls && m >= p
	}, "every metric and label of the dashboard scraped, every killed call counted")
	assert.Empty(t, problems())
	time.Sleep(2 * time.Second) // anything counted twice would show by now (batch timeout: 200ms)
	// Calls the processor counted after the wait above (the captures' aborted calls among
	// them) reach the metrics a scrape later on a loaded machine: wait for the two to agree.
	// Counters only grow, so a call counted twice in the metrics never agrees, and fails.
	c.WaitFor(func() bool {
		problems()
		m, p := interrupted()
		return m == p
	}, "the tool-call metrics to agree with the processor's counter of interrupted calls")
	m, p := interrupted()
	assert.Equal(t, p, m, "interrupted calls: tool-call metrics against the processor's counter")
	t.Logf("interrupted calls: %v", m)

	// The replayed captures hold paired and interrupted calls and timeouts.
	calls := series["toolpair_tool_calls_total"]
	assert.True(t, hasSeries(calls, "toolpair_outcome", "paired"), "paired calls counted")
	assert.True(t, hasSeries(calls, "toolpair_outcome", "interrupted"), "interrupted calls counted")
	assert.True(t, hasSeries(series["gen_ai_execute_tool_duration_seconds_bucket"], "toolpair_outcome", "paired"), "paired durations")
	assert.NotEmpty(t, series["toolpair_timeouts_total"], "timeouts counted")
	c.Stop()
}

// dashboardQueries returns every PromQL expression of the dashboard: the panels' targets
// (rows included) and the template variables' label_values queries.
func dashboardQueries(t *testing.T, path string) []query {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var d struct {
		Panels     []panel `json:"panels"`
		Templating struct {
			List []struct {
				Name  string          `json:"name"`
				Type  string          `json:"type"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	require.NoError(t, json.Unmarshal(data, &d))

	var out []query
	var walk func(ps []panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, tg := range p.Targets {
				require.NotEmpty(t, tg.Expr, "panel %q target %s has no expr", p.Title, tg.RefID)
				out = append(out, query{fmt.Sprintf("panel %q target %s", p.Title, tg.RefID), tg.Expr})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)

	labelValues := regexp.MustCompile(`^label_values\((.+),\s*[a-zA-Z_][a-zA-Z0-9_]*\)$`)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil {
			require.NoError(t, json.Unmarshal(v.Query, &q.Query), "variable %s", v.Name)
		}
		m := labelValues.FindStringSubmatch(q.Query)
		require.NotNil(t, m, "variable %s: only label_values(selector, label) is checked: %s", v.Name, q.Query)
		out = append(out, query{fmt.Sprintf("variable %s", v.Name), m[1]})
	}
	return out
}

type panel struct {
	Title   string  `json:"title"`
	Panels  []panel `json:"panels"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
}

// substitute replaces the Grafana variables ($name, ${name}) the test knows, and reports the
// first unknown one as an error.
func substitute(expr string) (string, error) {
	re := regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`)
	var unknown error
	out := re.ReplaceAllStringFunc(expr, func(v string) string {
		val, ok := grafanaVars[re.FindStringSubmatch(v)[1]]
		if !ok {
			if unknown == nil {
				unknown = fmt.Errorf("unknown Grafana variable %s", v)
			}
			return v
		}
		return val
	})
	return out, unknown
}

// namesIn returns the metric names an expression selects and, for each, the label names the
// expression reads on it (matchers, and by/without/on/ignoring above it).
func namesIn(expr parser.Expr) map[string][]string {
	out := map[string][]string{}
	parser.Inspect(expr, func(node parser.Node, path []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := vs.Name
		var used []string
		for _, m := range vs.LabelMatchers {
			if m.Name == labels.MetricName {
				name = m.Value
				continue
			}
			used = append(used, m.Name)
		}
		for _, n := range path {
			switch a := n.(type) {
			case *parser.AggregateExpr:
				if !a.Without {
					used = append(used, a.Grouping...)
				}
			case *parser.BinaryExpr:
				if a.VectorMatching != nil && a.VectorMatching.On {
					used = append(used, a.VectorMatching.MatchingLabels...)
				}
			}
		}
		for _, l := range used {
			if !slices.Contains(out[name], l) {
				out[name] = append(out[name], l)
			}
		}
		if _, ok := out[name]; !ok {
			out[name] = nil
		}
		return nil
	})
	for _, used := range out {
		sort.Strings(used)
	}
	return out
}

// replayCaptures posts every real capture under testdata/ (OTLP JSON traces.json and
// logs.json, as the agents send them) to the collector's OTLP/HTTP receiver, traces first.
func replayCaptures(t *testing.T, c *distrotest.Process, root string, port int) int {
	t.Helper()
	n := 0
	for _, signal := range []string{"traces", "logs"} {
		files, err := filepath.Glob(filepath.Join(root, "testdata", "*", "*", signal+".json"))
		require.NoError(t, err)
		require.NotEmpty(t, files)
		for _, f := range files {
			body, err := os.ReadFile(f)
			require.NoError(t, err)
			url := fmt.Sprintf("http://127.0.0.1:%d/v1/%s", port, signal)
			c.WaitFor(func() bool { return distrotest.PostOTLP(url, body) }, "the OTLP/HTTP receiver accepts "+f)
			n++
		}
	}
	return n
}

// sample is one scraped series: its labels and, for counters, gauges and untyped metrics, its
// value (histogram series keep 0).
type sample struct {
	labels model.LabelSet
	value  float64
}

// scrape reads the Prometheus text exposition of every endpoint and returns the label sets
// of each series by series name (histograms as name_bucket, name_sum and name_count).
// Endpoints not answering yet give nothing.
func scrape(endpoints []string) map[string][]sample {
	out := map[string][]sample{}
	for _, url := range endpoints {
		resp, err := http.Get(url) //nolint:gosec // a loopback URL built by the test
		if err != nil {
			continue
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			continue
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		families, err := p.TextToMetricFamilies(bytes.NewReader(body))
		if err != nil {
			continue
		}
		for name, mf := range families {
			for _, m := range mf.GetMetric() {
				ls := model.LabelSet{}
				for _, lp := range m.GetLabel() {
					ls[model.LabelName(lp.GetName())] = model.LabelValue(lp.GetValue())
				}
				if m.GetHistogram() != nil {
					out[name+"_count"] = append(out[name+"_count"], sample{labels: ls})
					out[name+"_sum"] = append(out[name+"_sum"], sample{labels: ls})
					withLe := ls.Clone()
					withLe["le"] = ""
					out[name+"_bucket"] = append(out[name+"_bucket"], sample{labels: withLe})
					continue
				}
				v := m.GetCounter().GetValue() + m.GetGauge().GetValue() + m.GetUntyped().GetValue()
				out[name] = append(out[name], sample{ls, v})
			}
		}
	}
	return out
}

func hasSeries(series []sample, label, value string) bool {
	for _, sm := range series {
		if string(sm.labels[model.LabelName(label)]) == value {
			return true
		}
	}
	return false
}

// sumWhere adds the values of the series whose label has the value.
func sumWhere(series []sample, label, value string) float64 {
	total := 0.0
	for _, sm := range series {
		if string(sm.labels[model.LabelName(label)]) == value {
			total += sm.value
		}
	}
	return total
}

// TestQueryChecks keeps the checks honest: an unknown variable, a query that does not parse,
// and the metric and label names read from a parsed query.
func TestQueryChecks(t *testing.T) {
	got, err := substitute(`sum by (gen_ai_tool_name) (rate(a{job=~"$job"}[$__rate_interval]))`)
	require.NoError(t, err)
	assert.Equal(t, `sum by (gen_ai_tool_name) (rate(a{job=~".*"}[5m]))`, got)

	_, err = substitute(`rate(a{b=~"${nope}"}[5m])`)
	assert.ErrorContains(t, err, "${nope}")

	_, err = promql.ParseExpr(`sum by (x) (rate(a[5m])`)
	assert.Error(t, err)

	expr, err := promql.ParseExpr(`histogram_quantile(0.9, sum by (le, t) (rate(h_bucket{o="x"}[5m]))) / on (t) group_left b`)
	require.NoError(t, err)
	assert.Equal(t, map[string][]string{"h_bucket": {"le", "o", "t"}, "b": {"t"}}, namesIn(expr))
}
