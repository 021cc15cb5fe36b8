// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"hash/maphash"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/messages"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/timeout"
)

// specFloor is the second floor of the peer benchmark: floorPairer's work plus the least more
// that the specification requires of any implementation on the same records with the default
// configuration, each done the simplest way, with Go maps and slices:
//
//   - a Claude Code tool_result's duration_ms is read (a string of milliseconds): the call
//     starts at the earliest time its records show (section 3);
//   - every record is also read for what makes it a timeout (section 4: error.type, the HTTP
//     status code, an error or status message) and a result for the markers of its abort
//     (section 2: error.type, tool.failure_kind, status, a span's error status) and for the
//     canonical duration field to normalize (section 5), in the same one pass;
//   - each scope (conversation) is kept with whether it saw a use (orphan or standalone,
//     section 2), its latest record time (where an expired or evicted call's synthetic
//     record ends, section 3) and its current step with its count of pending calls (a step
//     boundary interrupts the pending calls of earlier steps, section 2); a step boundary
//     (a chat span) waits orphan_grace's default in a FIFO before it closes anything, so
//     that a use or result of its scope arriving after it, out of order, still pairs
//     (section 2: arrival order is irrelevant); each chat span's interval is added to its
//     scope's model calls, merged with the last when they touch within timeout.Linger (what
//     a later timeout's phase is told by, section 4); a scope is forgotten with its last call
//     or waiting boundary, its key's hash remembered in a bounded memory so that it still
//     counts as having seen a use;
//   - each pending call keeps what its synthetic record needs (section 3): its call ID and
//     tool name (copies: the batch's buffers are not kept), its use time, its step, its
//     trace, span and parent span IDs or the resource it came with (one copy per batch that
//     announces calls), in a FIFO for pairing_timeout;
//   - each resolved call keeps, within max_pending_calls' default, its scope, call ID, tool
//     name, use and result times and source: what a duplicate or repeated use is told by
//     (section 2) and what a timeout's "in flight" is computed from (section 4, by a scan
//     of the memory when a timeout comes: no per-scope index);
//   - each outcome is counted (section 7), once per batch.
//
// It classifies no timeout of these records (they have none), makes no synthetic record
// (nothing is interrupted) and keeps no record held (results follow their uses).
type specFloor struct {
	seed     maphash.Seed
	convs    map[uint64]*specConv
	last     *specConv
	pending  map[uint64]*specCall
	queue    []*specCall // pending calls in use order; resolved ones are skipped at the head
	resolved map[uint64]int
	ring     []specResolved // resolved calls, oldest at next once full
	next     int
	max      int
	used     map[uint64]struct{} // scopes forgotten after a use
	usedRing []uint64
	usedNext int
	outcomes [8]int64 // counted per outcome, added once per batch
	counted  [8]int64
	// boundaries are the step boundaries waiting to close their scope's earlier steps.
	boundaries []specBoundary
}

// specBoundary is a step boundary waiting orphan_grace in the spec floor.
type specBoundary struct {
	conv     *specConv
	step     pcommon.SpanID
	time     int64
	deadline time.Time
}

// specGrace is orphan_grace's default: how long a step boundary waits.
const specGrace = 30 * time.Second

// specConv is a scope of the spec floor.
type specConv struct {
	hash       uint64
	usesSeen   bool
	lastRecord int64
	step       pcommon.SpanID // the chat span that started the current step
	pending    int
	refs       int // pending and resolved calls, waiting boundaries
	// model is the scope's latest model call interval (Unix ns), merged with the next when
	// they touch within timeout.Linger.
	modelStart, modelEnd int64
}

// specCall is a pending call of the spec floor.
type specCall struct {
	key          uint64
	conv         *specConv
	callID, tool string
	step         pcommon.SpanID
	useTime      int64
	trace        pcommon.TraceID
	span, parent pcommon.SpanID
	resource     *pcommon.Resource
	done         bool
}

// specResolved is a resolved call of the spec floor.
type specResolved struct {
	key                 uint64
	conv                *specConv
	callID, tool        string
	useTime, resultTime int64
	source              uint8
}

func newSpecFloor() *specFloor {
	const maxResolved = 100_000 // max_pending_calls' default
	return &specFloor{
		seed:     maphash.MakeSeed(),
		convs:    make(map[uint64]*specConv),
		pending:  make(map[uint64]*specCall),
		resolved: make(map[uint64]int),
		used:     make(map[uint64]struct{}),
		max:      maxResolved,
	}
}

// conv returns the scope of (tenant, conversation), made when new, and notes record time t.
func (f *specFloor) conv(tenant, conversation string, t int64) *specConv {
	h := maphash.Comparable(f.seed, [2]string{tenant, conversation})
	if c := f.last; c != nil && c.hash == h {
		c.lastRecord = max(c.lastRecord, t)
		return c
	}
	c := f.convs[h]
	if c == nil {
		_, used := f.used[h]
		c = &specConv{hash: h, usesSeen: used}
		f.convs[h] = c
	}
	c.lastRecord = max(c.lastRecord, t)
	f.last = c
	return c
}

// boundary starts step step in c at t, a chat span from start to t: its model call is
// noted, and the boundary waits specGrace before closing the earlier steps (closeDue).
func (f *specFloor) boundary(c *specConv, step pcommon.SpanID, start, t int64) {
	if c.modelEnd > 0 && start <= c.modelEnd+int64(timeout.Linger) {
		c.modelEnd = max(c.modelEnd, t)
	} else {
		c.modelStart, c.modelEnd = start, t
	}
	c.step = step
	c.refs++
	f.boundaries = append(f.boundaries, specBoundary{conv: c, step: step, time: t, deadline: time.Now().Add(specGrace)})
}

// closeDue applies the step boundaries whose wait is over: the pending calls of their scope
// used before them in an earlier step are interrupted (next_step).
func (f *specFloor) closeDue(now time.Time) {
	n := 0
	for ; n < len(f.boundaries) && !f.boundaries[n].deadline.After(now); n++ {
		b := f.boundaries[n]
		if c := b.conv; c.pending > 0 {
			for _, p := range f.queue {
				if !p.done && p.conv == c && p.step != b.step && p.useTime <= b.time {
					p.done = true // interrupted: its synthetic record would be made here
					c.pending--
					f.release(c)
				}
			}
		}
		f.release(b.conv)
	}
	f.boundaries = f.boundaries[n:]
}

// use notes call id of c announced at t, unless it is pending or resolved already.
func (f *specFloor) use(c *specConv, k uint64, id, tool string, t int64, o *specCall) {
	c.usesSeen = true
	if _, ok := f.resolved[k]; ok {
		return
	}
	if _, ok := f.pending[k]; ok {
		return
	}
	p := *o
	p.key, p.conv, p.callID, p.tool, p.step, p.useTime = k, c, strings.Clone(id), strings.Clone(tool), c.step, t
	f.pending[k] = &p
	f.queue = append(f.queue, &p)
	c.pending++
	c.refs++
}

// result resolves call k of c at t and returns its use time; ok is false when it is not
// pending.
func (f *specFloor) result(c *specConv, k uint64, t int64, source uint8) (useTime int64, ok bool) {
	p, ok := f.pending[k]
	if !ok {
		return 0, false
	}
	delete(f.pending, k)
	p.done = true
	c.pending--
	for len(f.queue) > 0 && f.queue[0].done {
		f.queue[0] = nil
		f.queue = f.queue[1:]
	}
	r := specResolved{key: k, conv: c, callID: p.callID, tool: p.tool, useTime: p.useTime, resultTime: t, source: source}
	if len(f.ring) < f.max {
		f.ring = append(f.ring, r)
		f.resolved[k] = len(f.ring) - 1
	} else {
		old := f.ring[f.next]
		delete(f.resolved, old.key)
		f.release(old.conv)
		f.ring[f.next] = r
		f.resolved[k] = f.next
		f.next = (f.next + 1) % f.max
	}
	return p.useTime, true
}

// release drops a call's hold on its scope, forgetting the scope with its last call.
func (f *specFloor) release(c *specConv) {
	c.refs--
	if c.refs > 0 {
		return
	}
	delete(f.convs, c.hash)
	if f.last == c {
		f.last = nil
	}
	if c.usesSeen {
		if len(f.usedRing) < f.max {
			f.usedRing = append(f.usedRing, c.hash)
		} else {
			delete(f.used, f.usedRing[f.usedNext])
			f.usedRing[f.usedNext] = c.hash
			f.usedNext = (f.usedNext + 1) % f.max
		}
		f.used[c.hash] = struct{}{}
	}
}

// specTimeout reports whether message s says timeout (section 4), without regard to case.
func specTimeout(s string) bool {
	s = strings.ToLower(s)
	return strings.Contains(s, "timed out") || strings.Contains(s, "timeout") || strings.Contains(s, "time out") || strings.Contains(s, "deadline exceeded")
}

// specRecordFields are the fields the spec floor reads of a record besides those of its call.
type specRecordFields struct {
	errorType, failureKind, status, message string
	httpStatus                              int64
	durationMs                              pcommon.Value
	hasDuration                             bool
}

// read takes the fields of section 2, 4 and 5 from one attribute; it reports whether k is one.
func (r *specRecordFields) read(k string, v pcommon.Value) bool {
	switch k {
	case "error.type":
		r.errorType = v.AsString()
	case "http.response.status_code", "http.status_code":
		r.httpStatus = v.Int()
	case "tool.failure_kind":
		r.failureKind = v.AsString()
	case "status":
		r.status = v.AsString()
	case "error", "exception.message", "error.message":
		r.message = v.AsString()
	case "durationMs":
		r.durationMs, r.hasDuration = v, true
	default:
		return false
	}
	return true
}

// timeout reports whether the record is a timeout (section 4); aborted whether a result says
// its call was aborted (section 2).
func (r *specRecordFields) timeout() bool {
	switch r.errorType {
	case "timeout", "TimeoutError", "APITimeoutError", "DeadlineExceeded", "408", "504":
		return true
	}
	return r.httpStatus == 408 || r.httpStatus == 504 || (r.message != "" && specTimeout(r.message))
}

func (r *specRecordFields) aborted() bool {
	switch r.errorType {
	case "cancelled", "canceled", "aborted", "AbortError":
		return true
	}
	return r.failureKind == "cancelled" || r.status == "cancelled"
}

// batchEnd counts the batch's outcomes into the component's totals.
func (f *specFloor) batchEnd() {
	for i, n := range f.outcomes {
		f.counted[i] += n
		f.outcomes[i] = 0
	}
}

// consumeLogs does the spec floor's work on the Claude Code tool_decision and tool_result
// events of ld.
func (f *specFloor) consumeLogs(ld plog.Logs) {
	const prefix = "claude_code."
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		tenant := serviceName(rl.Resource())
		var res *pcommon.Resource
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for n := 0; n < lrs.Len(); n++ {
				lr := lrs.At(n)
				name := lr.EventName()
				if b := lr.Body(); name == "" && b.Type() == pcommon.ValueTypeStr {
					name = b.Str()
				}
				var id, session, decision, tool string
				var took pcommon.Value
				var rf specRecordFields
				attrs := lr.Attributes()
				for k, v := range attrs.All() {
					switch k {
					case "tool_use_id":
						id = v.Str()
					case "session.id":
						session = v.Str()
					case "decision":
						decision = v.Str()
					case "tool_name":
						tool = v.Str()
					case "duration_ms":
						took = v
					default:
						rf.read(k, v)
					}
				}
				t := int64(lr.Timestamp())
				start := int64(0)
				if took != (pcommon.Value{}) {
					if ms, err := strconv.ParseInt(took.AsString(), 10, 64); err == nil {
						start = t - ms*int64(time.Millisecond)
					}
				}
				c := f.conv(tenant, session, t)
				if rf.timeout() {
					f.inFlight(c, t)
				}
				name, ok := strings.CutPrefix(name, prefix)
				if !ok || id == "" || (name != "tool_decision" && name != "tool_result") {
					continue
				}
				k := f.callKey(tenant, session, id)
				if name == "tool_decision" {
					if decision == "accept" {
						if res == nil {
							r := pcommon.NewResource()
							rl.Resource().CopyTo(r)
							res = &r
						}
						f.use(c, k, id, tool, t, &specCall{resource: res})
					}
					continue
				}
				f.resultRecord(c, k, start, t, attrs, &rf, 1)
			}
		}
	}
	f.batchEnd()
}

// resultRecord resolves the call of a result record and writes its outcome.
func (f *specFloor) resultRecord(c *specConv, k uint64, start, t int64, attrs pcommon.Map, rf *specRecordFields, source uint8) {
	if rf.hasDuration {
		_ = rf.durationMs.AsString() // normalized into its mirrors, when present
	}
	u, ok := f.result(c, k, t, source)
	if !ok {
		f.outcomes[1]++ // held for orphan_grace in toolpair; counted here
		return
	}
	if rf.aborted() {
		f.outcomes[2]++
		return
	}
	f.outcomes[0]++
	if start > 0 && start < u {
		u = start // the call started at the earliest time its records show
	}
	markPaired(attrs, time.Duration(t-u))
}

// callKey hashes a call key.
func (f *specFloor) callKey(tenant, conversation, id string) uint64 {
	return maphash.Comparable(f.seed, floorKey{tenant, conversation, id})
}

// inFlight counts the calls of c in flight at t (section 4): the pending ones and the
// resolved ones, by a scan of the memory.
func (f *specFloor) inFlight(c *specConv, t int64) int {
	n := 0
	for _, p := range f.pending {
		if p.conv == c && p.useTime <= t {
			n++
		}
	}
	for _, r := range f.ring {
		if r.conv == c && r.useTime <= t && r.resultTime > t {
			n++
		}
	}
	return n
}

// consumeTraces does the spec floor's work on the GenAI chat and execute_tool spans of td.
func (f *specFloor) consumeTraces(td ptrace.Traces) {
	f.closeDue(time.Now())
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
				var rf specRecordFields
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
					default:
						rf.read(k, v)
					}
				}
				if st := span.Status(); st.Code() == ptrace.StatusCodeError {
					rf.message = st.Message()
				}
				end := int64(span.EndTimestamp())
				c := f.conv(tenant, conv, end)
				if rf.timeout() {
					f.inFlight(c, end)
				}
				if op == "execute_tool" {
					f.resultRecord(c, f.callKey(tenant, conv, id), int64(span.StartTimestamp()), end, attrs, &rf, 1)
					continue
				}
				if op != "chat" {
					continue
				}
				sid := span.SpanID()
				f.boundary(c, sid, int64(span.StartTimestamp()), end)
				if out.Type() == pcommon.ValueTypeStr {
					_ = messages.ScanValue(out, func(p messages.Part) {
						if p.Type == messages.ToolCall && p.IDState == messages.IDPresent {
							f.use(c, f.callKey(tenant, conv, p.ID), p.ID, p.Name, end,
								&specCall{trace: span.TraceID(), span: sid, parent: span.ParentSpanID()})
						}
					})
				}
				if in.Type() == pcommon.ValueTypeStr {
					_ = messages.ScanValue(in, func(p messages.Part) {
						if p.Type == messages.ToolCallResponse && p.IDState == messages.IDPresent {
							f.result(c, f.callKey(tenant, conv, p.ID), end, 2)
						}
					})
				}
			}
		}
	}
	f.batchEnd()
}
