// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package distribution

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
)

// The tests of this file are the windows of the two-tier crash test
// (TestScaleOutSurvivesABackCrash) that lie in examples/scale-out's configuration rather than
// in the processor; processor/toolpairprocessor/crashwindow_test.go has the processor's.

// exampleConf reads one of examples/scale-out's configurations (its ${env:...} references left
// as they are).
func exampleConf(t *testing.T, name string) *confmap.Conf {
	t.Helper()
	b, err := os.ReadFile(scaleConfig(t, name))
	require.NoError(t, err)
	r, err := confmap.NewRetrievedFromYAML(b)
	require.NoError(t, err)
	c, err := r.AsConf()
	require.NoError(t, err)
	return c
}

// TestCrashWindowBackAcknowledgesOnlyWhatItExported: window "records that left toolpair are
// acknowledged before they are exported". back.yaml puts a batch processor after toolpair:
// the batch processor takes a batch into its own memory and returns at once, so the back
// collector's receiver answers the front (which forgets the records) while the records, already
// decided (toolpair wrote their resolution record before they left it: specification section
// 9), wait up to its timeout (200ms) to be exported. A kill then loses them for good: the front
// does not send them again, and the restarted back collector knows their calls as resolved.
// In the crash test, with the back killed 77ms into the deal (seed 1796299069207287681), the
// Claude Code calls toolu_mock_normal_01, toolu_mock_parallel_01/02 and toolu_mock_llm_error_01
// got no outcome at all on either back collector: their tool_result log records had paired
// (resolution records written) and sat in the batch processor, never reaching the exporters
// (the debug exporter logged only the warm-up), and their spans, after the restart, were
// duplicates of calls the records had closed (processor/toolpairprocessor/crashwindow_test.go,
// TestCrashWindowReplayedResolutionKeepsItsReports). That is the issue's "no outcome at all on
// either back: no interrupted, no synthetic record, nothing counted".
//
// Fix (examples/scale-out/back.yaml): no processor that answers before the records are exported
// after toolpair (batch, or anything with a queue of its own); batch in the exporters instead
// (sending_queue with batch, in a persistent queue: sending_queue::storage: file_storage, so that
// what the receiver acknowledged survives the kill), and the README saying why.
func TestCrashWindowBackAcknowledgesOnlyWhatItExported(t *testing.T) {
	conf := exampleConf(t, "back.yaml")
	pipelines, err := conf.Sub("service::pipelines")
	require.NoError(t, err)
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for k := range pipelines.ToStringMap() {
			if !yield(k) {
				return
			}
		}
	}) {
		var procs []string
		for _, p := range pipelines.Get(id + "::processors").([]any) {
			procs = append(procs, p.(string))
		}
		at := slices.IndexFunc(procs, func(p string) bool { return strings.Split(p, "/")[0] == "toolpair" })
		require.GreaterOrEqual(t, at, 0, "pipeline %s runs toolpair", id)
		for _, p := range procs[at+1:] {
			assert.NotEqual(t, "batch", strings.Split(p, "/")[0],
				"pipeline %s: %s after toolpair acknowledges records before they are exported; a back collector killed loses them (%v)", id, p, procs)
		}
	}
}

// TestCrashWindowFrontRetriesWithinOrphanGrace: window "the fronts' retries reorder a scope's
// records by more than orphan_grace". The records of one scope reach its back collector through
// every front collector. While the back collector is down (and for a while after it is up
// again: a gRPC connection refused waits for its own backoff before it connects again, and fails
// every export meanwhile) each front's exporter retries what it could not send, each after its
// own interval, drawn from retry_on_failure (initial_interval 5s, then 1.5 times longer each
// time, ±50%, up to max_interval, 30s by default). Two records of one scope sent by two fronts
// at the same instant come back as far apart as one interval: when that is longer than
// orphan_grace, a result whose use another front retries later is settled orphan or standalone
// (its scope seen no use yet), and a step boundary that came back first closes the use before
// its result: its result then is a duplicate and dropped. In the crash test, with orphan_grace
// 6s and the fronts' default retries (the runs): a Claude Code transcript's tool_use
// line retried by front-2 more than 6s after its tool_result line from front-1 (seed
// 1796298406054061503: the result standalone, the use written after it), 26 tool_result lines of
// a transcript retried by front-1 up to 7s after the next assistant line from front-2 (seed
// 1796298087681161917: the uses interrupted next_step, the results dropped as duplicates). The
// crash test's fronts retry sooner (startScaleOut) and its orphan_grace is 12s
// (crashOrphanGrace), which also covers the fronts' gRPC connections' own reconnect backoff.
//
// Fix (examples/scale-out/front.yaml and README.md): a retry_on_failure for the load_balancing
// exporter's otlp protocol whose max_interval, with its randomization, stays below the back
// tier's orphan_grace (for the default 30s: initial_interval 1s, max_interval 5s), and the README
// stating the rule (orphan_grace longer than the fronts' longest retry interval).
func TestCrashWindowFrontRetriesWithinOrphanGrace(t *testing.T) {
	front, back := exampleConf(t, "front.yaml"), exampleConf(t, "back.yaml")
	duration := func(c *confmap.Conf, key string, def time.Duration) time.Duration {
		v := c.Get(key)
		if v == nil {
			return def
		}
		d, err := time.ParseDuration(v.(string))
		require.NoError(t, err, key)
		return d
	}
	// The defaults of the toolpair processor (orphan_grace) and of configretry (max_interval,
	// randomization_factor).
	grace := duration(back, "processors::toolpair::orphan_grace", 30*time.Second)
	retry := "exporters::load_balancing::protocol::otlp::retry_on_failure::"
	maxInterval := duration(front, retry+"max_interval", 30*time.Second)
	randomization := 0.5
	if v := front.Get(retry + "randomization_factor"); v != nil {
		randomization = v.(float64)
	}
	longest := time.Duration(float64(maxInterval) * (1 + randomization))
	assert.Less(t, longest, grace,
		"the fronts retry up to %v (max_interval %v, ±%v) apart, longer than the back tier's orphan_grace %v", longest, maxInterval, randomization, grace)
}
