// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package custom

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
)

// acmeSpans is the span dialect of the made-up agent of examples/custom-dialect.yaml.
func acmeSpans() Config {
	return Config{
		Name:         "acme_spans",
		Context:      ContextSpan,
		Use:          `name == "acme.llm"`,
		StepBoundary: `name == "acme.llm"`,
		Calls:        `attributes["acme.llm.output"]`,
		CallsPath:    "calls",
		CallIDPath:   "call_id",
		ToolNamePath: "tool.name",
		Result:       `name == "acme.tool"`,
		SessionEnd:   `name == "acme.turn"`,
		CallID:       `attributes["acme.call_id"]`,
		ToolName:     `attributes["acme.tool_name"]`,
		Conversation: `attributes["acme.session_id"]`,
	}
}

// FuzzExtractLog: mutations of the example agent's log records, read by its log dialect,
// never panic and yield well-formed findings (dialecttest.Extract).
func FuzzExtractLog(f *testing.F) {
	dialecttest.SeedLogs(f, "custom/logs.json")
	cfg := acmeLogs()
	cfg.CallID, cfg.ToolName, cfg.Conversation = `attributes["acme.call_id"]`, `attributes["acme.tool_name"]`, `attributes["acme.session_id"]`
	d, err := New(cfg, componenttest.NewNopTelemetrySettings())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var u plog.ProtoUnmarshaler
		ld, err := u.UnmarshalLogs(data)
		if err != nil {
			return
		}
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			rl := ld.ResourceLogs().At(i)
			for j := 0; j < rl.ScopeLogs().Len(); j++ {
				sl := rl.ScopeLogs().At(j)
				for k := 0; k < sl.LogRecords().Len(); k++ {
					dialecttest.Extract(t, sl.LogRecords().At(k), func(lr plog.LogRecord, found *dialect.Found) bool {
						tc := NewLogContext(rl, sl, lr)
						defer tc.Close()
						return d.ExtractLog(context.Background(), tc, found)
					}, len(data))
				}
			}
		}
	})
}

// FuzzExtractSpan is FuzzExtractLog for the span form, whose calls are read from a JSON
// attribute.
func FuzzExtractSpan(f *testing.F) {
	dialecttest.SeedSpans(f, "custom/traces.json")
	d, err := New(acmeSpans(), componenttest.NewNopTelemetrySettings())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var u ptrace.ProtoUnmarshaler
		td, err := u.UnmarshalTraces(data)
		if err != nil {
			return
		}
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				ss := rs.ScopeSpans().At(j)
				for k := 0; k < ss.Spans().Len(); k++ {
					dialecttest.Extract(t, ss.Spans().At(k), func(s ptrace.Span, found *dialect.Found) bool {
						tc := NewSpanContext(rs, ss, s)
						defer tc.Close()
						return d.ExtractSpan(context.Background(), tc, found)
					}, len(data))
				}
			}
		}
	})
}

// FuzzCallsWildcard: calls documents read through "*.parts" never panic, every call has a
// non-empty ID, and calls_match only passes entries over: the calls read with it are a
// subsequence of those read without it, with no more malformed entries.
func FuzzCallsWildcard(f *testing.F) {
	f.Add(copilotOutput)
	f.Add(`[{"parts":[{"type":"tool_call","id":null},{"type":"text"}]},{"parts":"x"},{}]`)
	f.Add(`{"parts":[]}`)
	base := Config{CallsPath: "*.parts", CallIDPath: DefaultCallIDPath, ToolNamePath: DefaultToolNamePath}
	all, err := parsePaths(base)
	if err != nil {
		f.Fatal(err)
	}
	base.CallsMatch = map[string]string{"type": "tool_call"}
	filtered, err := parsePaths(base)
	if err != nil {
		f.Fatal(err)
	}
	read := func(p *callsPaths, doc string) ([]string, int) {
		var found dialect.Found
		var ids []string
		p.each(doc, &found, func(id, _ string) { ids = append(ids, id) })
		return ids, len(found.Malformed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		allIDs, allBad := read(&all, doc)
		ids, bad := read(&filtered, doc)
		if bad > allBad {
			t.Fatalf("calls_match added malformed entries: %d > %d", bad, allBad)
		}
		i := 0
		for _, id := range ids {
			if id == "" {
				t.Fatal("a call with an empty ID")
			}
			for i < len(allIDs) && allIDs[i] != id {
				i++
			}
			if i == len(allIDs) {
				t.Fatalf("calls_match read %q, not read without it (%v)", id, allIDs)
			}
			i++
		}
	})
}

// FuzzExtractSpanEvents is FuzzExtractSpan for the span event form: mutations of AWS Strands
// Agents' real spans, whose chat spans announce their calls in gen_ai.choice events, read by
// a spanevent dialect.
func FuzzExtractSpanEvents(f *testing.F) {
	dialecttest.SeedSpans(f, "strands/normal/traces.json")
	d, err := New(Config{
		Name: "strands_uses", Context: ContextSpanEvent,
		Use:        `name == "gen_ai.choice" and attributes["finish_reason"] == "toolUse"`,
		Result:     `name == "gen_ai.tool.message"`,
		CallID:     `attributes["id"]`,
		Calls:      `ParseJSON(attributes["message"])`,
		CallsMatch: map[string]string{"type": "toolUse"}, CallIDPath: "toolUseId",
	}, componenttest.NewNopTelemetrySettings())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var u ptrace.ProtoUnmarshaler
		td, err := u.UnmarshalTraces(data)
		if err != nil {
			return
		}
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				ss := rs.ScopeSpans().At(j)
				for k := 0; k < ss.Spans().Len(); k++ {
					dialecttest.Extract(t, ss.Spans().At(k), func(s ptrace.Span, found *dialect.Found) bool {
						return d.ExtractSpanEvents(context.Background(), rs, ss, s, found)
					}, len(data))
				}
			}
		}
	})
}
