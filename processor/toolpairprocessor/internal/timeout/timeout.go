// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package timeout recognises timeout records (specification section 4) and says what kind of
// operation a record is: a tool call, a model call, a compaction, or something else (an
// agent, turn or step record, or a record of no known kind).
//
// Everything here is a pure function of one record: which operations were in flight when a
// timeout happened is the business of package inflight, and the phase is decided by Classify
// from both.
//
// A record is a timeout when one of these says so (values read as strings, so Claude Code's
// and Codex's stringified numbers count):
//
//   - error.type, or an exception's exception.type (a span event "exception", or attributes of
//     that name on a log record), is one of timeout, TimeoutError, APITimeoutError,
//     DeadlineExceeded, 408, 504 (OTel semantic conventions v1.37.0 error.type and exception
//     attributes; the JavaScript, Python OpenAI/Anthropic SDK and gRPC names);
//   - an HTTP status code 408 or 504 in http.response.status_code (semconv v1.37.0),
//     http.status_code (semconv before v1.21) or status_code (Claude Code, Gemini CLI);
//   - a message matching MessagePattern in the span status message (only when the status is
//     Error), error.message (Codex, Gemini CLI), error (Claude Code), error_class (Claude Code:
//     api_timeout), or an exception's exception.message;
//   - for transcript lines (log bodies, see TranscriptLine): a tool result marked as an error
//     whose content has a line starting with "Command timed out" (Claude Code, pi, OpenClaw),
//     OpenClaw's details.timedOut true or failureKind/exitReason "overall-timeout", a model
//     error line (Claude Code's system api_error entry with its error.status and
//     error.message, pi's and OpenClaw's assistant errorMessage).
//
// An overload (HTTP 429, 503, 529) is an error, never a timeout.
package timeout

import (
	"regexp"
	"regexp/syntax"
	"strconv"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// MessagePattern is the specification section 4 pattern of a timeout message: the words
// "timed out", "timeout", "time out", "deadline exceeded", "TimeoutError", "ETIMEDOUT", ...
// standing as words, not inside identifiers such as "timeout_ms" (dialect.TimeoutMessage).
var MessagePattern = dialect.TimeoutMessage

// errorTypes are the error.type / exception.type values that name a timeout.
var errorTypes = map[string]bool{
	"timeout":          true,
	"TimeoutError":     true,
	"APITimeoutError":  true,
	"DeadlineExceeded": true,
	"408":              true,
	"504":              true,
}

// ErrorType reports whether an error.type or exception.type value names a timeout.
func ErrorType(v string) bool { return errorTypes[v] }

// StatusCode reports whether an HTTP status code (an int, or its decimal string form) is a
// timeout: 408 Request Timeout or 504 Gateway Timeout (dialect.TimeoutStatus).
func StatusCode(v string) bool { return dialect.TimeoutStatus(v) }

// Message reports whether an error, status or exception message says timeout
// (dialect.TimeoutText).
func Message(s string) bool { return dialect.TimeoutText(s) }

// ToolOutput reports whether the content of a tool result marked as an error says that the
// tool's command was killed by its timeout (dialect.CommandTimedOut): a line starting with
// "Command timed out"; the rest of a tool's output is the command's own and is not read.
func ToolOutput(s string) bool { return dialect.CommandTimedOut(s) }

// Kind is what operation a record is, for classification.
type Kind uint8

const (
	// KindOther: an agent, turn or step record, or a record of no known kind. Its timeout is
	// classified by what was in flight in its scope at its end.
	KindOther Kind = iota
	// KindTool: a tool call record (its timeout is tool_execution).
	KindTool
	// KindModel: a model call record (its timeout is provider).
	KindModel
	// KindCompaction: a context compaction record (its timeout is compaction).
	KindCompaction
)

// String names the kind, for tests and logs.
func (k Kind) String() string {
	switch k {
	case KindTool:
		return "tool"
	case KindModel:
		return "model"
	case KindCompaction:
		return "compaction"
	default:
		return "other"
	}
}

// Phase is the value of toolpair.timeout.phase.
type Phase uint8

const (
	// PhaseNone: not a timeout; nothing is written.
	PhaseNone Phase = iota
	// PhaseToolExecution: a tool was running.
	PhaseToolExecution
	// PhaseProvider: the model provider was being waited on.
	PhaseProvider
	// PhaseCompaction: the agent was compacting its context.
	PhaseCompaction
	// PhaseUnknown: nothing known was in flight.
	PhaseUnknown
)

var phaseNames = [...]string{
	PhaseNone:          "",
	PhaseToolExecution: "tool_execution",
	PhaseProvider:      "provider",
	PhaseCompaction:    "compaction",
	PhaseUnknown:       "unknown",
}

// String returns the attribute value of the phase ("tool_execution", ...), "" for PhaseNone.
func (p Phase) String() string {
	if int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return ""
}

// Phases lists the phases a timeout can get, for callers that report per-phase figures.
func Phases() []Phase {
	return []Phase{PhaseToolExecution, PhaseProvider, PhaseCompaction, PhaseUnknown}
}

// Classify decides the phase of a timeout record of kind k (specification section 4): a tool
// record is tool_execution and a model call provider whatever else was running; a compaction
// record is compaction; any other record is tool_execution when at least one tool call of
// its scope was in flight, else compaction when a compaction was, else provider when a model
// call was, else unknown. f is what was in flight in the record's scope at its instant, as the
// pairing engine answers it (pairing.Engine.InFlightAt).
func Classify(k Kind, f pairing.InFlight) Phase {
	switch k {
	case KindTool:
		return PhaseToolExecution
	case KindModel:
		return PhaseProvider
	case KindCompaction:
		return PhaseCompaction
	}
	switch {
	case f.Tools > 0:
		return PhaseToolExecution
	case f.Compaction:
		return PhaseCompaction
	case f.Model:
		return PhaseProvider
	default:
		return PhaseUnknown
	}
}

// Names holds the compiled compaction name patterns (config keys
// timeout_classification.compaction_span_names and compaction_event_names). Patterns that
// match exactly one name (^literal$, as the defaults) are looked up in a set; the others are
// matched as regular expressions.
type Names struct {
	spans, events patterns
	// spanKinds and eventKinds say what a span name (compaction, modelSpanNames,
	// toolSpanNames, toolSpanPrefixes) and a log event name (compaction,
	// modelEvents, toolEvents) make of a record, a compaction name first.
	spanKinds, eventKinds *nameKinds
}

type patterns struct {
	exact map[string]bool
	res   []*regexp.Regexp
}

// NewNames compiles the compaction span and event name patterns (Go regexp syntax, matched
// anywhere in the name unless anchored). The error names the index of the bad pattern.
func NewNames(spanPatterns, eventPatterns []string) (*Names, error) {
	n := &Names{}
	var err error
	if n.spans, err = compile(spanPatterns); err != nil {
		return nil, err
	}
	if n.events, err = compile(eventPatterns); err != nil {
		return nil, err
	}
	n.spanKinds = newNameKinds(n.spans, kinds(modelSpanNames, toolSpanNames), toolSpanPrefixes)
	n.eventKinds = newNameKinds(n.events, kinds(modelEvents, toolEvents), nil)
	return n, nil
}

// kinds maps the names of model and tool to KindModel and KindTool.
func kinds(model, tool map[string]bool) map[string]Kind {
	m := make(map[string]Kind, len(model)+len(tool))
	for name := range tool {
		m[name] = KindTool
	}
	for name := range model {
		m[name] = KindModel
	}
	return m
}

// PatternError is a pattern that does not compile.
type PatternError struct {
	// Index is the pattern's position in its configured list, from 0.
	Index int
	// Err is regexp.Compile's error.
	Err error
}

// Error returns "[Index]: " followed by Err's text.
func (e *PatternError) Error() string { return "[" + strconv.Itoa(e.Index) + "]: " + e.Err.Error() }

// Unwrap returns Err.
func (e *PatternError) Unwrap() error { return e.Err }

func compile(list []string) (patterns, error) {
	p := patterns{exact: map[string]bool{}}
	for i, pat := range list {
		re, err := regexp.Compile(pat)
		if err != nil {
			return patterns{}, &PatternError{Index: i, Err: err}
		}
		if lit, ok := exactLiteral(pat); ok {
			p.exact[lit] = true
			continue
		}
		p.res = append(p.res, re)
	}
	return p, nil
}

// exactLiteral reports whether pattern matches exactly one string (^literal$ without flags),
// and which.
func exactLiteral(pattern string) (string, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", false
	}
	re = re.Simplify()
	if re.Op != syntax.OpConcat || len(re.Sub) != 3 ||
		re.Sub[0].Op != syntax.OpBeginText || re.Sub[2].Op != syntax.OpEndText ||
		re.Sub[1].Op != syntax.OpLiteral || re.Sub[1].Flags&syntax.FoldCase != 0 {
		return "", false
	}
	return string(re.Sub[1].Rune), true
}

// CompactionSpan reports whether a span name is a compaction span.
func (n *Names) CompactionSpan(name string) bool { return n.spans.match(name) }

// CompactionEvent reports whether a log event name is a compaction event.
func (n *Names) CompactionEvent(name string) bool { return n.events.match(name) }

func (p *patterns) match(s string) bool {
	if s == "" {
		return false
	}
	if p.exact[s] {
		return true
	}
	for _, re := range p.res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}
