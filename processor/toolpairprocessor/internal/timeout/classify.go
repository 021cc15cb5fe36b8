// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package timeout

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/registry"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// Attributes written on timeout records (specification section 4).
const (
	// AttrPhase is toolpair.timeout.phase: tool_execution, provider, compaction or unknown.
	AttrPhase = "toolpair.timeout.phase"
	// AttrActiveTools is toolpair.timeout.active_tools (int): the tool calls of the record's
	// conversation in flight at its instant.
	AttrActiveTools = "toolpair.timeout.active_tools"
	// AttrActiveToolName is toolpair.timeout.active_tool.name: the tool of the most recently
	// started call in flight (written only when its name is known).
	AttrActiveToolName = "toolpair.timeout.active_tool.name"
	// AttrActiveToolCallID is toolpair.timeout.active_tool.call_id.
	AttrActiveToolCallID = "toolpair.timeout.active_tool.call_id"
	// AttrActiveToolElapsed is toolpair.timeout.active_tool.elapsed_ms (int, ms): the
	// record's end minus the call's announcement or start, truncated.
	AttrActiveToolElapsed = "toolpair.timeout.active_tool.elapsed_ms"
)

// Linger is how long after its end a model call or compaction still counts as in flight for
// a turn-level timeout (pairing.Config.Linger): the timeout error of a model call ends the
// records of the step, turn and agent that wait on it within milliseconds (0.5 ms for the
// Vercel AI SDK, 9 ms for Claude Code in the corpus captures).
const Linger = time.Second

// Classifier classifies the timeout records of a component against what the engine's
// conversations were doing: their tool calls, and the model calls and compactions the
// batches report as pairing.Activity.
type Classifier struct {
	// Names recognises timeout records, model calls and compactions.
	Names *Names
	// counted is told the phase of each record classified.
	counted func(context.Context, Phase)
}

// NewClassifier returns the classifier recognising compactions by the span names and event
// names given (regular expressions, see NewNames), telling counted each phase it writes.
func NewClassifier(compactionSpans, compactionEvents []string, counted func(context.Context, Phase)) (*Classifier, error) {
	names, err := NewNames(compactionSpans, compactionEvents)
	if err != nil {
		return nil, err
	}
	return &Classifier{Names: names, counted: counted}, nil
}

// Relevant reports whether the classifier needs record rec: a timeout record, a model call
// or a compaction.
func Relevant(rec Record) bool {
	return rec.Timeout || rec.Kind == KindModel || rec.Kind == KindCompaction
}

// Pending is a timeout record of a batch, classified once the engine has processed the
// batch's events: Attrs are the record's attributes, where the classification is written;
// Key its conversation.
type Pending struct {
	Attrs pcommon.Map
	Rec   Record
	Key   pairing.ConversationKey
}

// Classify writes the phase and the calls in flight on each pending record, as e's
// conversations show them, and counts it.
func (c *Classifier) Classify(ctx context.Context, e *pairing.Engine, pending []Pending) {
	for i := range pending {
		p := &pending[i]
		at := p.Rec.End
		if p.Rec.Kind == KindTool && at > 0 {
			// A tool record's instant is just before its own end, so its own call, resolved
			// at that end, is counted and is the active tool.
			at--
		}
		f := e.InFlightAt(p.Key, at)
		phase := Classify(p.Rec.Kind, f)
		write(p.Attrs, phase, f, p.Rec.End)
		c.counted(ctx, phase)
	}
}

// write writes the specification section 4 attributes; the active tool's elapsed time runs
// to end, the record's end (Unix ns).
func write(attrs pcommon.Map, phase Phase, snap pairing.InFlight, end int64) {
	attrs.PutStr(AttrPhase, phase.String())
	attrs.PutInt(AttrActiveTools, int64(snap.Tools))
	if snap.Tools == 0 {
		return
	}
	if snap.Latest.Tool != "" {
		attrs.PutStr(AttrActiveToolName, snap.Latest.Tool)
	}
	attrs.PutStr(AttrActiveToolCallID, snap.Latest.CallID)
	attrs.PutInt(AttrActiveToolElapsed, (end-snap.Latest.Start)/int64(time.Millisecond))
}

// fileConversations are the FileScope functions of the built-in dialects, in trial order.
var fileConversations = func() []func(pcommon.Map) string {
	var out []func(pcommon.Map) string
	for _, e := range registry.Entries() {
		if e.FileConversation != nil {
			out = append(out, e.FileConversation)
		}
	}
	return out
}()

// FileConversation is the conversation of a transcript timeout line that names none itself:
// the first a built-in dialect's FileScope finds in attrs (the file the line came from); ""
// when none does.
func FileConversation(attrs pcommon.Map) string {
	for _, fs := range fileConversations {
		if c := fs(attrs); c != "" {
			return c
		}
	}
	return ""
}
