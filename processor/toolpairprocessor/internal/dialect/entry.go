// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package dialect

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Entry describes one built-in dialect: everything the processor knows of a source format
// outside the dialect's own package. Each dialect package declares its Entry (entry.go), and
// package registry lists them in the order they are tried. The processor names no agent
// itself: its dialect tables, the anchor spans and the timeout classifier's vocabulary are
// built from the entries.
type Entry struct {
	// Name is the dialect's configuration name, a value of the dialects key ("claude_code").
	Name string
	// Convention: the dialect reads an OpenTelemetry semantic convention, which any agent or
	// library may write, rather than one agent's own records.
	Convention bool
	// ConversationAttributes are the record or resource attributes the dialect's sources give the
	// session (the conversation) in: the defaults of scope_attributes (registry
	// ConversationAttributes orders them).
	ConversationAttributes []string
	// Spans are the dialect's span rules, in the order they are tried (nil: no spans read).
	Spans []Rule[ptrace.Span]
	// Logs are the dialect's log record rules, in the order they are tried (nil: no log
	// records read).
	Logs []Rule[plog.LogRecord]
	// Anchors are the names of the dialect's turn and model-call spans, under which a
	// synthetic span of a call announced only in logs is put.
	Anchors Anchors
	// Operations are the names of the dialect's tool and model call records, for timeout
	// classification (specification section 4).
	Operations Operations
	// LineConversation, when not nil, returns the scope of a log record the dialect reads whatever
	// its items (a transcript line's session or file) and the attribute it is reported
	// under; ok is false when the record has none. Route mode routes a record without items
	// by it.
	LineConversation func(lr plog.LogRecord) (attr, scope string, ok bool)
	// TimeoutLine, when not nil, reads a log body (a JSON object's text) as a timeout line of
	// the dialect's (a transcript line saying a tool or model call timed out) and reports
	// whether it is one. The timeout classifier calls it only on bodies that mention a timeout
	// or hold a timeout status code.
	TimeoutLine func(data []byte) (TimeoutLine, bool)
	// FileConversation, when not nil, returns the scope of a timeout line that names no scope
	// itself (a pi or OpenClaw transcript line): the file it came from, read from the
	// record's attributes; "" when they do not name one.
	FileConversation func(attrs pcommon.Map) string
}

// Rule is one way a dialect reads records of type R (ptrace.Span, plog.LogRecord): a
// separate stream of results to the pairing engine, with a Source of its own.
type Rule[R any] struct {
	// Source tells the pairing engine which stream a result came from (pairing.Event.Source):
	// a duplicate from another source than the result that resolved its call is kept. It is
	// unique among the built-in rules, between 1 and SourceCustom-1, and never changes: the
	// stored state (specification section 9) keeps it.
	Source uint8
	// Extract appends the tool calls of one record to f and reports whether the record
	// belongs to the dialect (even when nothing usable was found).
	Extract func(r R, f *Found) bool
	// Late (spans): the record's events go to the engine after the other events of its
	// batch (a companion result record, pairing.KindCompanion: handed over after its call's
	// main result record of the same batch, it is settled at once instead of being held).
	Late bool
	// OwnConversation: the rule gives its items a scope of their own (Item.Scope), which replaces the
	// scope_attributes lookup.
	OwnConversation bool
}

// Anchors names the anchor spans of a dialect.
type Anchors struct {
	// TurnSpans are exact names of spans of one turn (Claude Code's claude_code.interaction).
	TurnSpans []string
	// TurnSpanPrefixes start the names of turn spans: the whole name, or the prefix followed
	// by a space and more ("invoke_agent {gen_ai.agent.name}").
	TurnSpanPrefixes []string
	// ModelSpans are exact names of spans of one model request.
	ModelSpans []string
}

// Operations names the tool and model call records of a dialect, for timeout classification.
type Operations struct {
	// ModelSpans are exact names of model call spans that carry no GenAI operation name.
	ModelSpans []string
	// ToolSpans are exact names of tool call spans that carry no GenAI operation name.
	ToolSpans []string
	// ToolSpanPrefixes start the names of tool call spans (a tool span and its children).
	ToolSpanPrefixes []string
	// ModelOperations are values of gen_ai.operation.name, outside the semantic conventions,
	// that name a model call.
	ModelOperations []string
	// ModelEvents and ToolEvents are log event names (OTLP EventName, event.name or a string
	// body) of model call and tool call records.
	ModelEvents, ToolEvents []string
	// KindAttribute, when its Key is set, is a span attribute whose value says what operation
	// a span is, ranked with gen_ai.operation.name (above the span's name).
	KindAttribute KindAttribute
	// ToolKindAttribute, when its Key is set, is a span attribute whose value (one of its
	// Tool values) says a span is a tool call, ranked below KindAttribute and above
	// ModelAttributes and the span's name.
	ToolKindAttribute KindAttribute
	// ModelAttributes are span attributes whose presence says a span is a model call, ranked
	// with ModelSpans.
	ModelAttributes []string
	// CallIDAttributes are span attributes that carry a tool call ID: a span carrying one,
	// that nothing else says the kind of, is part of running a tool call.
	CallIDAttributes []string
	// DurationAttributes are log attributes holding the duration in ms (an int or a decimal
	// string) of the operation a record reports, which ends at the record's time.
	DurationAttributes []string
	// StatusAttributes are attributes holding an HTTP status code (an int or its decimal
	// string): 408 or 504 says the record timed out.
	StatusAttributes []string
	// ErrorAttributes are attributes holding an error text: one matching the timeout message
	// pattern says the record timed out.
	ErrorAttributes []string
	// CompactionSpans and CompactionEvents are names of context compaction spans and log
	// events: the defaults of timeout_classification.compaction_span_names and
	// compaction_event_names, each matched as the whole name.
	CompactionSpans, CompactionEvents []string
}

// KindAttribute is a span attribute whose string value says what operation a span is.
type KindAttribute struct {
	// Key is the attribute's name.
	Key string
	// Tool and Model are the values that say a tool call and a model call.
	Tool, Model []string
}
