// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

// The batches the processor benchmarks (bench_test.go) feed: copies of the real captures
// under testdata/, renamed so that each copy's calls pair on their own.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/claudecode"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/codex"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/genai"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/transcript"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// loadTraces reads a testdata traces capture.
func loadTraces(tb testing.TB, parts ...string) ptrace.Traces {
	tb.Helper()
	td, err := golden.ReadTraces(filepath.Join(append([]string{"..", "..", "testdata"}, parts...)...))
	if err != nil {
		tb.Fatal(err)
	}
	return td
}

func loadLogs(tb testing.TB, parts ...string) plog.Logs {
	tb.Helper()
	ld, err := golden.ReadLogs(filepath.Join(append([]string{"..", "..", "testdata"}, parts...)...))
	if err != nil {
		tb.Fatal(err)
	}
	return ld
}

// renamer gives the copy n of a capture IDs of its own: every call ID and session ID in ids
// gets the suffix "-n" wherever it occurs in a string attribute or body, and trace IDs get n
// in their last 8 bytes.
type renamer struct {
	r *strings.Replacer
	n uint64
}

func newRenamer(ids []string, n uint64) renamer {
	if slices.Contains(ids, "") {
		panic("renaming the empty string")
	}
	suffix := "-" + strconv.FormatUint(n, 10)
	var pairs []string
	for _, id := range ids {
		pairs = append(pairs, id, id+suffix)
	}
	return renamer{r: strings.NewReplacer(pairs...), n: n}
}

func (r renamer) attrs(m pcommon.Map) {
	m.Range(func(_ string, v pcommon.Value) bool {
		if v.Type() == pcommon.ValueTypeStr {
			if s := v.Str(); s != "" {
				if t := r.r.Replace(s); t != s {
					v.SetStr(t)
				}
			}
		}
		return true
	})
}

func (r renamer) traceID(id pcommon.TraceID) pcommon.TraceID {
	if id.IsEmpty() {
		return id
	}
	binary.BigEndian.PutUint64(id[8:], binary.BigEndian.Uint64(id[8:])^(r.n+1))
	return id
}

// thinner decides which of the other records of a batch to keep, so that they number exactly
// want out of have, spread evenly.
type thinner struct{ want, have, seen int }

func (t *thinner) keep() bool {
	j := t.seen
	t.seen++
	if t.have <= t.want {
		return true
	}
	return (j+1)*t.want/t.have > j*t.want/t.have
}

// spanWorkload makes trace batches.
type spanWorkload struct {
	scenarios []ptrace.Traces // captures whose calls pair: copied whole
	callIDs   [][]string
	others    []ptrace.Traces // captures of other spans, used to fill
	n         uint64
}

// hasCall reports whether a record announces or resolves a call (step boundaries and
// session ends alone do not make a tool record).
func hasCall(f *dialect.Found) bool {
	for _, it := range f.Items {
		if it.Kind != pairing.KindBoundary && it.Kind != pairing.KindSessionEnd {
			return true
		}
	}
	return false
}

func isToolSpan(s ptrace.Span) bool {
	var f dialect.Found
	genai.ExtractSpan(s, &f)
	return hasCall(&f)
}

func newSpanWorkload(tb testing.TB) *spanWorkload {
	w := &spanWorkload{}
	for _, sc := range []string{"normal", "parallel"} {
		td := loadTraces(tb, "aisdk", sc, "traces.json")
		var ids []string
		forEachSpan(td, func(_ pcommon.Resource, s ptrace.Span) {
			var f dialect.Found
			genai.ExtractSpan(s, &f)
			for _, it := range f.Items {
				if it.CallID != "" && !slices.Contains(ids, it.CallID) {
					ids = append(ids, it.CallID)
				}
			}
		})
		w.scenarios = append(w.scenarios, td)
		w.callIDs = append(w.callIDs, ids)
	}
	for _, p := range [][]string{{"codex", "interrupt_sigterm", "traces.json"}, {"claude", "normal", "traces.json"}} {
		w.others = append(w.others, loadTraces(tb, p...))
	}
	return w
}

func forEachSpan(td ptrace.Traces, fn func(pcommon.Resource, ptrace.Span)) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				fn(rss.At(i).Resource(), spans.At(k))
			}
		}
	}
}

// batch returns the next batch: copies of the scenarios until benchToolShare of the batch
// are tool spans, their other spans thinned or topped up with the other captures' spans.
func (w *spanWorkload) batch() (ptrace.Traces, int) {
	td := ptrace.NewTraces()
	tools, others := 0, 0
	for k := 0; tools < int(benchToolShare*benchBatch); k++ {
		if k > benchBatch {
			panic("the scenarios hold no tool records")
		}
		i := k % len(w.scenarios)
		w.n++
		rn := newRenamer(w.callIDs[i], w.n)
		start := td.ResourceSpans().Len()
		src := w.scenarios[i].ResourceSpans()
		for r := 0; r < src.Len(); r++ {
			src.At(r).CopyTo(td.ResourceSpans().AppendEmpty())
		}
		rss := td.ResourceSpans()
		for r := start; r < rss.Len(); r++ {
			sss := rss.At(r).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				spans := sss.At(j).Spans()
				for s := 0; s < spans.Len(); s++ {
					span := spans.At(s)
					span.SetTraceID(rn.traceID(span.TraceID()))
					rn.attrs(span.Attributes())
					if isToolSpan(span) {
						tools++
					} else {
						others++
					}
				}
			}
		}
	}
	// Thin the scenarios' other spans, or top them up, to fill the batch.
	want := benchBatch - tools
	th := thinner{want: want, have: others}
	rss := td.ResourceSpans()
	for r := 0; r < rss.Len(); r++ {
		sss := rss.At(r).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			sss.At(j).Spans().RemoveIf(func(s ptrace.Span) bool { return !isToolSpan(s) && !th.keep() })
		}
	}
	for fill := want - min(want, others); fill > 0; {
		for _, o := range w.others {
			ors := o.ResourceSpans()
			for r := 0; r < ors.Len() && fill > 0; r++ {
				dst := td.ResourceSpans().AppendEmpty()
				ors.At(r).Resource().CopyTo(dst.Resource())
				osss := ors.At(r).ScopeSpans()
				for j := 0; j < osss.Len() && fill > 0; j++ {
					dss := dst.ScopeSpans().AppendEmpty()
					osss.At(j).Scope().CopyTo(dss.Scope())
					spans := osss.At(j).Spans()
					for s := 0; s < spans.Len() && fill > 0; s++ {
						spans.At(s).CopyTo(dss.Spans().AppendEmpty())
						fill--
					}
				}
			}
		}
	}
	return td, tools
}

// logWorkload makes log batches from agent log captures.
type logWorkload struct {
	scenarios []plog.Logs
	ids       [][]string
	n         uint64
}

func isToolLog(lr plog.LogRecord) bool {
	var f dialect.Found
	_ = claudecode.ExtractLog(lr, &f) || codex.ExtractLog(lr, &f)
	return hasCall(&f)
}

func newLogWorkload(tb testing.TB) *logWorkload {
	w := &logWorkload{}
	for _, p := range [][]string{{"claude", "parallel"}, {"codex", "parallel"}, {"claude", "normal"}, {"codex", "normal"}} {
		ld := loadLogs(tb, p[0], p[1], "logs.json")
		seen := map[string]bool{}
		var ids []string
		forEachLog(ld, func(_ pcommon.Resource, lr plog.LogRecord) {
			for _, k := range []string{"tool_use_id", "call_id", "session.id", "conversation.id"} {
				if v, ok := lr.Attributes().Get(k); ok && v.Str() != "" && !seen[v.Str()] {
					seen[v.Str()] = true
					ids = append(ids, v.Str())
				}
			}
		})
		w.scenarios = append(w.scenarios, ld)
		w.ids = append(w.ids, ids)
	}
	return w
}

func forEachLog(ld plog.Logs, fn func(pcommon.Resource, plog.LogRecord)) {
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				fn(rls.At(i).Resource(), lrs.At(k))
			}
		}
	}
}

// batch returns the next batch: copies of the scenarios until benchToolShare of the batch
// are tool records, with their other records thinned evenly to fill the rest.
func (w *logWorkload) batch() (plog.Logs, int) {
	ld := plog.NewLogs()
	tools, others := 0, 0
	for k := 0; tools < int(benchToolShare*benchBatch); k++ {
		if k > benchBatch {
			panic("the scenarios hold no tool records")
		}
		i := k % len(w.scenarios)
		w.n++
		rn := newRenamer(w.ids[i], w.n)
		start := ld.ResourceLogs().Len()
		src := w.scenarios[i].ResourceLogs()
		for r := 0; r < src.Len(); r++ {
			src.At(r).CopyTo(ld.ResourceLogs().AppendEmpty())
		}
		rls := ld.ResourceLogs()
		for r := start; r < rls.Len(); r++ {
			rn.attrs(rls.At(r).Resource().Attributes())
			sls := rls.At(r).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				lrs := sls.At(j).LogRecords()
				for s := 0; s < lrs.Len(); s++ {
					lr := lrs.At(s)
					lr.SetTraceID(rn.traceID(lr.TraceID()))
					rn.attrs(lr.Attributes())
					if isToolLog(lr) {
						tools++
					} else {
						others++
					}
				}
			}
		}
	}
	want := benchBatch - tools
	th := thinner{want: want, have: others}
	forEachScopeLogs(ld, func(sl plog.ScopeLogs) {
		sl.LogRecords().RemoveIf(func(lr plog.LogRecord) bool { return !isToolLog(lr) && !th.keep() })
	})
	// The captures' other records are at least 70% of a copy, so no top-up is needed; check it.
	if n := ld.LogRecordCount(); n != benchBatch {
		panic("log batch of " + strconv.Itoa(n) + " records")
	}
	return ld, tools
}

func forEachScopeLogs(ld plog.Logs, fn func(plog.ScopeLogs)) {
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			fn(sls.At(j))
		}
	}
}

// transcriptWorkload makes log batches of real Claude Code transcript lines, as the filelog
// receiver reads them: one resource, string bodies, log.file.path. Batches take the lines of
// the testdata transcripts in file order; each pass over them gets session IDs and call IDs
// of its own. The tool share is the transcripts' own.
type transcriptWorkload struct {
	lines []benchLine
	ids   []string // session IDs
	next  int
	pass  uint64
	r     *strings.Replacer
}

type benchLine struct {
	path, body string
}

func newTranscriptWorkload(tb testing.TB) *transcriptWorkload {
	w := &transcriptWorkload{}
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "transcripts", "claude-code", "*.jsonl"))
	if err != nil || len(files) == 0 {
		tb.Fatal("no transcripts", err)
	}
	sub, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "transcripts", "claude-code", "*", "subagents", "*.jsonl"))
	sessions := map[string]bool{}
	for _, f := range append(files, sub...) {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			l := sc.Text()
			var h struct {
				SessionID string `json:"sessionId"`
			}
			if json.Unmarshal([]byte(l), &h) == nil && h.SessionID != "" {
				sessions[h.SessionID] = true
			}
			w.lines = append(w.lines, benchLine{path: f, body: l})
		}
	}
	// Call IDs all start with toolu_: a prefix of its own per pass renames them all.
	for s := range sessions {
		w.ids = append(w.ids, s)
	}
	w.rename()
	return w
}

func (w *transcriptWorkload) rename() {
	p := []string{"toolu_", "toolu_" + strconv.FormatUint(w.pass, 36) + "x"}
	for _, id := range w.ids {
		p = append(p, id, id+"-"+strconv.FormatUint(w.pass, 10))
	}
	w.r = strings.NewReplacer(p...)
}

func (w *transcriptWorkload) batch() (plog.Logs, int) {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "claude-transcripts")
	lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
	lrs.EnsureCapacity(benchBatch)
	tools := 0
	now := pcommon.NewTimestampFromTime(time.Now())
	for range benchBatch {
		if w.next == len(w.lines) {
			w.next = 0
			w.pass++
			w.rename()
		}
		l := w.lines[w.next]
		w.next++
		lr := lrs.AppendEmpty()
		lr.SetObservedTimestamp(now)
		lr.Body().SetStr(w.r.Replace(l.body))
		lr.Attributes().PutStr("log.file.path", l.path)
		var f dialect.Found
		transcript.ExtractLog(lr, &f)
		if hasCall(&f) {
			tools++
		}
	}
	return ld, tools
}
