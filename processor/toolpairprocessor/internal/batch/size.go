// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package batch

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// scalarSize is the bytes counted for a number, a boolean, a timestamp or an ID.
const scalarSize = 8

// Size implements Signal: the span's name, attributes, events, links and status message,
// with its resource's and scope's attributes, plus scalarSize per timestamp and ID.
func (Spans) Size(td ptrace.Traces, pos Pos, s ptrace.Span) int64 {
	rs := td.ResourceSpans().At(pos.Res)
	n := mapSize(rs.Resource().Attributes()) + scopeSize(rs.ScopeSpans().At(pos.Scope).Scope())
	n += int64(len(s.Name())) + mapSize(s.Attributes()) + int64(len(s.Status().Message())) + 6*scalarSize
	events := s.Events()
	for i := 0; i < events.Len(); i++ {
		ev := events.At(i)
		n += int64(len(ev.Name())) + mapSize(ev.Attributes()) + scalarSize
	}
	links := s.Links()
	for i := 0; i < links.Len(); i++ {
		n += mapSize(links.At(i).Attributes()) + 3*scalarSize
	}
	return n
}

// Size implements Signal: the log record's body, attributes and event name, with its
// resource's and scope's attributes, plus scalarSize per timestamp and ID.
func (Logs) Size(ld plog.Logs, pos Pos, r plog.LogRecord) int64 {
	rl := ld.ResourceLogs().At(pos.Res)
	n := mapSize(rl.Resource().Attributes()) + scopeSize(rl.ScopeLogs().At(pos.Scope).Scope())
	return n + valueSize(r.Body()) + mapSize(r.Attributes()) + int64(len(r.EventName())) + 5*scalarSize
}

func scopeSize(s pcommon.InstrumentationScope) int64 {
	return int64(len(s.Name())+len(s.Version())) + mapSize(s.Attributes())
}

func mapSize(m pcommon.Map) int64 {
	var n int64
	for k, v := range m.All() {
		n += int64(len(k)) + valueSize(v)
	}
	return n
}

func valueSize(v pcommon.Value) int64 {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return int64(len(v.Str()))
	case pcommon.ValueTypeBytes:
		return int64(v.Bytes().Len())
	case pcommon.ValueTypeMap:
		return mapSize(v.Map())
	case pcommon.ValueTypeSlice:
		var n int64
		s := v.Slice()
		for i := 0; i < s.Len(); i++ {
			n += valueSize(s.At(i))
		}
		return n
	}
	return scalarSize
}
