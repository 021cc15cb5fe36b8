// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package batch

import (
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/delivery"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// Spans is the Signal of spans.
type Spans struct{}

// Attributes implements Signal.
func (Spans) Attributes(s ptrace.Span) pcommon.Map { return s.Attributes() }

// NewHeld implements Signal.
func (Spans) NewHeld(next consumer.Traces, size int64, id delivery.ID, run synth.Run) Held[ptrace.Traces] {
	h := &HeldSpan{Next: next, Size: size, ID: id, Run: run}
	h.CloseLatch()
	return h
}

// CopyOut implements Signal.
func (Spans) CopyOut(td ptrace.Traces, pos Pos, s ptrace.Span) ptrace.Traces {
	rs := td.ResourceSpans().At(pos.Res)
	ss := rs.ScopeSpans().At(pos.Scope)
	out := ptrace.NewTraces()
	ors := out.ResourceSpans().AppendEmpty()
	rs.Resource().CopyTo(ors.Resource())
	ors.SetSchemaUrl(rs.SchemaUrl())
	oss := ors.ScopeSpans().AppendEmpty()
	ss.Scope().CopyTo(oss.Scope())
	oss.SetSchemaUrl(ss.SchemaUrl())
	s.CopyTo(oss.Spans().AppendEmpty())
	return out
}

// RemoveIf implements Signal.
func (Spans) RemoveIf(td ptrace.Traces, m Remover) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			k := -1
			sss.At(j).Spans().RemoveIf(func(ptrace.Span) bool {
				k++
				return m.Removes(Pos{i, j, k})
			})
		}
	}
	rss.RemoveIf(func(rs ptrace.ResourceSpans) bool {
		rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool { return ss.Spans().Len() == 0 })
		return rs.ScopeSpans().Len() == 0
	})
}

// Count implements Signal.
func (Spans) Count(td ptrace.Traces) int { return td.SpanCount() }

// Signal implements Signal.
func (Spans) Signal() synth.Signal { return synth.Traces }

// Logs is the Signal of log records.
type Logs struct{}

// Attributes implements Signal.
func (Logs) Attributes(r plog.LogRecord) pcommon.Map { return r.Attributes() }

// NewHeld implements Signal.
func (Logs) NewHeld(next consumer.Logs, size int64, id delivery.ID, run synth.Run) Held[plog.Logs] {
	h := &HeldLog{Next: next, Size: size, ID: id, Run: run}
	h.CloseLatch()
	return h
}

// CopyOut implements Signal.
func (Logs) CopyOut(ld plog.Logs, pos Pos, r plog.LogRecord) plog.Logs {
	rl := ld.ResourceLogs().At(pos.Res)
	sl := rl.ScopeLogs().At(pos.Scope)
	out := plog.NewLogs()
	orl := out.ResourceLogs().AppendEmpty()
	rl.Resource().CopyTo(orl.Resource())
	orl.SetSchemaUrl(rl.SchemaUrl())
	osl := orl.ScopeLogs().AppendEmpty()
	sl.Scope().CopyTo(osl.Scope())
	osl.SetSchemaUrl(sl.SchemaUrl())
	r.CopyTo(osl.LogRecords().AppendEmpty())
	return out
}

// RemoveIf implements Signal.
func (Logs) RemoveIf(ld plog.Logs, m Remover) {
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			k := -1
			sls.At(j).LogRecords().RemoveIf(func(plog.LogRecord) bool {
				k++
				return m.Removes(Pos{i, j, k})
			})
		}
	}
	rls.RemoveIf(func(rl plog.ResourceLogs) bool {
		rl.ScopeLogs().RemoveIf(func(sl plog.ScopeLogs) bool { return sl.LogRecords().Len() == 0 })
		return rl.ScopeLogs().Len() == 0
	})
}

// Count implements Signal.
func (Logs) Count(ld plog.Logs) int { return ld.LogRecordCount() }

// Signal implements Signal.
func (Logs) Signal() synth.Signal { return synth.Logs }
