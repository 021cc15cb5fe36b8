// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/custom"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadata"
)

// BenchmarkCustomDialects measures what custom dialects cost, per record, on the logs
// processor:
//
//   - mix/none and mix/acme: the realistic logs workload of BenchmarkLogsAgainstFloor (Claude
//     Code and Codex events, 70% of them no dialect claims) without and with the custom
//     dialects of examples/custom-dialect.yaml declared. With none, a record no built-in
//     dialect claims costs one length check more than before custom dialects existed; with
//     acme, each such record is read by the OTTL conditions once.
//   - mix/before: the same workload with one log dialect of precedence before_builtin whose
//     where selects another agent's service: every record, claimed by a built-in dialect or
//     not, is first read by that where condition.
//   - acme/records: the sample telemetry of that example (testdata/custom/logs.json, 13
//     records, every one claimed by the custom dialect), with call and session IDs of their
//     own in each batch.
func BenchmarkCustomDialects(b *testing.B) {
	example := exampleConfig(b, "custom-dialect.yaml")
	before := []custom.Config{{
		Name: "qwen_logs", Context: custom.ContextLog,
		Precedence: custom.PrecedenceBeforeBuiltin, Where: `resource.attributes["service.name"] == "qwen-code"`,
		Result: `attributes["event.name"] == "qwen-code.tool_call"`, CallID: `attributes["call_id"]`,
	}}
	for _, tc := range []struct {
		name   string
		custom []custom.Config
	}{{"mix/none", nil}, {"mix/acme", example.CustomDialects}, {"mix/before", before}} {
		b.Run(tc.name, func(b *testing.B) {
			w := newLogWorkload(b)
			lp := benchLogs(b, func(c *Config) {
				c.TimeoutClassification.Enabled = false
				c.CustomDialects = tc.custom
			})
			runLogBatches(b, lp, func() plog.Logs { ld, _ := w.batch(); return ld })
		})
	}
	b.Run("acme/records", func(b *testing.B) {
		src := loadLogs(b, "custom", "logs.json")
		ids := []string{"tc_01", "tc_02", "tc_03", "tc_04", "tc_05", "sess-7f3a"}
		n := uint64(0)
		lp := benchLogs(b, func(c *Config) {
			c.TimeoutClassification.Enabled = false
			c.CustomDialects = example.CustomDialects
		})
		runLogBatches(b, lp, func() plog.Logs {
			n++
			ld := plog.NewLogs()
			src.CopyTo(ld)
			rn := newRenamer(ids, n)
			forEachLog(ld, func(_ pcommon.Resource, lr plog.LogRecord) { rn.attrs(lr.Attributes()) })
			return ld
		})
	})
}

// benchLogs starts a logs processor with the default configuration changed by mutate.
func benchLogs(b *testing.B, mutate func(*Config)) interface {
	ConsumeLogs(context.Context, plog.Logs) error
} {
	b.Helper()
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	mutate(cfg)
	lp, err := f.CreateLogs(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	if err := lp.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = lp.Shutdown(context.Background()) })
	return lp
}

// runLogBatches times ConsumeLogs on batches made by next outside the timer, and reports
// ns/record.
func runLogBatches(b *testing.B, lp interface {
	ConsumeLogs(context.Context, plog.Logs) error
}, next func() plog.Logs) {
	ctx := context.Background()
	records := 0
	var spent time.Duration
	for b.Loop() {
		b.StopTimer()
		ld := next()
		records += ld.LogRecordCount()
		b.StartTimer()
		start := time.Now()
		if err := lp.ConsumeLogs(ctx, ld); err != nil {
			b.Fatal(err)
		}
		spent += time.Since(start)
	}
	b.ReportMetric(float64(spent.Nanoseconds())/float64(records), "ns/record")
}
