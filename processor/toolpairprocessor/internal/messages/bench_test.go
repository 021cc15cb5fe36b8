// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package messages

import (
	"encoding/json"
	"hash/maphash"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// benchPayloads are the gen_ai.output.messages and gen_ai.input.messages values of the real
// AI SDK captures in testdata/aisdk, plus one with a 256 KiB tool response, a realistic size
// for a file read.
func benchPayloads(b *testing.B) []string {
	b.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "..", "testdata", "aisdk", "*", "traces.json"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no captures: %v", err)
	}
	var out []string
	var u ptrace.JSONUnmarshaler
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		td, err := u.UnmarshalTraces(data)
		if err != nil {
			b.Fatal(err)
		}
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			sss := rss.At(i).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				spans := sss.At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					for _, key := range []string{"gen_ai.output.messages", "gen_ai.input.messages"} {
						if v, ok := spans.At(k).Attributes().Get(key); ok {
							out = append(out, v.Str())
						}
					}
				}
			}
		}
	}
	big := `[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"read_file","arguments":{"file_path":"/x"}}]},` +
		`{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":"` + strings.Repeat(`line of a file with \"quotes\" and \\ escapes\n`, 5500) + `"}]}]`
	return append(out, big)
}

func totalBytes(ps []string) int64 {
	var n int64
	for _, p := range ps {
		n += int64(len(p))
	}
	return n
}

// benchSink keeps the counts benchPasses sums, so that no pass can be optimized away.
var benchSink int

// benchPasses times pass over every payload of benchPayloads per iteration, with the
// payloads' total size as the bytes per iteration. pass returns a count (parts or bytes
// found), summed into benchSink.
func benchPasses(b *testing.B, pass func(p string) int) {
	ps := benchPayloads(b)
	b.SetBytes(totalBytes(ps))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		for _, p := range ps {
			n += pass(p)
		}
	}
	benchSink = n
}

// BenchmarkScan measures finding the tool call parts with Scan.
func BenchmarkScan(b *testing.B) {
	benchPasses(b, func(p string) int {
		n := 0
		_ = ScanString(p, func(Part) { n++ })
		return n
	})
}

// BenchmarkDecodeEncodingJSON is the baseline: a full encoding/json decode of the same
// payloads, as a straightforward implementation would do.
func BenchmarkDecodeEncodingJSON(b *testing.B) {
	benchPasses(b, func(p string) int {
		var msgs []struct {
			Parts []map[string]any `json:"parts"`
		}
		if err := json.Unmarshal([]byte(p), &msgs); err != nil {
			b.Fatal(err)
		}
		n := 0
		for _, m := range msgs {
			for _, part := range m.Parts {
				if part["type"] == "tool_call" || part["type"] == "tool_call_response" {
					n++
				}
			}
		}
		return n
	})
}

// BenchmarkCountQuotes is the processor benchmarks' floor pass over the same payloads: one
// strings.Count of the quote byte, which the runtime vectorizes. Its speed next to
// BenchmarkScan's is the gap between passing over the bytes and finding the parts in them.
func BenchmarkCountQuotes(b *testing.B) {
	benchPasses(b, func(p string) int { return strings.Count(p, `"`) })
}

// BenchmarkHashHistory is what remembering the history already read per conversation would
// cost at least: a chat span repeats its conversation's history, and a memo of it (its length
// and a hash) must still hash the repeated prefix to know it is unchanged (an agent may
// rewrite it: compaction, edits) before skipping it. Next to BenchmarkScan, it bounds what
// such per-conversation state could save.
func BenchmarkHashHistory(b *testing.B) {
	seed := maphash.MakeSeed()
	benchPasses(b, func(p string) int { return int(maphash.String(seed, p) & 1) })
}
