// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// TestEveryPairedCallMarked runs every real agent capture of testdata (traces, logs and
// transcript through one component) and checks that each call the processor counts as paired
// has its result record marked toolpair.outcome=paired: the count of paired calls equals the
// count of records that leave marked paired (in these captures no record resolves two calls).
// Gemini CLI's only result record is the next request's gen_ai.client.inference.operation.details
// record, whose input messages echo the tool's response.
func TestEveryPairedCallMarked(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("..", "..", "testdata", "*", "*"))
	require.NoError(t, err)
	total := 0
	for _, dir := range dirs {
		if filepath.Base(filepath.Dir(dir)) == "transcripts" {
			continue // several results per line: one mark per record, not per call
		}
		t.Run(filepath.Base(filepath.Dir(dir))+"/"+filepath.Base(dir), func(t *testing.T) {
			b := newRig(t)
			b.consumeCapture(t, dir)
			b.advance(time.Minute)
			b.shutdown()
			// Section 3: the record that counts each paired call is marked paired with
			// toolpair.call.counted; further sources' records are paired without it.
			marked := 0
			count := func(attrs pcommon.Map) {
				if o, _ := attrs.Get(synth.AttrOutcome); o.Str() != "paired" {
					return
				}
				if n, ok := attrs.Get(synth.AttrCallCounted); ok {
					marked += int(n.Int())
				}
			}
			for _, s := range tracesOut(b) {
				count(s.Attributes())
			}
			for _, lr := range allLogs(b.lsink) {
				count(lr.Attributes())
			}
			paired := b.stats().Paired
			assert.Equal(t, int(paired), marked, "paired calls against the calls counted by records marked paired")
			total += marked
		})
	}
	t.Logf("%d paired calls, each marked", total)
}
