// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package pairing

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// transitionTable reads the table of transitions.go's head comment: by kind (its first
// column), the cells in the order of the header's states.
func transitionTable(t *testing.T) (states []string, rows map[string][]string) {
	t.Helper()
	src, err := os.ReadFile("transitions.go")
	require.NoError(t, err)
	cols := regexp.MustCompile(`[^\s,]+(?:, d)?(?: \(\d\))?|\(\d\)`)
	rows = map[string][]string{}
	for _, l := range strings.Split(string(src), "\n") {
		if !strings.HasPrefix(l, "//\t") {
			continue
		}
		cells := cols.FindAllString(strings.TrimPrefix(l, "//\t"), -1)
		if states == nil {
			states = cells
			continue
		}
		rows[cells[0]] = cells[1:]
	}
	return states, rows
}

// tableState names the state of the call of k as the table does.
func tableState(e *Engine, k Key) string {
	ent := e.lookup(k)
	switch {
	case ent == nil:
		return "none"
	case ent.state == statePending:
		return "pending"
	case ent.state == stateWaiting:
		return "waiting"
	case ent.state == stateResolved && ent.answered():
		return "answered"
	case ent.state == stateResolved:
		return "closed"
	}
	return "?"
}

// TestTransitionTable drives a call into each state of the table in transitions.go, applies
// each kind of event to it, and checks the cell: the event's verdict, the outcomes returned
// and the call's next state.
func TestTransitionTable(t *testing.T) {
	ms := func(n int64) int64 { return n * int64(time.Millisecond) }
	k := key("k")
	// The setups' results are of source 0; the events' of other sources.
	setups := map[string][]Event{
		"none":     nil,
		"pending":  {use("k", 1000)},
		"waiting":  {result("k", 2000)},
		"answered": {use("k", 1000), result("k", 2000)},
		"closed":   {use("k", 1000), {Kind: KindReject, Key: k, Time: ms(1500), Ref: 8}},
	}
	other := result("k", 3000)
	other.Source = 1
	echoed := echo("k", 3000)
	echoed.Source = 3
	events := map[string]Event{
		"Use":       use("k", 3000),
		"Result":    other,
		"Companion": companion("k", 3000),
		"Echo":      echoed,
		"Reject":    {Kind: KindReject, Key: k, Time: ms(3000), Ref: 7},
		"Refused":   {Kind: KindRefused, Key: k, Time: ms(3000), Ref: 7},
	}
	states, rows := transitionTable(t)
	require.Len(t, states, len(setups), "the table's states")
	require.Len(t, rows, len(events), "the table's kinds")
	for kind, cells := range rows {
		require.Contains(t, events, kind)
		require.Len(t, cells, len(states), kind)
		for i, cell := range cells {
			from := states[i]
			t.Run(kind+"/"+from, func(t *testing.T) {
				require.Contains(t, setups, from)
				e, _ := newTestEngine(t, 100)
				// Another call of the scope, so that the scope has seen a use.
				run(t, e, use("other", 500))
				if s := setups[from]; len(s) > 0 {
					run(t, e, s...)
				}
				require.Equal(t, from, tableState(e, k), "setup")
				ev := []Event{events[kind]}
				out := run(t, e, ev...)
				var outcomes []Outcome
				for _, r := range out {
					if r.Key == k {
						outcomes = append(outcomes, r.Outcome)
					}
				}
				word, _, _ := strings.Cut(cell, " ")
				released := strings.HasSuffix(word, ",")
				word = strings.TrimSuffix(word, ",")
				var want []Outcome
				var verdict Verdict
				next := from
				var reports int
				switch word {
				case "pending":
					verdict, next = VerdictPending, word
				case "repeated":
					verdict = VerdictRepeated
				case "paired":
					verdict, next, want = VerdictResolved, "answered", []Outcome{OutcomePaired}
				case "rejected":
					verdict, next, want = VerdictResolved, "closed", []Outcome{OutcomeRejected}
				case "duplicate":
					verdict, want = VerdictResolved, []Outcome{OutcomeDuplicate}
				case "report":
					verdict, want, reports = VerdictResolved, []Outcome{OutcomePaired}, 1
				case "ignored":
					verdict = VerdictIgnored
				case "held", "held+":
					verdict, next = VerdictHeld, "waiting"
				default:
					t.Fatalf("unknown cell %q", cell)
				}
				if released {
					want = append(want, OutcomeDuplicate)
				}
				got := 0
				for _, r := range out {
					if r.Report {
						got++
					}
				}
				assert.Equal(t, reports, got, "further reports")
				assert.Equal(t, verdict, ev[0].Verdict, "verdict")
				assert.ElementsMatch(t, want, outcomes, "outcomes")
				assert.Equal(t, next, tableState(e, k), "next state")
			})
		}
	}
}
