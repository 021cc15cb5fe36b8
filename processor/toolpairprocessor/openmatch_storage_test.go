// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// oneToolCall returns the chat span ("") or the tool span ("tool") of an OpenLLMetry call of
// read_file whose tool span carries no call ID, as a Traces of its own.
func oneToolCall(keep string) ptrace.Traces {
	td := toolSpanTrace([][3]string{{"c1", "read_file", `{"path":"a"}`}}, [][2]string{{"read_file", `{"args":[],"kwargs":{"path":"a"}}`}})
	td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().RemoveIf(func(s ptrace.Span) bool {
		return strAttr(s, "traceloop.span.kind") != keep
	})
	return td
}

// toolSpanOutcomes returns the outcome and call ID written on each OpenLLMetry tool span of
// spans.
func toolSpanOutcomes(spans []ptrace.Span) [][2]string {
	var got [][2]string
	for _, s := range spans {
		if strAttr(s, "traceloop.span.kind") == "tool" {
			got = append(got, [2]string{strAttr(s, "toolpair.outcome"), strAttr(s, "gen_ai.tool.call.id")})
		}
	}
	return got
}

// TestStorageHeldToolSpanWithoutCallID: a tool span without a call ID held for its use is
// stored at shutdown and, after the restart, pairs the call announced then, given the call's
// ID; a retry of it after that (the same span sent again) gets what the released span got,
// its identity stored with it (specification section 2).
func TestStorageHeldToolSpanWithoutCallID(t *testing.T) {
	only := oneToolCall
	e, clock := newMemStorage(), newTestClock()
	run1 := startRun(t, clock, e, nil)
	require.NoError(t, run1.traces.ConsumeTraces(context.Background(), only("tool")))
	run1.shutdown()
	assert.Zero(t, run1.tsink.SpanCount(), "the held span is stored, not sent")

	run2 := startRun(t, clock, e, nil)
	require.NoError(t, run2.traces.ConsumeTraces(context.Background(), only("")))
	require.NoError(t, run2.traces.ConsumeTraces(context.Background(), only("tool")))
	assert.Equal(t, [][2]string{{"paired", "c1"}, {"paired", "c1"}}, toolSpanOutcomes(run2.outSpans()))
}

// TestStorageHeldToolSpanReleasedBeforeCrash: a tool span without a call ID held at the last
// checkpoint and released since (paired by its use, or an orphan after orphan_grace) is not
// released a second time after a crash: the resolution record names it.
func TestStorageHeldToolSpanReleasedBeforeCrash(t *testing.T) {
	for name, release := range map[string]func(r *rig){
		"paired": func(r *rig) { require.NoError(t, r.traces.ConsumeTraces(context.Background(), oneToolCall(""))) },
		"orphan": func(r *rig) {
			// Another call of the scope makes it an orphan.
			require.NoError(t, r.traces.ConsumeTraces(context.Background(),
				toolSpanTrace([][3]string{{"c9", "ls", `{}`}}, nil)))
			r.advance(time.Minute)
		},
	} {
		t.Run(name, func(t *testing.T) {
			e, clock := newMemStorage(), newTestClock()
			run1 := startRun(t, clock, e, nil)
			require.NoError(t, run1.traces.ConsumeTraces(context.Background(), oneToolCall("tool")))
			run1.checkpointNow()
			release(run1)
			require.Len(t, toolSpanOutcomes(run1.outSpans()), 1)
			run1.crash()

			run2 := startRun(t, clock, e, nil)
			clock.Advance(time.Minute)
			run2.tick()
			assert.Empty(t, toolSpanOutcomes(run2.outSpans()), "released once, before the crash")
		})
	}
}
