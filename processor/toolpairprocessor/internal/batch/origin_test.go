// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package batch

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// TestOriginSharedWhileEqual: a batch's announcing record gets the origin of the one before
// it when every field is the same (Claude Code's events of one session), a new origin when any
// field differs, and every origin goes to the batch's pipeline; a reset batch shares nothing
// with its earlier records.
func TestOriginSharedWhileEqual(t *testing.T) {
	res := &synth.Resource{}
	base := synth.Origin{
		Signal: synth.Logs, Resource: res, ConversationAttr: "session.id", Conversation: "s1",
		TraceID: pcommon.TraceID{1}, SpanID: pcommon.SpanID{2}, ParentSpanID: pcommon.SpanID{3},
	}
	differ := map[string]func(o *synth.Origin){
		"signal":           func(o *synth.Origin) { o.Signal = synth.Traces },
		"resource":         func(o *synth.Origin) { o.Resource = &synth.Resource{} },
		"conversation key": func(o *synth.Origin) { o.ConversationAttr = "gen_ai.conversation.id" },
		"conversation":     func(o *synth.Origin) { o.Conversation = "s2" },
		"trace":            func(o *synth.Origin) { o.TraceID = pcommon.TraceID{9} },
		"span":             func(o *synth.Origin) { o.SpanID = pcommon.SpanID{9} },
		"parent span":      func(o *synth.Origin) { o.ParentSpanID = pcommon.SpanID{9} },
		"also":             func(o *synth.Origin) { o.Also = &synth.Origin{} },
	}
	for name, change := range differ {
		t.Run(name, func(t *testing.T) {
			next := new(consumertest.LogsSink)
			b := &logBatch{Next: next}
			first := b.Origin(base)
			assert.Same(t, first, b.Origin(base), "equal origins are shared")
			o := base
			change(&o)
			other := b.Origin(o)
			assert.NotSame(t, first, other)
			assert.Equal(t, base, *withoutNext(first))
			assert.Equal(t, o, *withoutNext(other))
			assert.Same(t, next, other.Next.(*consumertest.LogsSink), "the batch's pipeline")
			assert.NotSame(t, other, b.Origin(base), "only the previous origin is shared")
			b.Reset()
			assert.NotSame(t, first, b.Origin(base), "nothing is shared across batches")
		})
	}
}

// withoutNext returns a copy of o without its pipeline.
func withoutNext(o *synth.Origin) *synth.Origin {
	c := *o
	c.Next = nil
	return &c
}

// TestPoolKeepsScratch: a scratch put back is the next one got, with what it grew; past
// GOMAXPROCS free scratches the pool drops them, and an empty pool makes new ones.
func TestPoolKeepsScratch(t *testing.T) {
	made := 0
	p := Pool[logBatch]{New: func() *logBatch { made++; return &logBatch{} }}
	b := p.Get()
	b.Events = make([]pairing.Event, 0, 1000)
	p.Put(b)
	got := p.Get()
	assert.Same(t, b, got)
	assert.Equal(t, 1000, cap(got.Events), "the scratch keeps its capacity")
	assert.Equal(t, 1, made)

	n := runtime.GOMAXPROCS(0)
	for range n + 3 {
		p.Put(&logBatch{})
	}
	assert.Len(t, p.free, n)
	for range n + 1 {
		p.Get()
	}
	assert.Equal(t, 2, made, "one made once the free ones were taken")
}
