package toolpairprocessor

import (
	"strings"

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

// anchor is a span seen in a traces pipeline of the component, the Activity.Anchor of an
// anchor span: what a synthetic span is put under (shared.apply).
type anchor struct {
	traceID    pcommon.TraceID
	spanID     pcommon.SpanID
	start, end int64 // Unix ns
	next       consumer.Traces
}

// anchorActivity is the Activity that tells the engine of anchor span s of scope k, a turn
// span (turn true) or a model-call span, seen in the traces pipeline whose next consumer is
// next. The engine keeps the latest of each kind per scope, a span seen again (an export
// retry) replacing its earlier copy, so that a call announced only in logs (a Claude Code or
// Codex tool_decision) and interrupted gets a synthetic span in the trace of the turn it
// happened in, as well as its synthetic log record (specification section 3); see
// pairing.Engine.Anchor for the choice of span.
func anchorActivity(k pairing.ScopeKey, s ptrace.Span, turn bool, next consumer.Traces) pairing.Activity {
	act := pairing.Activity{Kind: pairing.ActivityModelSpan, Key: k, Start: int64(s.StartTimestamp()), End: int64(s.EndTimestamp())}
	if turn {
		act.Kind = pairing.ActivityTurn
	}
	tid, sid := s.TraceID(), s.SpanID()
	copy(act.ID[:16], tid[:])
	copy(act.ID[16:], sid[:])
	act.Anchor = anchor{traceID: tid, spanID: sid, start: act.Start, end: act.End, next: next}
	return act
}
