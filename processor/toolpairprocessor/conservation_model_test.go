// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

// The sequences of the conservation property test (conservation_test.go) and the reference
// model of their outcomes.

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

type consKind uint8

const (
	consChat        consKind = iota + 1 // span: boundary and uses
	consExec                            // span: result
	consInvokeEnd                       // span: session end of the chat spans' calls
	consInteraction                     // span: session end of the log events' calls
	consToolSpan                        // span: claude_code.tool, a result
	consExecution                       // span: claude_code.tool.execution, a companion result
	consDecision                        // log: use or rejection
	consLogResult                       // log: result
)

// consRecord is one input record.
type consRecord struct {
	id     int // written as prop.rec
	kind   consKind
	scope  int
	calls  []int // call indexes: the uses of a chat span, else the one call
	reject bool
	time   int64 // record time, Unix ns; a chat span's start (its uses are at time+5ms)
	spanID pcommon.SpanID
}

func (r *consRecord) traces() bool { return r.kind < consDecision }

// consResultKind draws the kind of a result record: an execute_tool span, a claude_code.tool
// span or a tool_result log event (one in four each), or a claude_code.tool.execution span.
func consResultKind(rng *rand.Rand) consKind {
	return [...]consKind{consExec, consToolSpan, consLogResult, consExecution}[rng.IntN(4)]
}

// consCall is one call ID.
type consCall struct {
	id     string
	scope  int
	viaLog bool // announced by a log event (else a chat span)
}

type consScenario struct {
	seed    uint64
	scopes  int
	calls   []consCall
	windows [][]consRecord
	timeout []bool // after window i, a timeout gap
}

func consTraceID(seed uint64, scope int) pcommon.TraceID {
	var id pcommon.TraceID
	binary.BigEndian.PutUint64(id[:8], seed)
	binary.BigEndian.PutUint64(id[8:], uint64(scope)+1)
	return id
}

func consAgentSpan(scope int) pcommon.SpanID {
	var id pcommon.SpanID
	binary.BigEndian.PutUint64(id[:], 0xa9e0_0000_0000_0000|uint64(scope)+1)
	return id
}

// consGenerate makes the sequence of a seed.
func consGenerate(seed uint64) *consScenario {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	sc := &consScenario{seed: seed, scopes: 1 + rng.IntN(3)}
	t := int64(1_900_000_000) * int64(time.Second)
	nextSpan := uint64(1)
	rec := 0
	newRecord := func(kind consKind, scope int) consRecord {
		t += int64(10 * time.Millisecond)
		rec++
		r := consRecord{id: rec, kind: kind, scope: scope, time: t}
		binary.BigEndian.PutUint64(r.spanID[:], nextSpan)
		nextSpan++
		return r
	}
	newCall := func(scope int, viaLog bool) int {
		sc.calls = append(sc.calls, consCall{id: "call_" + strconv.Itoa(len(sc.calls)), scope: scope, viaLog: viaLog})
		return len(sc.calls) - 1
	}
	var sent []consRecord // uses sent so far, for retries
	nWindows := 1 + rng.IntN(5)
	for w := 0; w < nWindows; w++ {
		var win []consRecord
		for range 1 + rng.IntN(7) {
			s := rng.IntN(sc.scopes)
			switch p := rng.IntN(100); {
			case p < 22: // chat span announcing new calls
				r := newRecord(consChat, s)
				for range rng.IntN(4) {
					r.calls = append(r.calls, newCall(s, false))
				}
				win = append(win, r)
				sent = append(sent, r)
			case p < 40: // tool_decision of a new call
				r := newRecord(consDecision, s)
				r.calls = []int{newCall(s, true)}
				r.reject = rng.IntN(6) == 0
				win = append(win, r)
				sent = append(sent, r)
			case p < 72: // a result of a call announced so far
				if len(sc.calls) == 0 {
					continue
				}
				c := rng.IntN(len(sc.calls))
				r := newRecord(consResultKind(rng), sc.calls[c].scope)
				r.calls = []int{c}
				win = append(win, r)
			case p < 78: // a result of a call never announced
				kind := consResultKind(rng)
				r := newRecord(kind, s)
				r.calls = []int{newCall(s, kind == consLogResult)}
				win = append(win, r)
			case p < 86: // an export retry of a use
				if len(sent) == 0 {
					continue
				}
				o := sent[rng.IntN(len(sent))]
				rec++
				o.id = rec
				win = append(win, o)
			case p < 93:
				r := newRecord(consInvokeEnd, s)
				r.spanID = consAgentSpan(s)
				win = append(win, r)
			default:
				win = append(win, newRecord(consInteraction, s))
			}
		}
		sc.windows = append(sc.windows, win)
		sc.timeout = append(sc.timeout, rng.IntN(5) == 0)
	}
	return sc
}

// consOut is what the model expects, and what a run observed.
type consOut struct {
	// results: per call, the outcomes of its result records, sorted; the outcome of a
	// companion record (claude_code.tool.execution) has the suffix "/companion".
	results map[int][]string
	// synthetic: per call, the reasons of its synthetic records in the signal that
	// announced it, sorted.
	synthetic map[int][]string
	stats     pairing.Stats
	// records: what each input record left with (outcome, reason and duration), by its id;
	// counted: the calls the records count (toolpair.call.counted), by outcome. Filled by
	// observe only.
	records map[int64]string
	counted map[string]int64
}

// consModel is the reference model: windows applied as sets. In a window, uses and
// rejections are applied first, then results, then companion results (each settles as a
// result would after every other result of the window); step boundaries and session ends wait for the
// window's end. At a window's end, the scope's boundaries and session ends apply in record
// time order, then held results are released (orphan when the scope saw a use, else
// standalone). A timeout gap then expires every pending call and forgets every resolved call;
// a scope that saw a use is remembered as such (the engine keeps a bounded memory of them,
// far larger than these scenarios).
func consModel(sc *consScenario) consOut {
	type callState struct {
		st      uint8 // 0 none, 1 pending, 2 waiting, 3 resolved
		useTime int64
		step    int // chat span record id for chat calls
		// heldCompanion: the result held (st 2) is a companion record.
		heldCompanion bool
		// reported: the kinds of result record (sources) that reported the call; answered:
		// the outcome of the report that resolved it ("" when closed without one); extra:
		// the marks of further sources' records held with the held result (specification
		// section 2: each source's first record of a call gets its own outcome).
		reported map[consKind]bool
		answered string
		extra    []string
	}
	// suffix marks the outcome of a held companion record.
	suffix := func(cs *callState) string {
		if cs.heldCompanion {
			return "/companion"
		}
		return ""
	}
	out := consOut{results: map[int][]string{}, synthetic: map[int][]string{}}
	st := make([]callState, len(sc.calls))
	usesSeen := make([]bool, sc.scopes)
	s := &out.stats
	for w, win := range sc.windows {
		var uses, results, companions, closings []consRecord
		for _, r := range win {
			switch r.kind {
			case consChat:
				uses = append(uses, r)
				closings = append(closings, r)
			case consDecision:
				uses = append(uses, r)
			case consExec, consToolSpan, consLogResult:
				results = append(results, r)
			case consExecution:
				companions = append(companions, r)
			default:
				closings = append(closings, r)
			}
		}
		for _, r := range uses {
			if len(r.calls) > 0 {
				usesSeen[r.scope] = true
			}
			for _, c := range r.calls {
				cs := &st[c]
				useTime := r.time
				if r.kind == consChat {
					useTime += int64(5 * time.Millisecond)
				}
				switch {
				case r.reject && (cs.st == 0 || cs.st == 2):
					s.UsesSeen++
					s.Rejected++
					if cs.st == 2 { // its held results: duplicates, as if they came after
						out.results[c] = append(out.results[c], "duplicate"+suffix(cs))
						s.Duplicate++
						for _, m := range cs.extra {
							out.results[c] = append(out.results[c], "duplicate"+m)
							s.ResultsSeen++
							s.Duplicate++
						}
						cs.extra = nil
					}
					cs.st = 3
				case r.reject && cs.st == 1:
					s.Rejected++
					cs.st = 3
				case cs.st == 1 || cs.st == 3:
					s.UsesRepeated++
				case cs.st == 2:
					s.UsesSeen++
					s.Paired++
					out.results[c] = append(out.results[c], "paired"+suffix(cs))
					for _, m := range cs.extra {
						out.results[c] = append(out.results[c], "paired"+m)
						s.Reports++
					}
					cs.extra = nil
					cs.st, cs.answered = 3, "paired"
				default:
					s.UsesSeen++
					*cs = callState{st: 1, useTime: useTime, step: r.id, reported: map[consKind]bool{}}
					if r.kind == consChat {
						cs.step = int(binary.BigEndian.Uint64(r.spanID[:]))
					}
				}
			}
		}
		for _, r := range append(results, companions...) {
			c := r.calls[0]
			cs := &st[c]
			if cs.reported == nil {
				cs.reported = map[consKind]bool{}
			}
			mark := ""
			if r.kind == consExecution {
				mark = "/companion"
			}
			first := !cs.reported[r.kind]
			cs.reported[r.kind] = true
			switch {
			case cs.st == 1:
				s.ResultsSeen++
				s.Paired++
				out.results[c] = append(out.results[c], "paired"+mark)
				cs.st, cs.answered = 3, "paired"
			case cs.st == 2 && first:
				cs.extra = append(cs.extra, mark) // held with the held result
			case cs.st == 3 && first && cs.answered != "":
				s.Reports++
				out.results[c] = append(out.results[c], cs.answered+mark)
			case cs.st == 2, cs.st == 3:
				s.ResultsSeen++
				s.Duplicate++
				out.results[c] = append(out.results[c], "duplicate"+mark)
			default:
				s.ResultsSeen++
				cs.st = 2
				cs.heldCompanion = r.kind == consExecution
			}
		}
		// Window end: closings in record time order.
		sort.SliceStable(closings, func(i, j int) bool { return closings[i].time < closings[j].time })
		for _, cl := range closings {
			for c := range st {
				cs := &st[c]
				call := sc.calls[c]
				if cs.st != 1 || call.scope != cl.scope || cs.useTime > cl.time {
					continue
				}
				var reason string
				switch {
				case cl.kind == consChat && !call.viaLog && cs.step != int(binary.BigEndian.Uint64(cl.spanID[:])):
					reason = "next_step"
				case cl.kind == consInvokeEnd && !call.viaLog, cl.kind == consInteraction && call.viaLog:
					reason = "session_end"
				default:
					continue
				}
				cs.st = 3
				out.synthetic[c] = append(out.synthetic[c], reason)
				if reason == "next_step" {
					s.Interrupted[pairing.ReasonNextStep]++
				} else {
					s.Interrupted[pairing.ReasonSessionEnd]++
				}
			}
		}
		release := func() {
			for c := range st {
				if st[c].st == 2 {
					st[c].st = 3
					outcome := "standalone"
					if usesSeen[sc.calls[c].scope] {
						outcome = "orphan"
						s.Orphan++
					} else {
						s.Standalone++
					}
					out.results[c] = append(out.results[c], outcome+suffix(&st[c]))
					for _, m := range st[c].extra {
						out.results[c] = append(out.results[c], outcome+m)
						s.Reports++
					}
					st[c].extra, st[c].answered = nil, outcome
				}
			}
		}
		release()
		if sc.timeout[w] {
			for c := range st {
				switch st[c].st {
				case 1:
					st[c].st = 3
					out.synthetic[c] = append(out.synthetic[c], "expired")
					s.Interrupted[pairing.ReasonExpired]++
				case 3:
					st[c] = callState{} // forgotten
				}
			}
		}
	}
	for c := range st {
		if st[c].st == 1 {
			out.synthetic[c] = append(out.synthetic[c], "shutdown")
			s.Interrupted[pairing.ReasonShutdown]++
		}
	}
	for _, m := range []map[int][]string{out.results, out.synthetic} {
		for _, v := range m {
			slices.Sort(v)
		}
	}
	return out
}
