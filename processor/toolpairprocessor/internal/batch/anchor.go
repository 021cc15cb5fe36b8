// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package batch

import (
	"strings"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/registry"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// Anchor spans: the spans a synthetic span of a call announced only in logs can be put
// under, the turn and model-call spans the built-in dialects name (dialect.Anchors).
var (
	// anchorNames maps the exact name of an anchor span to true for a turn span, false for a
	// model-call span.
	anchorNames = map[string]bool{}
	// turnPrefixes start the names of turn spans: the whole name, or the prefix and a space.
	turnPrefixes []string
)

func init() {
	for _, e := range registry.Entries() {
		for _, n := range e.Anchors.ModelSpans {
			anchorNames[n] = false
		}
		for _, n := range e.Anchors.TurnSpans {
			anchorNames[n] = true
		}
		turnPrefixes = append(turnPrefixes, e.Anchors.TurnSpanPrefixes...)
	}
}

// AnchorKind says whether a span is a turn span, a model-call span, or neither.
func AnchorKind(s ptrace.Span) (turn, model bool) {
	name := s.Name()
	if turn, ok := anchorNames[name]; ok {
		return turn, !turn
	}
	for _, p := range turnPrefixes {
		if strings.HasPrefix(name, p) && (len(name) == len(p) || name[len(p)] == ' ') {
			return true, false
		}
	}
	return false, false
}

// Anchor is a span seen in a traces pipeline of the component, the Activity.Anchor of an
// anchor span: what a synthetic span is put under (Applier).
type Anchor struct {
	TraceID    pcommon.TraceID
	SpanID     pcommon.SpanID
	Start, End int64 // Unix ns
	Next       consumer.Traces
}

// AnchorActivity is the Activity that tells the engine of anchor span s of scope k, a turn
// span (turn true) or a model-call span, seen in the traces pipeline whose next consumer is
// next. The engine keeps the latest of each kind per scope, a span seen again (an export
// retry) replacing its earlier copy, so that a call announced only in logs (a Claude Code or
// Codex tool_decision) and interrupted gets a synthetic span in the trace of the turn it
// happened in, as well as its synthetic log record (specification section 3); see
// pairing.Engine.Anchor for the choice of span.
func AnchorActivity(k pairing.ConversationKey, s ptrace.Span, turn bool, next consumer.Traces) pairing.Activity {
	act := pairing.Activity{Kind: pairing.ActivityModelSpan, Key: k, Start: int64(s.StartTimestamp()), End: int64(s.EndTimestamp())}
	if turn {
		act.Kind = pairing.ActivityTurn
	}
	tid, sid := s.TraceID(), s.SpanID()
	copy(act.ID[:16], tid[:])
	copy(act.ID[16:], sid[:])
	act.Anchor = Anchor{TraceID: tid, SpanID: sid, Start: act.Start, End: act.End, Next: next}
	return act
}
