// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package delivery

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

func testSpan() (ptrace.Traces, ptrace.Span) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "app")
	s := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	s.SetName("execute_tool run_shell")
	s.SetTraceID(pcommon.TraceID{1})
	s.SetSpanID(pcommon.SpanID{2})
	s.SetStartTimestamp(100)
	s.SetEndTimestamp(200)
	s.Attributes().PutStr("gen_ai.tool.call.id", "call_1")
	s.Attributes().PutInt("n", 1)
	return td, s
}

func spanID(td ptrace.Traces) ID {
	rs := td.ResourceSpans().At(0)
	ss := rs.ScopeSpans().At(0)
	return Span(Resource(rs.Resource()), Scope(ss.Scope()), ss.Spans().At(0))
}

func testLog() plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "claude-code")
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetTimestamp(1000)
	lr.SetObservedTimestamp(1001)
	lr.Body().SetStr("claude_code.tool_result")
	lr.Attributes().PutStr("tool_use_id", "toolu_1")
	lr.Attributes().PutStr("duration_ms", "12")
	return ld
}

func logID(ld plog.Logs) ID {
	rl := ld.ResourceLogs().At(0)
	sl := rl.ScopeLogs().At(0)
	return Log(Resource(rl.Resource()), Scope(sl.Scope()), sl.LogRecords().At(0))
}

// TestIDsOfTheSameRecordAgree: a record sent again, or rebuilt with its attributes in another
// order, has the ID it had; a change of any part that tells two records apart changes it.
func TestIDsOfTheSameRecordAgree(t *testing.T) {
	td, _ := testSpan()
	again := ptrace.NewTraces()
	td.CopyTo(again)
	assert.Equal(t, spanID(td), spanID(again), "a span sent again")
	assert.NotZero(t, spanID(td))

	reordered, s := testSpan()
	s.Attributes().Clear()
	s.Attributes().PutInt("n", 1)
	s.Attributes().PutStr("gen_ai.tool.call.id", "call_1")
	assert.Equal(t, spanID(td), spanID(reordered), "attributes in another order")

	for name, change := range map[string]func(ptrace.Traces, ptrace.Span){
		"span ID":   func(_ ptrace.Traces, s ptrace.Span) { s.SetSpanID(pcommon.SpanID{3}) },
		"end":       func(_ ptrace.Traces, s ptrace.Span) { s.SetEndTimestamp(201) },
		"attribute": func(_ ptrace.Traces, s ptrace.Span) { s.Attributes().PutInt("n", 2) },
		"type":      func(_ ptrace.Traces, s ptrace.Span) { s.Attributes().PutStr("n", "1") },
		"status":    func(_ ptrace.Traces, s ptrace.Span) { s.Status().SetCode(ptrace.StatusCodeError) },
		"resource": func(td ptrace.Traces, _ ptrace.Span) {
			td.ResourceSpans().At(0).Resource().Attributes().PutStr("service.name", "other")
		},
	} {
		other, s := testSpan()
		change(other, s)
		assert.NotEqual(t, spanID(td), spanID(other), name)
	}

	ld := testLog()
	ldAgain := plog.NewLogs()
	ld.CopyTo(ldAgain)
	assert.Equal(t, logID(ld), logID(ldAgain), "a log record sent again")
	for name, change := range map[string]func(plog.LogRecord){
		"observed": func(lr plog.LogRecord) { lr.SetObservedTimestamp(1002) },
		"body":     func(lr plog.LogRecord) { lr.Body().SetStr("claude_code.tool_result ") },
		"nested": func(lr plog.LogRecord) {
			lr.Body().SetEmptyMap().PutEmptyMap("a").PutStr("b", "c")
		},
		"attribute": func(lr plog.LogRecord) { lr.Attributes().PutStr("duration_ms", "13") },
	} {
		other := testLog()
		change(other.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0))
		assert.NotEqual(t, logID(ld), logID(other), name)
	}
}

// TestMemoryRemembersWithinRetentionAndBound: a decision is found until its retention passes
// or the bound pushes it out, oldest first; a later Remember keeps the place, Settle changes
// only what is remembered.
func TestMemoryRemembersWithinRetentionAndBound(t *testing.T) {
	m := New(100, 3)
	passed := Decision{Fate: FatePassed, Marks: []Mark{{Key: "toolpair.outcome", Str: "paired", Type: pcommon.ValueTypeStr}}}
	m.Remember(0, []Entry{{ID: 1, Decision: passed}, {ID: 2, Decision: Decision{Fate: FateHeld}}})
	d, ok := m.Lookup(1)
	require.True(t, ok)
	assert.Equal(t, passed, d)

	m.Settle(2, Decision{Fate: FateDropped})
	d, _ = m.Lookup(2)
	assert.Equal(t, FateDropped, d.Fate)
	m.Settle(9, passed)
	_, ok = m.Lookup(9)
	assert.False(t, ok, "settling a record not remembered remembers nothing")

	m.Remember(50, []Entry{{ID: 3, Decision: passed}, {ID: 4, Decision: passed}})
	_, ok = m.Lookup(1)
	assert.False(t, ok, "past the bound, the oldest goes first")
	assert.Equal(t, 3, m.Len())

	m.Expire(100)
	_, ok = m.Lookup(2)
	assert.False(t, ok, "past its retention")
	_, ok = m.Lookup(3)
	assert.True(t, ok)
	m.Expire(151)
	assert.Equal(t, 0, m.Len())
}

// TestMemorySnapshotRestores: what a snapshot holds comes back with its deadlines, those past
// them forgotten.
func TestMemorySnapshotRestores(t *testing.T) {
	m := New(100, 10)
	m.Remember(0, []Entry{{ID: 1, Decision: Decision{Fate: FateHeld}}})
	m.Remember(50, []Entry{{ID: 2, Decision: Decision{Fate: FateDropped}}})
	snap := m.Snapshot()
	require.Len(t, snap, 2)
	assert.Equal(t, int64(100), snap[0].Deadline)

	r := New(100, 10)
	r.Restore(120, snap)
	_, ok := r.Lookup(1)
	assert.False(t, ok)
	d, ok := r.Lookup(2)
	require.True(t, ok)
	assert.Equal(t, FateDropped, d.Fate)
}

// TestCaptureAndApplyRoundTrip: the marks captured from a record, written on a copy of it as
// it came in, make the copy's marked attributes equal the record's.
func TestCaptureAndApplyRoundTrip(t *testing.T) {
	src := pcommon.NewMap()
	src.PutStr("toolpair.outcome", "paired")
	src.PutInt("toolpair.call.duration_ms", 40)
	src.PutBool("flag", true)
	src.PutDouble("ratio", 0.5)
	src.PutStr("other", "x")
	marks := Capture(nil, src, func(k string) bool { return k != "other" })
	require.Len(t, marks, 4)
	dst := pcommon.NewMap()
	dst.PutStr("other", "x")
	Apply(dst, marks)
	assert.Equal(t, src.AsRaw(), dst.AsRaw())
}

// TestReserveThenRemember: a record's first delivery takes a place that its decision fills; a
// copy arriving before that is judged afresh and takes none; a held record released (settled)
// before its own batch remembered it as held keeps the settled decision.
func TestReserveThenRemember(t *testing.T) {
	m := New(100, 10, "toolpair.outcome")
	_, found, place := m.Reserve(0, 7)
	require.False(t, found)
	require.NotZero(t, place)
	_, found, again := m.Reserve(0, 7)
	assert.False(t, found, "its first delivery is still on its way")
	assert.Zero(t, again)
	_, ok := m.Lookup(7)
	assert.False(t, ok)
	assert.Empty(t, m.Snapshot(), "a place reserved is no decision")

	paired := Decision{Fate: FatePassed, Marks: []Mark{
		{Key: "toolpair.outcome", Str: "paired", Type: pcommon.ValueTypeStr},
		{Key: "toolpair.call.duration_ms", Num: 250, Type: pcommon.ValueTypeInt},
		{Key: "gen_ai.tool.call.id", Str: "call_x", Type: pcommon.ValueTypeStr}, // not enumerated: kept apart
	}}
	es := []Entry{{ID: 7, Place: place, Decision: paired}}
	m.Remember(1, es)
	assert.Equal(t, int64(100), es[0].Deadline, "the deadline of the reservation")
	d, found, _ := m.Reserve(2, 7)
	require.True(t, found)
	assert.Equal(t, paired, d)

	_, _, held := m.Reserve(3, 8)
	_, ok = m.Settle(8, paired) // released by its use before its batch remembered it
	require.True(t, ok)
	m.Remember(4, []Entry{{ID: 8, Place: held, Decision: Decision{Fate: FateHeld}}})
	d, _ = m.Lookup(8)
	assert.Equal(t, paired, d, "not made held again")
}
