// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"hash/maphash"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/internal/benchload"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/messages"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// floorPairer is the floor of the peer benchmark: the least any implementation of the
// specification must do on the peer workloads' records, with nothing else. For each record it
// reads the fields a call is told by in one pass over the record's attributes (the tenant's
// service.name once per resource), and for a GenAI chat span the tool_call parts of its output
// messages and the tool_call_response parts of its input messages with internal/messages;
// keeps each pending call under a 64-bit hash of its key (tenant, conversation, call ID),
// with its use time; on a result, finds and forgets the pending call, and remembers the
// resolved call's hash, the least that tells a later copy of its result (a duplicate) or of
// its use (a repeat) from a new call (specification section 2), among at most maxResolved
// (max_pending_calls' default), forgetting the oldest at the bound; and writes the outcome on
// the result record as toolpair does (toolpair.call.counted, toolpair.outcome,
// toolpair.call.duration_ms). It keeps no string of a batch, classifies no timeout, makes no
// synthetic record and counts no metric.
type floorPairer struct {
	seed     maphash.Seed
	pending  map[uint64]int64 // key hash -> use time, Unix ns
	resolved map[uint64]struct{}
	ring     []uint64 // resolved key hashes, oldest first once full (from next)
	next     int
	max      int
}

func newFloorPairer() *floorPairer {
	const maxResolved = 100_000 // max_pending_calls' default, the engine's bound of resolved calls
	return &floorPairer{
		seed:     maphash.MakeSeed(),
		pending:  make(map[uint64]int64),
		resolved: make(map[uint64]struct{}),
		max:      maxResolved,
	}
}

// floorKey is a call key as the floor hashes it.
type floorKey struct{ tenant, scope, id string }

func (f *floorPairer) hash(tenant, scope, id string) uint64 {
	return maphash.Comparable(f.seed, floorKey{tenant, scope, id})
}

// use notes the use of call k at t (Unix ns), unless k is pending or resolved already.
func (f *floorPairer) use(k uint64, t int64) {
	if _, ok := f.resolved[k]; ok {
		return
	}
	if _, ok := f.pending[k]; !ok {
		f.pending[k] = t
	}
}

// result resolves call k and returns its use time; ok is false when k is not pending.
func (f *floorPairer) result(k uint64) (useTime int64, ok bool) {
	useTime, ok = f.pending[k]
	if !ok {
		return 0, false
	}
	delete(f.pending, k)
	if len(f.ring) < f.max {
		f.ring = append(f.ring, k)
	} else {
		delete(f.resolved, f.ring[f.next])
		f.ring[f.next] = k
		f.next = (f.next + 1) % f.max
	}
	f.resolved[k] = struct{}{}
	return useTime, true
}

// markPaired writes the outcome of a call paired in d on its result record's attributes.
func markPaired(attrs pcommon.Map, d time.Duration) {
	attrs.EnsureCapacity(attrs.Len() + 3)
	attrs.PutInt(synth.AttrCallCounted, 1)
	attrs.PutStr(synth.AttrOutcome, "paired")
	attrs.PutInt(synth.AttrCallDurationMs, d.Milliseconds())
}

// serviceName returns the last service.name of a resource.
func serviceName(res pcommon.Resource) string {
	s := ""
	for k, v := range res.Attributes().All() {
		if k == "service.name" {
			s = v.AsString()
		}
	}
	return s
}

// consumeLogs pairs the Claude Code tool_decision and tool_result events of ld.
func (f *floorPairer) consumeLogs(ld plog.Logs) {
	const prefix = "claude_code."
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		tenant := serviceName(rl.Resource())
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for n := 0; n < lrs.Len(); n++ {
				lr := lrs.At(n)
				name := lr.EventName()
				if b := lr.Body(); name == "" && b.Type() == pcommon.ValueTypeStr {
					name = b.Str()
				}
				name, ok := strings.CutPrefix(name, prefix)
				if !ok || (name != "tool_decision" && name != "tool_result") {
					continue
				}
				var id, session, decision string
				attrs := lr.Attributes()
				for k, v := range attrs.All() {
					switch k {
					case "tool_use_id":
						id = v.Str()
					case "session.id":
						session = v.Str()
					case "decision":
						decision = v.Str()
					}
				}
				if id == "" {
					continue
				}
				k := f.hash(tenant, session, id)
				t := int64(lr.Timestamp())
				if name == "tool_decision" {
					if decision == "accept" {
						f.use(k, t)
					}
					continue
				}
				if u, ok := f.result(k); ok {
					markPaired(attrs, time.Duration(t-u))
				}
			}
		}
	}
}

// consumeTraces pairs the calls GenAI chat spans announce with their execute_tool spans.
func (f *floorPairer) consumeTraces(td ptrace.Traces) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		tenant := serviceName(rs.Resource())
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for n := 0; n < spans.Len(); n++ {
				span := spans.At(n)
				var op, conv, id string
				var out, in pcommon.Value
				attrs := span.Attributes()
				for k, v := range attrs.All() {
					switch k {
					case "gen_ai.operation.name":
						op = v.Str()
					case "gen_ai.conversation.id":
						conv = v.Str()
					case "gen_ai.tool.call.id":
						id = v.Str()
					case "gen_ai.output.messages":
						out = v
					case "gen_ai.input.messages":
						in = v
					}
				}
				end := int64(span.EndTimestamp())
				if op == "execute_tool" {
					if u, ok := f.result(f.hash(tenant, conv, id)); ok {
						markPaired(attrs, time.Duration(end-u))
					}
					continue
				}
				if out.Type() == pcommon.ValueTypeStr {
					_ = messages.ScanValue(out, func(p messages.Part) {
						if p.Type == messages.ToolCall && p.IDState == messages.IDPresent {
							f.use(f.hash(tenant, conv, p.ID), end)
						}
					})
				}
				if in.Type() == pcommon.ValueTypeStr {
					_ = messages.ScanValue(in, func(p messages.Part) {
						if p.Type == messages.ToolCallResponse && p.IDState == messages.IDPresent {
							// An echo pairs a pending call; its record is history, not marked.
							f.result(f.hash(tenant, conv, p.ID))
						}
					})
				}
			}
		}
	}
}

// peerFloor is what TestFloorPairsPeerWorkloads checks of each floor of the peer benchmark.
type peerFloor interface {
	consumeLogs(plog.Logs)
	consumeTraces(ptrace.Traces)
	pendingCalls() int
}

func (f *floorPairer) pendingCalls() int { return len(f.pending) }
func (f *specFloor) pendingCalls() int   { return len(f.pending) }

// TestFloorPairsPeerWorkloads: each floor of the peer benchmark (floorPairer, specFloor) does
// the job it stands for on its batches: every result record of two batches of each workload
// gets the paired outcome with its duration, and a batch sent twice pairs nothing the second
// time.
func TestFloorPairsPeerWorkloads(t *testing.T) {
	paired := func(attrs pcommon.Map) bool {
		v, ok := attrs.Get(synth.AttrOutcome)
		if !ok {
			return false
		}
		d, ok := attrs.Get(synth.AttrCallDurationMs)
		assert.True(t, ok, "a paired result has a duration")
		assert.Equal(t, int64(25), d.Int(), "the benchload tool time")
		return v.Str() == "paired"
	}
	logAttrs := func(ld plog.Logs) (out []pcommon.Map) {
		forEachLog(ld, func(_ pcommon.Resource, lr plog.LogRecord) { out = append(out, lr.Attributes()) })
		return out
	}
	spanAttrs := func(td ptrace.Traces) (out []pcommon.Map) {
		forEachSpan(td, func(_ pcommon.Resource, s ptrace.Span) { out = append(out, s.Attributes()) })
		return out
	}
	// Each workload feeds a new batch and a copy of it to a floor, and returns the attributes
	// of both batches' records.
	workloads := map[string]func(f peerFloor, gen *benchload.Generator) (first, again []pcommon.Map){
		"claude_code_logs": func(f peerFloor, gen *benchload.Generator) (first, again []pcommon.Map) {
			ld, cp := gen.ClaudeCodeLogs(peerCallsPerBatch), plog.NewLogs()
			ld.CopyTo(cp)
			f.consumeLogs(ld)
			f.consumeLogs(cp)
			return logAttrs(ld), logAttrs(cp)
		},
		"genai_spans": func(f peerFloor, gen *benchload.Generator) (first, again []pcommon.Map) {
			td, cp := gen.GenAISpans(peerCallsPerBatch), ptrace.NewTraces()
			td.CopyTo(cp)
			f.consumeTraces(td)
			f.consumeTraces(cp)
			return spanAttrs(td), spanAttrs(cp)
		},
	}
	for name, newFloor := range map[string]func() peerFloor{
		"floor":      func() peerFloor { return newFloorPairer() },
		"spec_floor": func() peerFloor { return newSpecFloor() },
	} {
		for wname, feed := range workloads {
			t.Run(name+"/"+wname, func(t *testing.T) {
				f := newFloor()
				gen := benchload.NewGenerator("", time.Now())
				for batch := 1; batch <= 2; batch++ {
					first, again := feed(f, gen)
					n := 0
					for _, a := range first {
						if paired(a) {
							n++
						}
					}
					require.Equal(t, peerCallsPerBatch, n, "batch %d", batch)
					for _, a := range again {
						assert.False(t, paired(a), "a repeated batch pairs nothing")
					}
				}
				assert.Zero(t, f.pendingCalls())
			})
		}
	}
}
