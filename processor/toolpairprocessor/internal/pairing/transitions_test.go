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
	case ent.state == statePendingHeld:
		return "pending+c"
	case ent.state == stateWaiting && ent.has(flagCompanion):
		return "waiting-c"
	case ent.state == stateWaiting:
		return "waiting"
	case ent.state == stateResolved:
		return "resolved"
	}
	return "?"
}

// TestTransitionTable drives a call into each state of the table in transitions.go, applies
// each kind of event to it, and checks the cell: the event's verdict, the outcomes returned
// and the call's next state.
func TestTransitionTable(t *testing.T) {
	ms := func(n int64) int64 { return n * int64(time.Millisecond) }
	k := key("k")
	setups := map[string][]Event{
		"none":      nil,
		"pending":   {use("k", 1000)},
		"pending+c": {use("k", 1000), companion("k", 2000)},
		"waiting":   {result("k", 2000)},
		"waiting-c": {companion("k", 2000)},
		"resolved":  {use("k", 1000), result("k", 2000)},
	}
	events := map[string]Event{
		"Use":       use("k", 3000),
		"Result":    result("k", 3000),
		"Companion": companion("k", 3000),
		"Echo":      echo("k", 3000),
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
				switch word {
				case "pending", "pending+c":
					verdict, next = VerdictPending, word
					if kind == "Companion" {
						verdict = VerdictHeld
					}
				case "repeated":
					verdict = VerdictRepeated
				case "paired":
					verdict, next, want = VerdictResolved, "resolved", []Outcome{OutcomePaired}
				case "rejected":
					verdict, next, want = VerdictResolved, "resolved", []Outcome{OutcomeRejected}
				case "duplicate":
					verdict, want = VerdictResolved, []Outcome{OutcomeDuplicate}
				case "ignored":
					verdict = VerdictIgnored
				case "held":
					verdict, next = VerdictHeld, "waiting"
					if kind == "Companion" {
						next = "waiting-c"
					}
				case "(4)":
					verdict, next, want = VerdictRepeated, "resolved", []Outcome{OutcomePaired}
				default:
					t.Fatalf("unknown cell %q", cell)
				}
				if released {
					want = append(want, OutcomeDuplicate)
				}
				assert.Equal(t, verdict, ev[0].Verdict, "verdict")
				assert.ElementsMatch(t, want, outcomes, "outcomes")
				assert.Equal(t, next, tableState(e, k), "next state")
			})
		}
	}
}
