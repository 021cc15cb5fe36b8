// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package pairing

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Refs of the records in the companion tests.
const (
	refUse       int32 = 1
	refMain      int32 = 2
	refCompanion int32 = 3
)

func companion(id string, ms int64) Event {
	return Event{Kind: KindCompanion, Key: key(id), Time: ms * int64(time.Millisecond), Ref: refCompanion, Source: 2}
}

// resultOutcomes maps the Ref of every result record settled in res, in the batch or
// released from a hold, to its outcome.
func resultOutcomes(t *testing.T, res []Resolution, into map[int32]Outcome) {
	t.Helper()
	for _, r := range res {
		ref := r.ResultRef
		if r.ResultPayload != nil {
			ref = r.ResultPayload.(int32)
		}
		if ref < 0 {
			continue
		}
		_, seen := into[ref]
		require.False(t, seen, "record %d settled twice", ref)
		into[ref] = r.Outcome
	}
}

// TestCompanionOrderIndependent: a call's use, its main result record and its companion
// record (Claude Code's claude_code.tool and claude_code.tool.execution spans) in every
// arrival order, each in its own batch: each is its source's first record of the call, so
// both are paired, each with its own duration, every time; the call is counted once, by the
// first of them (specification section 2).
func TestCompanionOrderIndependent(t *testing.T) {
	u := use("a", 1000)
	u.Ref = refUse
	m := result("a", 3000)
	m.Ref, m.Source = refMain, 1
	c := companion("a", 2900)
	for _, order := range [][]Event{{u, m, c}, {u, c, m}, {m, u, c}, {m, c, u}, {c, u, m}, {c, m, u}} {
		name := ""
		for _, ev := range order {
			name += map[int32]string{refUse: "use", refMain: "main", refCompanion: "companion"}[ev.Ref] + "_"
		}
		t.Run(name, func(t *testing.T) {
			e, clk := newTestEngine(t, 100)
			got := map[int32]Outcome{}
			var res []Resolution
			for _, ev := range order {
				res = append(res, run(t, e, ev)...)
				clk.Advance(time.Second)
			}
			resultOutcomes(t, res, got)
			assert.Equal(t, map[int32]Outcome{refMain: OutcomePaired, refCompanion: OutcomePaired}, got)
			reports := 0
			for _, r := range res {
				ref := r.ResultRef
				if r.ResultPayload != nil {
					ref = r.ResultPayload.(int32)
				}
				want := map[int32]int64{refMain: 2000, refCompanion: 1900}[ref]
				assert.Equal(t, want, r.ElapsedMs(), "record %d: its own time minus the use's", ref)
				if r.Report {
					reports++
				}
			}
			assert.Equal(t, 1, reports, "one of the two records counts the call")
			s := e.Stats()
			assert.Equal(t, Stats{UsesSeen: 1, ResultsSeen: 1, Paired: 1, Reports: 1}, s)
			assert.Empty(t, e.Shutdown(nil))
			assert.Empty(t, e.companions)
		})
	}
}

// TestCompanionWithoutMain: a companion whose main record never comes resolves its call
// itself, when orphan_grace passes, or when a boundary, session end, eviction or shutdown
// would close the call; with no use, it is standalone or orphan like any result.
func TestCompanionWithoutMain(t *testing.T) {
	type step func(e *Engine, clk *fakeClock) []Resolution
	tick := func(d time.Duration) step {
		return func(e *Engine, clk *fakeClock) []Resolution { clk.Advance(d); return e.Tick(nil) }
	}
	proc := func(evs ...Event) step {
		return func(e *Engine, _ *fakeClock) []Resolution { return e.Process(evs, holdRef, nil) }
	}
	shutdown := func(e *Engine, _ *fakeClock) []Resolution { return e.Shutdown(nil) }
	u := use("a", 1000)
	u.Ref = refUse
	c := companion("a", 2900)
	sessionEnd := Event{Kind: KindSessionEnd, Key: key(""), Time: 5000 * int64(time.Millisecond)}
	other := use("b", 1500)
	other.Ref = 9
	for _, tc := range []struct {
		name  string
		steps []step
		want  Outcome
		stats Stats
	}{
		{"grace", []step{proc(u), proc(c), tick(testGrace)}, OutcomePaired, Stats{UsesSeen: 1, ResultsSeen: 1, Paired: 1}},
		{"companion_first_grace", []step{proc(c), proc(u), tick(testGrace)}, OutcomePaired, Stats{UsesSeen: 1, ResultsSeen: 1, Paired: 1}},
		{"session_end", []step{proc(u), proc(c), proc(sessionEnd), tick(testGrace / 2)}, OutcomePaired, Stats{UsesSeen: 1, ResultsSeen: 1, Paired: 1}},
		{"shutdown", []step{proc(u), proc(c), shutdown}, OutcomePaired, Stats{UsesSeen: 1, ResultsSeen: 1, Paired: 1}},
		{"evicted", []step{proc(u), proc(c), proc(other)}, OutcomePaired, Stats{UsesSeen: 2, ResultsSeen: 1, Paired: 1, Pending: 1}},
		{"no_use", []step{proc(c), tick(testGrace)}, OutcomeStandalone, Stats{ResultsSeen: 1, Standalone: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, clk := newTestEngine(t, 2)
			if tc.name == "evicted" {
				e, clk = newTestEngine(t, 1)
			}
			e.cfg.CloseDelay = testGrace / 4
			got := map[int32]Outcome{}
			var res []Resolution
			for _, s := range tc.steps {
				res = append(res, s(e, clk)...)
				require.NoError(t, e.Stats().CheckConservation())
			}
			resultOutcomes(t, res, got)
			assert.Equal(t, map[int32]Outcome{refCompanion: tc.want}, got)
			assert.Equal(t, tc.stats, e.Stats())
			if tc.want == OutcomePaired {
				for _, r := range res {
					if r.Outcome == OutcomePaired {
						assert.Equal(t, "use:a", r.UsePayload)
						assert.Equal(t, int64(1900), r.ElapsedMs())
					}
				}
			}
		})
	}
}

// TestCompanionRetry: a second copy of a companion (an export retry) is a duplicate of the
// same source, and the main record, its source's first, is paired too.
func TestCompanionRetry(t *testing.T) {
	e, _ := newTestEngine(t, 100)
	u := use("a", 1000)
	u.Ref = refUse
	m := result("a", 3000)
	m.Ref, m.Source = refMain, 1
	c := companion("a", 2900)
	c2 := c
	c2.Ref = 4
	var res []Resolution
	for _, ev := range []Event{u, c, c2, m} {
		res = append(res, run(t, e, ev)...)
	}
	got := map[int32]Outcome{}
	resultOutcomes(t, res, got)
	assert.Equal(t, map[int32]Outcome{refMain: OutcomePaired, refCompanion: OutcomePaired, 4: OutcomeDuplicate}, got, fmt.Sprint(res))
	for _, r := range res {
		if r.ResultRef == 4 {
			assert.True(t, r.SameSource)
		}
	}
}
