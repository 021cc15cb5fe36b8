// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package dialect

// Sources: the streams the pairing engine tells results apart by (pairing.Event.Source,
// Rule.Source), every one of them in this block. A duplicate from another source than the
// result that resolved its call is kept (specification section 2). The stored state
// (specification section 9) keeps these numbers, so a value never changes and is never
// reused: a new stream takes the next free number below SourceCustom, here.
const (
	// SourceGenAISpan: GenAI semantic-convention spans (genai's execute_tool spans).
	SourceGenAISpan uint8 = 1
	// SourceClaudeCodeLog: Claude Code's log events (claude_code.tool_result).
	SourceClaudeCodeLog uint8 = 2
	// SourceTranscriptLog: transcript lines (Claude Code, pi, OpenClaw).
	SourceTranscriptLog uint8 = 3
	// SourceCodexLog: Codex's log events.
	SourceCodexLog uint8 = 4
	// SourceEcho is the Source of every echo item (pairing.KindEcho) of a span, whatever its
	// dialect: a result repeated as history in a later model request.
	SourceEcho uint8 = 5
	// SourceClaudeCodeSpan: Claude Code's claude_code.tool spans.
	SourceClaudeCodeSpan uint8 = 6
	// SourceClaudeCodeExecution: Claude Code's claude_code.tool.execution spans (companions).
	SourceClaudeCodeExecution uint8 = 7
	// SourceCodexSpan: Codex's tool spans.
	SourceCodexSpan uint8 = 8
	// SourceGenAILog: GenAI semantic-convention log events (genai_events).
	SourceGenAILog uint8 = 9
	// SourceGeminiSpan and SourceGeminiLog: Gemini CLI's tool_call spans and log events.
	SourceGeminiSpan uint8 = 10
	SourceGeminiLog  uint8 = 11
	// SourceAISDKSpan: the Vercel AI SDK's ai.toolCall spans.
	SourceAISDKSpan uint8 = 12
	// SourceOpenInferenceSpan: OpenInference TOOL spans.
	SourceOpenInferenceSpan uint8 = 13
	// SourceOpenLLMetrySpan: OpenLLMetry tool spans.
	SourceOpenLLMetrySpan uint8 = 14
	// SourceQwenLog, SourceQwenSpan, SourceQwenExecution: Qwen Code's log events, tool spans
	// and tool execution spans (read by gemini_cli).
	SourceQwenLog       uint8 = 15
	SourceQwenSpan      uint8 = 16
	SourceQwenExecution uint8 = 17
	// SourceEchoLog is the Source of every echo item of a log record: each signal's history
	// is a source of its own, since a span and an event of one request both repeat it
	// (specification section 2).
	SourceEchoLog uint8 = 18
	// SourceVoltAgentSpan and SourceVoltAgentLog: VoltAgent's tool.execution spans and its
	// agent.step.tool_result log records, two reports of one result.
	SourceVoltAgentSpan uint8 = 19
	SourceVoltAgentLog  uint8 = 20
	// 21 was never given out.
	// SourceADKSpan: Google ADK's execute_tool spans.
	SourceADKSpan uint8 = 22
	// SourceCustom is the first Source above the built-in ones: the i-th custom dialect
	// takes SourceCustom+i.
	SourceCustom uint8 = 128
)
