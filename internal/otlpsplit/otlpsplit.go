// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package otlpsplit splits OTLP batches into one-record batches, as an agent exporting each
// record on its own would send them. Tests of the processor and of the built collector share
// it.
package otlpsplit

import (
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Spans returns one Traces per span of td, in order, each holding a copy of the span
// under copies of its resource and scope: each span as an export of its own.
func Spans(td ptrace.Traces) []ptrace.Traces {
	var out []ptrace.Traces
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				one := ptrace.NewTraces()
				rs := one.ResourceSpans().AppendEmpty()
				rss.At(i).Resource().CopyTo(rs.Resource())
				ss := rs.ScopeSpans().AppendEmpty()
				sss.At(j).Scope().CopyTo(ss.Scope())
				spans.At(k).CopyTo(ss.Spans().AppendEmpty())
				out = append(out, one)
			}
		}
	}
	return out
}

// Logs is Spans for the log records of ld.
func Logs(ld plog.Logs) []plog.Logs {
	var out []plog.Logs
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				one := plog.NewLogs()
				rl := one.ResourceLogs().AppendEmpty()
				rls.At(i).Resource().CopyTo(rl.Resource())
				sl := rl.ScopeLogs().AppendEmpty()
				sls.At(j).Scope().CopyTo(sl.Scope())
				lrs.At(k).CopyTo(sl.LogRecords().AppendEmpty())
				out = append(out, one)
			}
		}
	}
	return out
}
