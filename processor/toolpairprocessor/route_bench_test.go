// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// BenchmarkRoute times route mode on the processor benchmarks' workloads (batches of
// benchBatch records built from the real captures, see bench_test.go), next to pair mode on
// the same batches: ns/record is the time per span or log record.
func BenchmarkRoute(b *testing.B) {
	r := defaultRouter(b)
	perRecord := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchBatch), "ns/record")
	}
	traces := func(b *testing.B, process func(ptrace.Traces) error) {
		w := newSpanWorkload(b)
		b.ResetTimer()
		for range b.N {
			b.StopTimer()
			td, _ := w.batch()
			b.StartTimer()
			if err := process(td); err != nil {
				b.Fatal(err)
			}
		}
		perRecord(b)
	}
	logs := func(b *testing.B, next func() (plog.Logs, int), process func(plog.Logs) error) {
		b.ResetTimer()
		for range b.N {
			b.StopTimer()
			ld, _ := next()
			b.StartTimer()
			if err := process(ld); err != nil {
				b.Fatal(err)
			}
		}
		perRecord(b)
	}
	routeTraces := func(td ptrace.Traces) error { _, err := r.processTraces(context.Background(), td); return err }
	routeLogs := func(ld plog.Logs) error { _, err := r.processLogs(context.Background(), ld); return err }
	b.Run("spans/route", func(b *testing.B) { traces(b, routeTraces) })
	b.Run("spans/pair", func(b *testing.B) {
		tp, _, stop := benchComponent(b, true)
		defer stop()
		traces(b, func(td ptrace.Traces) error { return tp.ConsumeTraces(context.Background(), td) })
	})
	b.Run("logs/route", func(b *testing.B) { logs(b, newLogWorkload(b).batch, routeLogs) })
	b.Run("logs/pair", func(b *testing.B) {
		_, lp, stop := benchComponent(b, true)
		defer stop()
		logs(b, newLogWorkload(b).batch, func(ld plog.Logs) error { return lp.ConsumeLogs(context.Background(), ld) })
	})
	b.Run("transcripts/route", func(b *testing.B) { logs(b, newTranscriptWorkload(b).batch, routeLogs) })
	b.Run("transcripts/pair", func(b *testing.B) {
		_, lp, stop := benchComponent(b, true)
		defer stop()
		logs(b, newTranscriptWorkload(b).batch, func(ld plog.Logs) error { return lp.ConsumeLogs(context.Background(), ld) })
	})
}
