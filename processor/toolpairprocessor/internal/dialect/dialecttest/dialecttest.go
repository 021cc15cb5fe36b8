// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package dialecttest helps test the dialect extractors: it builds the spans of their rule
// tables (NewSpan, Match) and fuzzes them with the real captures in the repository's
// testdata/ as seeds. A fuzz input is an OTLP protobuf request (the bytes a
// collector receives); seeds hold one record each, with its resource and scope, so that the
// fuzzer mutates real attribute shapes, value types and timestamps.
package dialecttest

import (
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/internal/otlpsplit"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// Testdata returns the path of a file or pattern under the repository's testdata/.
func Testdata(parts ...string) string {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "..", "testdata")
	return filepath.Join(append([]string{root}, parts...)...)
}

func glob(tb testing.TB, pattern string) []string {
	tb.Helper()
	files, err := filepath.Glob(Testdata(pattern))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no testdata matches %s: %v", pattern, err)
	}
	return files
}

// seedsPerShape bounds the seeds of one record shape (event or span name): the fuzzer
// measures the coverage of every seed before it mutates, and copies of one shape add little.
const seedsPerShape = 2

// SeedLogs adds a seed per log record shape of the OTLP JSON captures matching the testdata
// patterns (for example "claude/*/logs.json"): each of the first seedsPerShape records of each
// event name (the event name, else the event.name attribute, else the body).
func SeedLogs(f *testing.F, patterns ...string) {
	f.Helper()
	var m plog.ProtoMarshaler
	shapes := map[string]int{}
	for _, p := range patterns {
		for _, file := range glob(f, p) {
			ld, err := golden.ReadLogs(file)
			if err != nil {
				f.Fatal(err)
			}
			for _, one := range otlpsplit.Logs(ld) {
				lr := one.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
				shape := lr.EventName()
				if v, ok := lr.Attributes().Get("event.name"); ok && shape == "" {
					shape = v.AsString()
				}
				if shape == "" {
					shape = lr.Body().AsString()
				}
				if shapes[shape]++; shapes[shape] > seedsPerShape {
					continue
				}
				data, err := m.MarshalLogs(one)
				if err != nil {
					f.Fatal(err)
				}
				f.Add(data)
			}
		}
	}
}

// SeedSpans adds a seed per span shape of the OTLP JSON captures matching the testdata
// patterns: each of the first seedsPerShape spans of each span name.
func SeedSpans(f *testing.F, patterns ...string) {
	f.Helper()
	var m ptrace.ProtoMarshaler
	shapes := map[string]int{}
	for _, p := range patterns {
		for _, file := range glob(f, p) {
			td, err := golden.ReadTraces(file)
			if err != nil {
				f.Fatal(err)
			}
			for _, one := range otlpsplit.Spans(td) {
				name := one.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Name()
				if shapes[name]++; shapes[name] > seedsPerShape {
					continue
				}
				data, err := m.MarshalTraces(one)
				if err != nil {
					f.Fatal(err)
				}
				f.Add(data)
			}
		}
	}
}

// LogRecords decodes a fuzz input; ok is false when it is not a valid OTLP logs request.
func LogRecords(data []byte) (records []plog.LogRecord, ok bool) {
	var u plog.ProtoUnmarshaler
	ld, err := u.UnmarshalLogs(data)
	if err != nil {
		return nil, false
	}
	return LogRecordsOf(ld), true
}

// Spans decodes a fuzz input; ok is false when it is not a valid OTLP traces request.
func Spans(data []byte) (spans []ptrace.Span, ok bool) {
	var u ptrace.ProtoUnmarshaler
	td, err := u.UnmarshalTraces(data)
	if err != nil {
		return nil, false
	}
	return SpansOf(td), true
}

// CheckFound fails t when what a dialect found in an input of inputLen bytes is not
// well-formed: an item other than a step boundary, session end or match without a call ID, a
// match with a call ID, an item other than a match marked Aborted, an item
// of no known kind, or more items and malformed reasons than the input could describe (each
// needs at least a few bytes of it: an extractor must never multiply its input).
func CheckFound(t *testing.T, f *dialect.Found, inputLen int) {
	t.Helper()
	for _, it := range f.Items {
		if it.Abort && it.Kind != pairing.KindMatch {
			t.Fatalf("%v item marked aborted: only a match is", it.Kind)
		}
		switch it.Kind {
		case pairing.KindBoundary, pairing.KindSessionEnd:
		case pairing.KindUse, pairing.KindResult, pairing.KindEcho, pairing.KindReject, pairing.KindAbort, pairing.KindCompanion, pairing.KindRefused:
			if it.CallID == "" {
				t.Fatalf("%v item without a call ID", it.Kind)
			}
		case pairing.KindMatch:
			if it.CallID != "" {
				t.Fatalf("match item with call ID %q", it.CallID)
			}
		default:
			t.Fatalf("item of unknown kind %d", it.Kind)
		}
	}
	if n := len(f.Items) + len(f.Malformed); n > 1+inputLen/4 {
		t.Fatalf("%d items and malformed reasons from %d bytes of input", n, inputLen)
	}
}

// Extract runs extract on rec twice and fails t unless the first run's findings are
// well-formed (CheckFound, for an input of inputLen bytes), a record extract does not claim
// yields nothing, and the second run claims and finds exactly what the first did (an
// extractor reads its record, never changes it). It returns the first run's claim and
// findings.
func Extract[R any](t *testing.T, rec R, extract func(R, *dialect.Found) bool, inputLen int) (bool, *dialect.Found) {
	t.Helper()
	var first, second dialect.Found
	claimed := extract(rec, &first)
	CheckFound(t, &first, inputLen)
	if !claimed && !first.Empty() {
		t.Fatal("a record not claimed yielded items")
	}
	if extract(rec, &second) != claimed || !slices.Equal(first.Items, second.Items) || !slices.Equal(first.Malformed, second.Malformed) {
		t.Fatal("a second extraction of the same record differs")
	}
	return claimed, &first
}

// FuzzLogs is the fuzz function of a log extractor: every record of an input that is a
// valid OTLP logs request goes through Extract.
func FuzzLogs(f *testing.F, extract func(plog.LogRecord, *dialect.Found) bool) {
	f.Fuzz(func(t *testing.T, data []byte) {
		records, ok := LogRecords(data)
		if !ok {
			return
		}
		for _, lr := range records {
			Extract(t, lr, extract, len(data))
		}
	})
}

// FuzzSpans is the fuzz function of span extractors: check runs on every span of an input
// that is a valid OTLP traces request, with the input's length for Extract.
func FuzzSpans(f *testing.F, check func(t *testing.T, s ptrace.Span, inputLen int)) {
	f.Fuzz(func(t *testing.T, data []byte) {
		spans, ok := Spans(data)
		if !ok {
			return
		}
		for _, s := range spans {
			check(t, s, len(data))
		}
	})
}
