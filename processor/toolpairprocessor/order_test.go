// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"

	"github.com/otelcol-agent/otelcol-agent/internal/otlpsplit"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// The order property (specification section 2, "Arrival order"): every capture of testdata/
// is sent through one component in several delivery orders (all traces then all logs, all
// logs then all traces, and records interleaved at random over batches of random sizes, each
// signal keeping the order its exporter sent), and every record must leave with the same
// outcome, reason and duration, the records must count the same calls with each outcome
// (toolpair.call.counted, specification section 3), and the component must end with the same
// counters.

// orderCaptures lists the capture folders of testdata/ that hold traces.json, logs.json or
// both.
func orderCaptures(t *testing.T) []string {
	t.Helper()
	root := filepath.Join("..", "..", "testdata")
	var dirs []string
	agents, err := os.ReadDir(root)
	require.NoError(t, err)
	for _, a := range agents {
		if !a.IsDir() {
			continue
		}
		runs, err := os.ReadDir(filepath.Join(root, a.Name()))
		require.NoError(t, err)
		for _, r := range runs {
			dir := filepath.Join(root, a.Name(), r.Name())
			if fileExists(filepath.Join(dir, "traces.json")) || fileExists(filepath.Join(dir, "logs.json")) {
				dirs = append(dirs, dir)
			}
		}
	}
	return dirs
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// orderBatch is one batch of an order: one signal's records.
type orderBatch struct {
	td ptrace.Traces
	ld plog.Logs
}

// recordsOf splits a capture into one-record batches, in the order each signal's file holds
// them.
func recordsOf(t *testing.T, dir string) (spans []ptrace.Traces, logs []plog.Logs) {
	t.Helper()
	if p := filepath.Join(dir, "traces.json"); fileExists(p) {
		td, err := golden.ReadTraces(p)
		require.NoError(t, err)
		spans = otlpsplit.Spans(td)
	}
	if p := filepath.Join(dir, "logs.json"); fileExists(p) {
		ld, err := golden.ReadLogs(p)
		require.NoError(t, err)
		logs = otlpsplit.Logs(ld)
	}
	return spans, logs
}

// mergeSpans and mergeLogs join one-record batches into one batch.
func mergeSpans(parts []ptrace.Traces) ptrace.Traces {
	td := ptrace.NewTraces()
	for _, p := range parts {
		p.ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
	}
	return td
}

func mergeLogs(parts []plog.Logs) plog.Logs {
	ld := plog.NewLogs()
	for _, p := range parts {
		p.ResourceLogs().MoveAndAppendTo(ld.ResourceLogs())
	}
	return ld
}

// orderOf returns the deliveries of one order of a capture's records: "traces_first",
// "logs_first", or an interleaving drawn from rng (each signal's records keep their order;
// consecutive records of one signal go in batches of 1 to 8).
func orderOf(t *testing.T, dir, order string, rng *rand.Rand) []orderBatch {
	spans, logs := recordsOf(t, dir)
	switch order {
	case "traces_first":
		return []orderBatch{{td: mergeSpans(spans)}, {ld: mergeLogs(logs)}}
	case "logs_first":
		return []orderBatch{{ld: mergeLogs(logs)}, {td: mergeSpans(spans)}}
	}
	var out []orderBatch
	for len(spans)+len(logs) > 0 {
		n := 1 + rng.IntN(8)
		if len(logs) == 0 || (len(spans) > 0 && rng.IntN(2) == 0) {
			n = min(n, len(spans))
			out = append(out, orderBatch{td: mergeSpans(spans[:n])})
			spans = spans[n:]
		} else {
			n = min(n, len(logs))
			out = append(out, orderBatch{ld: mergeLogs(logs[:n])})
			logs = logs[n:]
		}
	}
	return out
}

// orderResult is what one delivery order produced: each output record's outcome, by the
// record's identity, and the component's counters.
type orderResult struct {
	records map[string][]string
	// counted sums toolpair.call.counted by outcome and reason.
	counted map[string]int64
	stats   pairing.Stats
}

// runOrder sends the deliveries through one component, lets every deadline pass, and reads
// what came out.
func runOrder(t *testing.T, ds []orderBatch) orderResult {
	b := newRig(t)
	ctx := context.Background()
	for _, d := range ds {
		if d.td != (ptrace.Traces{}) {
			require.NoError(t, b.traces.ConsumeTraces(ctx, d.td))
		}
		if d.ld != (plog.Logs{}) {
			require.NoError(t, b.logs.ConsumeLogs(ctx, d.ld))
		}
		b.advance(10 * time.Millisecond)
	}
	for range 3 {
		b.advance(time.Hour)
	}
	res := orderResult{records: map[string][]string{}, counted: map[string]int64{}, stats: b.allStats()}
	count := func(attrs pcommon.Map) {
		if n, ok := attrs.Get(synth.AttrCallCounted); ok {
			res.counted[attrString(attrs, synth.AttrOutcome)+"/"+attrString(attrs, synth.AttrInterruptReason)] += n.Int()
		}
	}
	for _, td := range b.tsink.AllTraces() {
		forEachSpan(td, func(_ pcommon.Resource, span ptrace.Span) {
			tid, sid := span.TraceID(), span.SpanID()
			id := "span " + hex.EncodeToString(tid[:]) + hex.EncodeToString(sid[:])
			res.records[id] = append(res.records[id], outcomeOf(span.Attributes()))
			count(span.Attributes())
		})
	}
	for _, ld := range b.lsink.AllLogs() {
		forEachLog(ld, func(_ pcommon.Resource, lr plog.LogRecord) {
			id := "log " + logIdentity(lr)
			res.records[id] = append(res.records[id], outcomeOf(lr.Attributes()))
			count(lr.Attributes())
		})
	}
	for _, v := range res.records {
		slices.Sort(v)
	}
	return res
}

// logIdentity names a log record by its content, leaving out what toolpair writes.
func logIdentity(lr plog.LogRecord) string {
	attrs := lr.Attributes().AsRaw()
	for k := range attrs {
		if strings.HasPrefix(k, "toolpair.") {
			delete(attrs, k)
		}
	}
	a, _ := json.Marshal(attrs)
	sum := sha256.Sum256(fmt.Appendf(nil, "%s %s", lr.Body().AsString(), a))
	name := lr.EventName()
	if v, ok := lr.Attributes().Get("event.name"); ok && name == "" {
		name = v.AsString()
	}
	return fmt.Sprintf("%d %s %x", lr.Timestamp(), name, sum[:8])
}

// attrString returns the attribute key of attrs as a string, "" when absent.
func attrString(attrs pcommon.Map, key string) string {
	if v, ok := attrs.Get(key); ok {
		return v.AsString()
	}
	return ""
}

// outcomeOf renders what toolpair wrote on a record.
func outcomeOf(attrs pcommon.Map) string {
	var parts []string
	for _, k := range []string{synth.AttrOutcome, synth.AttrInterruptReason, synth.AttrCallDurationMs, synth.AttrSynthetic} {
		if v, ok := attrs.Get(k); ok {
			parts = append(parts, k+"="+v.AsString())
		}
	}
	return strings.Join(parts, " ")
}

func TestOutcomesIndependentOfArrivalOrder(t *testing.T) {
	rounds := 3
	if testing.Short() {
		rounds = 1
	}
	for _, dir := range orderCaptures(t) {
		name, _ := filepath.Rel(filepath.Join("..", "..", "testdata"), dir)
		t.Run(name, func(t *testing.T) {
			want := runOrder(t, orderOf(t, dir, "traces_first", nil))
			check := func(order string, got orderResult) {
				t.Helper()
				for id, w := range want.records {
					require.Equal(t, w, got.records[id], "%s: record %s", order, id)
				}
				for id, g := range got.records {
					_, ok := want.records[id]
					require.True(t, ok, "%s: record %s (%v) did not come out traces first", order, id, g)
				}
				require.Equal(t, want.counted, got.counted, "%s: calls counted by the records", order)
				require.Equal(t, want.stats, got.stats, "%s: counters", order)
			}
			check("logs_first", runOrder(t, orderOf(t, dir, "logs_first", nil)))
			for seed := range rounds {
				rng := rand.New(rand.NewPCG(uint64(seed), 7))
				check(fmt.Sprintf("interleaved seed %d", seed), runOrder(t, orderOf(t, dir, "interleaved", rng)))
			}
		})
	}
}
