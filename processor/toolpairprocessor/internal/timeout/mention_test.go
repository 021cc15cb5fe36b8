// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package timeout

import (
	"math/rand/v2"

	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/stretchr/testify/require"
)

// TestMayMention: the transcript prefilter lets through every spelling MessagePattern matches,
// in any case, and the agents' other spellings ("Time-out" of "504 Gateway Time-out", OpenClaw's
// "timedOut" key); lines without one are not decoded.
func TestMayMention(t *testing.T) {
	for _, tt := range []struct {
		line string
		want bool
	}{
		{`{"error":"Request timed out."}`, true},
		{`{"error":"Request Timed Out"}`, true},
		{`{"error":"REQUEST TIMED OUT"}`, true},
		{`{"error":"timedout"}`, true},
		{`{"error":"TIMEDOUT"}`, true},
		{`{"error":"timeout"}`, true},
		{`{"error":"Timeout"}`, true},
		{`{"error":"TIMEOUT"}`, true},
		{`{"error":"TimeoutError"}`, true},
		{`{"error":"time out"}`, true},
		{`{"error":"TIME OUT"}`, true},
		{`{"error":"TimeOut"}`, true},
		{`{"error":"tIMEOUT"}`, true},
		{`{"details":{"timedOut":true}}`, true},
		{`{"details":{"failureKind":"overall-timeout"}}`, true},
		{`{"error":"504 Gateway Time-out"}`, true},
		{`{"error":"LLM idle timeout (6s): no response from model"}`, true},
		{`{"error":"context deadline exceeded"}`, true},
		{`{"error":"Deadline exceeded"}`, true},
		{`{"error":"Deadline Exceeded"}`, true},
		{`{"error":"DEADLINE EXCEEDED"}`, true},
		{`{"error":"DeadlineExceeded"}`, true},
		{`{"error":"connect ETIMEDOUT"}`, true},
		{`{"error":"timeout_ms"}`, true}, // let through, not a timeout word (MessagePattern)
		{`{"timestamp":"2026-02-12T20:23:38.286Z","type":"user"}`, false},
		{`{"content":"the deadline passed; runtime: 3s; mime output; TIMESTAMP"}`, false},
		{`{"content":"TIMESTAMP; DEADLINE"}`, false},
		{`{"content":"time"}`, false},
		{`{"content":"ime"}`, false},
		{`{"content":"deadline"}`, false},
		{``, false},
	} {
		require.Equal(t, tt.want, mayMention([]byte(tt.line)), tt.line)
		if MessagePattern.MatchString(tt.line) {
			require.True(t, tt.want, "the pattern matches %s", tt.line)
		}
	}
}

// transcriptLines reads the real Claude Code, pi and OpenClaw transcripts of testdata, one
// line each.
func transcriptLines(tb testing.TB) [][]byte {
	tb.Helper()
	var lines [][]byte
	root := filepath.Join("..", "..", "..", "..", "testdata", "transcripts")
	err := filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || filepath.Ext(path) != ".jsonl" {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			lines = append(lines, append([]byte(nil), sc.Bytes()...))
		}
		return sc.Err()
	})
	require.NoError(tb, err)
	require.NotEmpty(tb, lines)
	return lines
}

// BenchmarkMayMention runs the transcript prefilter over every line of the real transcripts
// of testdata, against a floor of one strings.Index scan of each line for a string it does
// not hold: the ratio (prefilter time / floor time, measured alternately within the
// benchmark) stays comparable on a loaded machine. Metrics: ns/line, floor-ns/line, ratio.
func BenchmarkMayMention(b *testing.B) {
	lines := transcriptLines(b)
	bytes := 0
	for _, l := range lines {
		bytes += len(l)
	}
	var sink int
	var prefilter, floor float64
	b.SetBytes(int64(bytes))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now().UnixNano()
		for _, l := range lines {
			if mayMention(l) {
				sink++
			}
		}
		mid := time.Now().UnixNano()
		for _, l := range lines {
			if strings.Index(unsafe.String(unsafe.SliceData(l), len(l)), "\x00\x01\x02") >= 0 {
				sink++
			}
		}
		end := time.Now().UnixNano()
		prefilter += float64(mid - start)
		floor += float64(end - mid)
	}
	n := float64(b.N) * float64(len(lines))
	b.ReportMetric(prefilter/n, "ns/line")
	b.ReportMetric(floor/n, "floor-ns/line")
	b.ReportMetric(prefilter/floor, "ratio")
	_ = sink
}

// TestMayMentionCoversPattern: on random strings over the letters of the pattern in both
// cases, wherever MessagePattern matches, mayMention lets the line through.
func TestMayMentionCoversPattern(t *testing.T) {
	const alphabet = "timedoutIMEDOUTxcalnXCALN -\""
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 40)
	matched := 0
	for n := 0; n < 200000; n++ {
		for i := range buf {
			buf[i] = alphabet[rng.IntN(len(alphabet))]
		}
		// Plant a spelling now and then, in a random case, standing as a word (between two
		// delimiters) or not.
		if rng.IntN(4) == 0 {
			words := []string{"timed out", "timeout", "time out", "timedout", "deadline exceeded", "deadlineexceeded", "etimedout", "timeouterror"}
			w := words[rng.IntN(len(words))]
			if rng.IntN(4) != 0 {
				w = string(" \"-"[rng.IntN(3)]) + w + string(" \"-"[rng.IntN(3)])
			}
			at := rng.IntN(len(buf) - len(w))
			for i := 0; i < len(w); i++ {
				c := w[i]
				if rng.IntN(2) == 0 && c >= 'a' && c <= 'z' {
					c -= 'a' - 'A'
				}
				buf[at+i] = c
			}
		}
		if MessagePattern.Match(buf) {
			matched++
			require.True(t, mayMention(buf), "%q", buf)
		}
	}
	require.Greater(t, matched, 10000)
}

// TestTranscriptLineUpperCase: timeout messages in capitals (specification section 4: the match is
// case-insensitive) are seen in transcript lines too.
func TestTranscriptLineUpperCase(t *testing.T) {
	for _, line := range []string{
		`{"type":"system","subtype":"api_error","timestamp":"2026-02-12T20:23:38.286Z","sessionId":"s","error":{"status":500,"message":"REQUEST TIMED OUT"}}`,
		`{"type":"system","subtype":"api_error","timestamp":"2026-02-12T20:23:38.286Z","sessionId":"s","error":{"message":"DEADLINE EXCEEDED"}}`,
		`{"type":"system","subtype":"api_error","timestamp":"2026-02-12T20:23:38.286Z","sessionId":"s","error":{"message":"upstream Deadline Exceeded"}}`,
		`{"type":"message","id":"a","timestamp":"2026-02-12T20:23:38.286Z","message":{"role":"assistant","stopReason":"error","errorMessage":"LLM IDLE TIMEOUT (6s)","timestamp":1800000000000}}`,
		`{"type":"message","id":"a","timestamp":"2026-02-12T20:23:38.286Z","message":{"role":"assistant","stopReason":"aborted","errorMessage":"Request TimedOut","timestamp":1800000000000}}`,
	} {
		r, ok := TranscriptLine(pcommon.NewValueStr(line))
		require.True(t, ok, line)
		require.True(t, r.Timeout, line)
		require.Equal(t, KindModel, r.Kind, line)
	}
}
