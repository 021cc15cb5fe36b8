package toolpairprocessor

import (
	"strings"
	"sync"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// Anchor spans: the spans a synthetic span of a call announced only in logs can be put
// under.
const (
	// spanClaudeCodeInteraction is Claude Code's beta span of one user interaction, a turn
	// (https://docs.anthropic.com/en/docs/claude-code/monitoring-usage, enhanced telemetry).
	spanClaudeCodeInteraction = "claude_code.interaction"
	// spanClaudeCodeLLMRequest is Claude Code's beta span of one model request.
	spanClaudeCodeLLMRequest = "claude_code.llm_request"
	// spanCodexSampling is Codex's span of one model request; it carries conversation.id.
	spanCodexSampling = "codex.sampling"
	// spanGeminiLLMCall is Gemini CLI's span of one model request (a root span, a trace of
	// its own); it carries gen_ai.conversation.id, the session.
	spanGeminiLLMCall = "llm_call"
	// spanPrefixInvokeAgent starts the name of a GenAI agent span, "invoke_agent
	// {gen_ai.agent.name}" (semantic conventions v1.37.0, gen-ai-agent-spans): a turn.
	spanPrefixInvokeAgent = "invoke_agent"
)

// Bounds of the anchor index: scopes remembered (oldest forgotten first), and turn spans and
// model-call spans per scope (most recent kept).
const (
	maxAnchorScopes = 10_000
	maxTurnsInScope = 8
	maxCallsInScope = 8
)

// anchorKind says whether a span is a turn span, a model-call span, or neither.
func anchorKind(s ptrace.Span) (turn, model bool) {
	switch name := s.Name(); name {
	case spanClaudeCodeInteraction:
		return true, false
	case spanClaudeCodeLLMRequest, spanCodexSampling, spanGeminiLLMCall:
		return false, true
	default:
		return strings.HasPrefix(name, spanPrefixInvokeAgent) &&
			(len(name) == len(spanPrefixInvokeAgent) || name[len(spanPrefixInvokeAgent)] == ' '), false
	}
}

// anchor is a span seen in a traces pipeline of the component.
type anchor struct {
	traceID    pcommon.TraceID
	spanID     pcommon.SpanID
	start, end int64 // Unix ns
	next       consumer.Traces
}

type scopeAnchors struct {
	turns, calls []anchor
	// first holds the first turn and the first model call of the scope, so that a scope
	// with one of each (most) takes one allocation; more grow the lists out of it.
	first [2]anchor
}

// anchorIndex remembers, per scope, the latest turn spans and model-call spans seen in the
// component's traces pipelines, so that a call announced only in logs (a Claude Code or
// Codex tool_decision) and interrupted gets a synthetic span in the trace of the turn it
// happened in, as well as its synthetic log record (specification section 3). It is bounded by
// maxAnchorScopes scopes, and safe for concurrent use.
type anchorIndex struct {
	mu     sync.Mutex
	scopes map[pairing.ScopeKey]*scopeAnchors
	order  []pairing.ScopeKey // insertion order, for the bound
	head   int
	// last is the scope most recently added to, under key lastKey: the anchor spans of a
	// trace come together in a batch. (Evicting a scope always makes a new one the last.)
	last    *scopeAnchors
	lastKey pairing.ScopeKey
}

func newAnchorIndex() *anchorIndex {
	return &anchorIndex{scopes: map[pairing.ScopeKey]*scopeAnchors{}}
}

// add remembers a turn span (turn true) or a model-call span of scope k. A span seen again
// (an export retry) replaces its earlier copy.
func (x *anchorIndex) add(k pairing.ScopeKey, a anchor, turn bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	sa := x.last
	if sa == nil || x.lastKey != k {
		sa = x.scopes[k]
	}
	if sa == nil {
		if len(x.order)-x.head >= maxAnchorScopes {
			delete(x.scopes, x.order[x.head])
			x.order[x.head] = pairing.ScopeKey{}
			x.head++
			if x.head >= len(x.order)/2 {
				x.order = append(x.order[:0], x.order[x.head:]...)
				x.head = 0
			}
		}
		x.order = append(x.order, k)
		sa = &scopeAnchors{}
		sa.turns, sa.calls = sa.first[0:0:1], sa.first[1:1:2]
		x.scopes[k] = sa
	}
	x.last, x.lastKey = sa, k
	list, limit := &sa.calls, maxCallsInScope
	if turn {
		list, limit = &sa.turns, maxTurnsInScope
	}
	for i, b := range *list {
		if b.traceID == a.traceID && b.spanID == a.spanID {
			(*list)[i] = a
			return
		}
	}
	if len(*list) >= limit {
		*list = append((*list)[:0], (*list)[1:]...)
	}
	*list = append(*list, a)
}

// find returns the span of scope k to put the synthetic span of a call announced at time at
// (Unix ns) under: the latest turn span that covers at; else the latest model-call span that
// covers it; else the latest model-call span that ended at most window before it (the model
// request that announced the call, when the turn span itself was never exported because the
// agent was killed). A span of an earlier turn is never chosen when nothing of the call's own
// turn was seen: then the call gets no synthetic span rather than one in a wrong trace.
func (x *anchorIndex) find(k pairing.ScopeKey, at, window int64) (anchor, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	sa := x.scopes[k]
	if sa == nil {
		return anchor{}, false
	}
	for _, list := range [][]anchor{sa.turns, sa.calls} {
		for i := len(list) - 1; i >= 0; i-- {
			if list[i].start <= at && at <= list[i].end {
				return list[i], true
			}
		}
	}
	best := -1
	for i, a := range sa.calls {
		if a.end <= at && at-a.end <= window && (best < 0 || a.end > sa.calls[best].end) {
			best = i
		}
	}
	if best < 0 {
		return anchor{}, false
	}
	return sa.calls[best], true
}
