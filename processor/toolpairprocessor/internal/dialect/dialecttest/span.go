// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package dialecttest

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
)

// The IDs of the spans NewSpan builds: its trace, itself, and its parent unless it is a root.
var (
	Trace  = pcommon.TraceID{0xaa, 1}
	Span   = pcommon.SpanID{0xbb, 2}
	Parent = pcommon.SpanID{0xcc, 3}
)

// NewSpan returns a span for a dialect's rule tables: named name, with the attributes attrs
// (as pcommon.Map.FromRaw reads them), trace ID Trace, span ID Span, parent Parent unless
// root, start 10 and end 20 (Unix ns).
func NewSpan(t testing.TB, name string, attrs map[string]any, root bool) ptrace.Span {
	t.Helper()
	s := ptrace.NewSpan()
	s.SetName(name)
	s.SetTraceID(Trace)
	s.SetSpanID(Span)
	if !root {
		s.SetParentSpanID(Parent)
	}
	s.SetStartTimestamp(10)
	s.SetEndTimestamp(20)
	require.NoError(t, s.Attributes().FromRaw(attrs))
	return s
}

// Match returns the match hash of a call of tool with the JSON arguments args, in trace Trace
// (dialect.MatchJSON, dialect.InTrace).
func Match(t testing.TB, tool, args string) uint64 {
	t.Helper()
	h, ok := dialect.MatchJSON(tool, []byte(args))
	require.True(t, ok)
	return dialect.InTrace(h, Trace)
}
