// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package distribution

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The crash test's knobs, for repeating a failing run:
//
//   - OTELCOL_AGENT_CRASH_SEED: the seed of the run (logged by every run), which picks the back
//     collector killed, the step of the deal after which it is killed and how long it stays
//     down;
//   - OTELCOL_AGENT_CRASH_KEEP: a directory (empty or new) that keeps everything the run wrote
//     (the collectors' outputs and state directories, and state-<back>-at-kill, a copy of the
//     killed collector's state directory as the kill left it), for a post-mortem.
const (
	crashSeedEnv = "OTELCOL_AGENT_CRASH_SEED"
	crashKeepEnv = "OTELCOL_AGENT_CRASH_KEEP"
)

// The crash test's time limits, twice TestScaleOutMatchesOneCollector's: after the restart the
// fronts' deliveries to the restarted back collector drift apart by more than on a machine that
// is only loaded. Each front's gRPC connection to it, refused while it was down, connects again
// after its own backoff (1s, then 1.6 times longer, ±20%), failing every export meanwhile, and
// each failed export is retried after its own interval (startScaleOut): two records of one scope
// sent through two fronts at the same instant can come back some 8s apart, more than the 6s
// orphan_grace of TestScaleOutMatchesOneCollector (in the runs: a Gemini CLI call's tool_call
// span retried after the next llm_call span by more than orphan_grace, the call closed by the
// next step and its result a duplicate). The reference runs with the same limits.
const (
	crashPairingTimeout = 20 * time.Second
	crashOrphanGrace    = 12 * time.Second
)

// crashMaxDown bounds how long the killed back collector stays down before it is started
// again (a supervisor restarting it at once, or after a while).
const crashMaxDown = 2 * time.Second

// crashRetryBound bounds how long after the restarted back collector answers the fronts may
// still deliver to it what they queued for it while it was down: the fronts' OTLP exporters
// retry a failed export after 1s ±50%, then 1.5s ±50% and so on, at most 3s (startScaleOut);
// their gRPC connections, refused while it was down, retry theirs after up to 1.6^n s.
const crashRetryBound = 10 * time.Second

// TestScaleOutSurvivesABackCrash runs the replay of TestScaleOutMatchesOneCollector through
// examples/scale-out, and kills one back collector (SIGKILL, as a crash: it writes nothing
// more) at a random moment of the deal (a step of it: a request to a front, the pause between
// logs and spans, or a chunk of transcript lines), then starts it again, after up to
// crashMaxDown, at the same addresses on the same state directory (file_storage). Specification
// section 9: a call whose use left the processor is never forgotten by a crash, and nothing that
// left is contradicted. Every call gets the outcomes (and interruption reasons) the reference
// gives it, on the back tier; every record with an outcome on the reference whose presence does
// not depend on arrival order is on the back tier (absentRecords); no record is on both back
// collectors.
//
// The back collectors export to a sink collector that is never killed (scaleOptions.sink), not
// to files of their own: what a back collector exported before the kill is in the sink, and
// only what the kill loses in the back collector itself counts against it. back.yaml is
// otherwise run as shipped. The fronts retry as startScaleOut says, and the time limits are
// crashPairingTimeout and crashOrphanGrace.
//
// Records are compared by call and by the set of outcomes of its records (byCall), and a
// record may be on the back tier more than once: a record the killed collector had sent on may
// come again, when the crash came after the send and before its sender (the front's exporter)
// saw the answer, and the front's retry gives it, on the restarted collector, the outcome its
// first delivery got (specification section 2): the same record then shows twice, with one
// outcome, which the sets hide. A second delivery that got another outcome (a `paired` result
// that came back `orphan`) adds an outcome the reference does not give the call, and fails.
func TestScaleOutSurvivesABackCrash(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(crashSeedEnv); v != "" {
		var err error
		seed, err = strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, crashSeedEnv)
	}
	t.Logf("seed %d (repeat this run with %s=%d)", seed, crashSeedEnv, seed)
	rng := rand.New(rand.NewPCG(seed, 0x70617972))
	keep := os.Getenv(crashKeepEnv)

	s := startScaleOut(t, scaleOptions{dir: keep, sink: true, pairingTimeout: crashPairingTimeout, orphanGrace: crashOrphanGrace})
	victim := s.backs[rng.IntN(2)]
	killAfter := rng.IntN(s.steps()) + 1
	down := time.Duration(rng.Int64N(int64(crashMaxDown)))
	t.Logf("%s is killed after step %d of %d of the deal and stays down %v", victim.name, killAfter, s.steps(), down)

	crashed := make(chan struct{})
	var killedAt, restartedAt time.Time
	crash := func() {
		defer close(crashed)
		victim.p.Kill()
		killedAt = time.Now()
		if keep != "" {
			// The state as the crash left it, before the restart reads and changes it.
			out, err := exec.Command("cp", "-a", filepath.Join(keep, "state-"+victim.name), filepath.Join(keep, "state-"+victim.name+"-at-kill")).CombinedOutput()
			assert.NoError(t, err, "%s", out)
		}
		time.Sleep(down)
		s.restart(victim, 2)
		s.waitReady(victim)
		restartedAt = time.Now()
	}
	step := 0
	began := time.Now()
	s.deal(func() {
		if step++; step == killAfter {
			go crash()
		}
	})
	dealt := time.Now()
	<-crashed
	t.Logf("dealt in %v; killed at %v, answering again at %v", dealt.Sub(began).Round(time.Millisecond),
		killedAt.Sub(began).Round(time.Millisecond), restartedAt.Sub(began).Round(time.Millisecond))
	// A kill before the victim's first tool record leaves nothing to restore.
	t.Logf("the restarted %s restored a state: %v", victim.name, strings.Contains(victim.p.Output(), "state restored from storage"))

	// The last of what the fronts queued for the killed collector arrives by
	// restartedAt+crashRetryBound; interrupted calls expire pairing_timeout after their use
	// arrived.
	last := dealt
	if r := restartedAt.Add(crashRetryBound); r.After(last) {
		last = r
	}
	want, got := s.settle(last.Add(crashPairingTimeout + time.Second))

	// Routes stay where they were: a record is on one back collector only. The same record
	// written twice by one of them (before the crash and again after it) is allowed; see above.
	twice := 0
	for id, g := range got[0] {
		assert.Empty(t, got[1][id], "%s: on both back collectors", id)
		if len(g) > 1 {
			twice++
		}
	}
	for _, g := range got[1] {
		if len(g) > 1 {
			twice++
		}
	}
	t.Logf("records written more than once: %d", twice)
	failed := sameCalls(t, want, got)
	// No record is lost: what the killed collector had sent on is in its output, what it had
	// not was sent again by the fronts or kept in its storage.
	absent := absentRecords(want, got)
	assert.Empty(t, absent, "records with an outcome on the reference that no back collector wrote")
	for _, id := range absent {
		failed = append(failed, "record "+id)
	}
	if len(failed) > 0 {
		t.Logf("failing calls (seed %d, %s killed after step %d, down %v): %v", seed, victim.name, killAfter, down, failed)
		if keep != "" {
			t.Logf("outputs and state kept in %s", keep)
		}
	}
}
