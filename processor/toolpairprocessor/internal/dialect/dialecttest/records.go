// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package dialecttest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"go.opentelemetry.io/collector/pdata/pcommon"
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

// TranscriptLogs returns a transcript file as the filelog receiver with include_file_path
// hands it on: one resource without attributes, one string-bodied record per line (observed
// at 1.9e18 ns plus its line number), with log.file.path and log.file.name.
func TranscriptLogs(tb testing.TB, path string) plog.Logs {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for i, line := range bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n")) {
		lr := lrs.AppendEmpty()
		lr.SetObservedTimestamp(pcommon.Timestamp(1_900_000_000_000_000_000 + int64(i)))
		lr.Body().SetStr(string(line))
		lr.Attributes().PutStr("log.file.path", "/home/u/"+filepath.ToSlash(path))
		lr.Attributes().PutStr("log.file.name", filepath.Base(path))
	}
	return ld
}
