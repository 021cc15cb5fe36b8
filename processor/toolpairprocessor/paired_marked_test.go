package toolpairprocessor

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
			b := newBothPipelines(t, nil)
			b.consumeCapture(t, dir)
			b.advance(time.Minute)
			b.shutdown()
			marked := 0
			for _, s := range tracesOut(b) {
				if strAttr(s, "toolpair.outcome") == "paired" {
					marked++
				}
			}
			for _, lr := range allLogs(b.lsink) {
				if logAttr(lr, "toolpair.outcome") == "paired" {
					marked++
				}
			}
			paired := b.shared.engine.Stats().Paired
			assert.Equal(t, int(paired), marked, "paired calls against records marked paired")
			total += marked
		})
	}
	t.Logf("%d paired calls, each marked", total)
}
