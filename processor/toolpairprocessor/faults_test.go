// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// faultTranscript is the real Claude Code transcript the faulted variants are made from.
var faultTranscript = filepath.Join("..", "..", "testdata", "transcripts", "claude-code", "4d5611e5-241a-462a-8d15-5122611a9569.jsonl")

// faultLine is what the fault tests read of a transcript line.
type faultLine struct {
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	Message   struct {
		ID      string          `json:"id"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

type faultBlock struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	ToolUseID string `json:"tool_use_id"`
}

// blocks returns the content blocks of a line (none when the content is a string).
func (l faultLine) blocks() []faultBlock {
	var bs []faultBlock
	_ = json.Unmarshal(l.Message.Content, &bs)
	return bs
}

func readTranscriptLines(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
}

func parseLine(t *testing.T, l []byte) faultLine {
	t.Helper()
	var p faultLine
	require.NoError(t, json.Unmarshal(l, &p))
	return p
}

// toolLines returns the indexes of the lines holding the tool_use and the tool_result of each
// call ID, in order of the uses.
func toolLines(t *testing.T, lines [][]byte) (ids []string, use, result map[string]int) {
	t.Helper()
	use, result = map[string]int{}, map[string]int{}
	for i, l := range lines {
		for _, b := range parseLine(t, l).blocks() {
			switch b.Type {
			case "tool_use":
				ids = append(ids, b.ID)
				use[b.ID] = i
			case "tool_result":
				result[b.ToolUseID] = i
			}
		}
	}
	return ids, use, result
}

// logRecordsOf makes one log record per line, as the filelog receiver does.
func logRecordsOf(lines [][]byte, path string) []plog.Logs {
	out := make([]plog.Logs, len(lines))
	for i, l := range lines {
		ld := plog.NewLogs()
		rl := ld.ResourceLogs().AppendEmpty()
		rl.Resource().Attributes().PutStr("service.name", "claude-transcripts")
		lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
		lr.Body().SetStr(string(l))
		lr.Attributes().PutStr("log.file.path", path)
		// As the filelog receiver does: the time the line was read, so that a line repeated
		// later in the file is another record, not the same one delivered again.
		lr.SetObservedTimestamp(pcommon.Timestamp(1_900_000_000_000_000_000 + int64(i)))
		out[i] = ld
	}
	return out
}

// batchesOf groups single-record Logs into batches: in order, 50 at a time, when rng is nil;
// else shuffled into batches of random sizes.
func batchesOf(records []plog.Logs, rng *rand.Rand) []plog.Logs {
	recs := append([]plog.Logs(nil), records...)
	size := func() int { return 50 }
	if rng != nil {
		rng.Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
		size = func() int { return 1 + rng.IntN(80) }
	}
	var out []plog.Logs
	for len(recs) > 0 {
		n := min(size(), len(recs))
		ld := plog.NewLogs()
		for _, r := range recs[:n] {
			r.ResourceLogs().MoveAndAppendTo(ld.ResourceLogs())
		}
		out = append(out, ld)
		recs = recs[n:]
	}
	return out
}

// callOutcomes runs transcript lines through one component and returns the outcome of every
// call ID ("paired", "orphan", "interrupted/next_step", ...) read from the records that
// leave, the synthetic records, and the number of records that left. The batches are all
// delivered within orphan_grace; then the clock passes pairing_timeout.
func callOutcomes(t *testing.T, lines [][]byte, rng *rand.Rand) (map[string]string, []plog.LogRecord, int, *rig) {
	t.Helper()
	b := newRig(t)
	for _, ld := range batchesOf(logRecordsOf(lines, "session.jsonl"), rng) {
		require.NoError(t, b.logs.ConsumeLogs(context.Background(), ld))
		b.advance(time.Millisecond)
	}
	b.advance(11 * time.Minute)
	out := map[string]string{}
	var synthetic []plog.LogRecord
	logs := allLogs(b.lsink)
	for _, lr := range logs {
		if lr.EventName() == "toolpair.tool_call.interrupted" {
			synthetic = append(synthetic, lr)
			id := logAttr(lr, "gen_ai.tool.call.id")
			require.NotContains(t, out, id, "two outcomes for %s", id)
			out[id] = "interrupted/" + logAttr(lr, "toolpair.interrupt.reason")
			continue
		}
		o := logAttr(lr, "toolpair.outcome")
		if o == "" {
			continue
		}
		if r := logAttr(lr, "toolpair.interrupt.reason"); r != "" {
			o += "/" + r
		}
		for _, bl := range parseLine(t, []byte(lr.Body().Str())).blocks() {
			if bl.Type == "tool_result" {
				require.NotContains(t, out, bl.ToolUseID, "two outcomes for %s", bl.ToolUseID)
				out[bl.ToolUseID] = o
			}
		}
	}
	require.NoError(t, b.stats().CheckConservation())
	return out, synthetic, len(logs), b
}

// TestFaultedTranscripts makes faulted variants of a real transcript and checks the exact
// outcome of every call (specification section 2).
func TestFaultedTranscripts(t *testing.T) {
	lines := readTranscriptLines(t, faultTranscript)
	ids, useAt, resultAt := toolLines(t, lines)
	require.Greater(t, len(ids), 60)
	victim := ids[40]
	allPaired := func() map[string]string {
		m := map[string]string{}
		for _, id := range ids {
			m[id] = "paired"
		}
		return m
	}
	without := func(i int) [][]byte {
		return append(append([][]byte{}, lines[:i]...), lines[i+1:]...)
	}

	for _, tc := range []struct {
		name  string
		lines [][]byte
		want  func(map[string]string)
		// records that leave beside the input lines and the synthetic records
		extraRecords int
	}{
		{
			name:  "a mid-history tool_result is missing",
			lines: without(resultAt[victim]),
			want:  func(m map[string]string) { m[victim] = "interrupted/next_step" },
		},
		{
			name:  "the file is cut in the middle of a tool call",
			lines: lines[:useAt[victim]+1],
			want: func(m map[string]string) {
				for _, id := range ids {
					switch {
					case useAt[id] > useAt[victim]:
						delete(m, id) // not in the file
					case resultAt[id] > useAt[victim]:
						// the victim and the parallel calls of its step: no later step in the
						// file, nothing closes them but pairing_timeout
						m[id] = "interrupted/expired"
					}
				}
			},
		},
		{
			name:         "an earlier tool_result is repeated at the tail",
			lines:        append(append([][]byte{}, lines...), lines[resultAt[victim]]),
			want:         func(map[string]string) {},
			extraRecords: -1, // the duplicate is dropped
		},
		{
			name:  "a tool_use line is missing",
			lines: without(useAt[victim]),
			want:  func(m map[string]string) { m[victim] = "orphan" },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := allPaired()
			tc.want(want)
			got, synthetic, n, b := callOutcomes(t, tc.lines, nil)
			assert.Equal(t, want, got)
			interrupted := 0
			for _, o := range want {
				if strings.HasPrefix(o, "interrupted/") {
					interrupted++
				}
			}
			assert.Len(t, synthetic, interrupted)
			assert.Equal(t, len(tc.lines)+interrupted+tc.extraRecords, n)
			s := b.stats()
			if tc.extraRecords < 0 {
				assert.Equal(t, uint64(1), s.Duplicate)
			}
		})
	}
}

// TestOutcomesDoNotDependOnArrival runs the same faulted transcript in order, shuffled into
// random batches (all within orphan_grace) and twice over: every call gets the same outcome
// and the synthetic record is the same.
func TestOutcomesDoNotDependOnArrival(t *testing.T) {
	lines := readTranscriptLines(t, faultTranscript)
	ids, _, resultAt := toolLines(t, lines)
	faulty := append(append([][]byte{}, lines[:resultAt[ids[40]]]...), lines[resultAt[ids[40]]+1:]...)
	want, wantSynth, _, _ := callOutcomes(t, faulty, nil)
	require.Len(t, wantSynth, 1)
	for seed := range uint64(5) {
		got, synth, _, _ := callOutcomes(t, faulty, rand.New(rand.NewPCG(seed, 7)))
		assert.Equal(t, want, got, "seed %d", seed)
		require.Len(t, synth, 1, "seed %d", seed)
		assert.Equal(t, wantSynth[0].Timestamp(), synth[0].Timestamp(), "seed %d: ends at the same boundary", seed)
	}
	// Twice over: the second copy changes no outcome and adds no synthetic record.
	got, synth, n, b := callOutcomes(t, append(append([][]byte{}, faulty...), faulty...), nil)
	assert.Equal(t, want, got)
	assert.Len(t, synth, 1)
	s := b.stats()
	assert.Equal(t, uint64(len(want)-1), s.Duplicate, "every repeated result is a duplicate")
	assert.Equal(t, 2*len(faulty)+1-int(s.Duplicate), n, "repeated results dropped, nothing else")
}

// TestSyntheticSpanIDsDoNotDependOnArrival replays the AI SDK capture of a call that never ran,
// split into batches differently and twice over: the same synthetic span, once.
func TestSyntheticSpanIDsDoNotDependOnArrival(t *testing.T) {
	run := func(split int, twice bool) []ptrace.Span {
		pl := newRig(t)
		feeds := 1
		if twice {
			feeds = 2
		}
		for range feeds {
			in := readCapture(t, "killed_during_tool")
			// one span per batch from index split on, the rest in one batch
			var spans []ptrace.Traces
			rss := in.ResourceSpans()
			for i := 0; i < rss.Len(); i++ {
				sss := rss.At(i).ScopeSpans()
				for j := 0; j < sss.Len(); j++ {
					ss := sss.At(j).Spans()
					for k := 0; k < ss.Len(); k++ {
						td := ptrace.NewTraces()
						nrs := td.ResourceSpans().AppendEmpty()
						rss.At(i).Resource().CopyTo(nrs.Resource())
						nss := nrs.ScopeSpans().AppendEmpty()
						ss.At(k).CopyTo(nss.Spans().AppendEmpty())
						spans = append(spans, td)
					}
				}
			}
			for i := len(spans) - 1; i >= 0; i-- { // reversed: results before uses
				if i >= split {
					require.NoError(t, pl.traces.ConsumeTraces(context.Background(), spans[i]))
				}
			}
			first := ptrace.NewTraces()
			for i := 0; i < min(split, len(spans)); i++ {
				spans[i].ResourceSpans().MoveAndAppendTo(first.ResourceSpans())
			}
			require.NoError(t, pl.traces.ConsumeTraces(context.Background(), first))
		}
		pl.advance(11 * time.Minute)
		pl.shutdown()
		return syntheticSpans(pl)
	}
	want := run(100, false)
	require.Len(t, want, 1)
	for _, c := range []struct {
		split int
		twice bool
	}{{0, false}, {2, false}, {100, true}, {1, true}} {
		got := run(c.split, c.twice)
		require.Len(t, got, 1, "%+v", c)
		assert.Equal(t, want[0].SpanID(), got[0].SpanID(), "%+v", c)
		assert.Equal(t, want[0].TraceID(), got[0].TraceID(), "%+v", c)
		assert.Equal(t, want[0].ParentSpanID(), got[0].ParentSpanID(), "%+v", c)
	}
}
