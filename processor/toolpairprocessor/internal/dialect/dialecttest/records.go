package dialecttest

import (
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// SpansOf returns the spans of td in order (resource, then scope, then span). The spans refer
// into td.
func SpansOf(td ptrace.Traces) []ptrace.Span {
	var out []ptrace.Span
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				out = append(out, spans.At(k))
			}
		}
	}
	return out
}

// LogRecordsOf returns the log records of ld in order, as SpansOf does for spans.
func LogRecordsOf(ld plog.Logs) []plog.LogRecord {
	var out []plog.LogRecord
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				out = append(out, lrs.At(k))
			}
		}
	}
	return out
}

// CaptureSpans returns the spans of an OTLP JSON capture, file a path under the repository's
// testdata/ (as Testdata takes it), in order; it fails tb when the file cannot be read.
func CaptureSpans(tb testing.TB, file string) []ptrace.Span {
	tb.Helper()
	td, err := golden.ReadTraces(Testdata(file))
	if err != nil {
		tb.Fatal(err)
	}
	return SpansOf(td)
}

// CaptureLogRecords is CaptureSpans for the log records of a logs capture.
func CaptureLogRecords(tb testing.TB, file string) []plog.LogRecord {
	tb.Helper()
	ld, err := golden.ReadLogs(Testdata(file))
	if err != nil {
		tb.Fatal(err)
	}
	return LogRecordsOf(ld)
}

// SplitSpans returns one Traces per span of td, in order, each holding a copy of the span
// under copies of its resource and scope: each span as an export of its own.
func SplitSpans(td ptrace.Traces) []ptrace.Traces {
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

// SplitLogs is SplitSpans for the log records of ld.
func SplitLogs(ld plog.Logs) []plog.Logs {
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
