// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package dialect

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// Attribute keys and values of the cancellation markers (specification section 2, outcome
// interrupted with reason aborted).
const (
	// attrFailureKind is Qwen Code's tool.failure_kind (its qwen-code.tool span).
	attrFailureKind = "tool.failure_kind"
	// attrStatus is a record's own status attribute (Qwen Code's qwen-code.tool_call events
	// write it).
	attrStatus = "status"
	// statusCancelled is the value of attrFailureKind or attrStatus that marks a cancelled
	// call.
	statusCancelled = "cancelled"
)

// attrErrorType is semconv's error.type.
var attrErrorType = string(semconv.ErrorTypeKey)

// cancelErrorTypes are the error.type values that name a cancellation.
var cancelErrorTypes = map[string]bool{
	"cancelled":  true,
	"canceled":   true,
	"aborted":    true,
	"AbortError": true,
}

// Cancelled reports whether a tool result record of any span or event dialect says that its
// own call was aborted or cancelled, so that the dialect reports it as pairing.KindAbort
// (outcome interrupted, reason aborted, no synthetic record) instead of pairing.KindResult.
// It holds when any of these does (each attribute a string, read at its last occurrence):
//
//   - the attribute error.type is cancelled, canceled, aborted or AbortError (GitHub Copilot
//     CLI ends an interrupted execute_tool span with error.type=cancelled);
//   - the attribute tool.failure_kind or status is cancelled (Qwen Code's qwen-code.tool span
//     carries tool.failure_kind=cancelled);
//   - code is ptrace.StatusCodeError and message says the operation was aborted (AbortMessage)
//     without matching the timeout pattern of specification section 4 (Copilot's status
//     message "Operation aborted").
//
// For a log record, pass ptrace.StatusCodeUnset and "": only the attributes count. Attribute
// values are compared exactly, as the timeout classifier compares error.type.
func Cancelled(attrs pcommon.Map, code ptrace.StatusCode, message string) bool {
	// One pass over the attributes for the three keys, the last occurrence of each winning
	// (as fields.Get reads them): a record is read once, not once per key.
	var errorType, failureKind, status pcommon.Value
	var seen uint8
	for k, v := range attrs.All() {
		switch k {
		case attrErrorType:
			errorType, seen = v, seen|1
		case attrFailureKind:
			failureKind, seen = v, seen|2
		case attrStatus:
			status, seen = v, seen|4
		}
	}
	return cancelled(errorType, seen&1 != 0, failureKind, seen&2 != 0, status, seen&4 != 0, code, message)
}

// Keys of the cancellation markers, read in a record's one pass (fields.Record).
var (
	keyErrorType   = fields.Register(attrErrorType)
	keyFailureKind = fields.Register(attrFailureKind)
	keyStatus      = fields.Register(attrStatus)
)

// CancelledIn is Cancelled of the attributes a reads, in a's one pass.
func CancelledIn(a *fields.Record, code ptrace.StatusCode, message string) bool {
	errorType, errorTypeOK := a.Value(keyErrorType)
	failureKind, failureKindOK := a.Value(keyFailureKind)
	status, statusOK := a.Value(keyStatus)
	return cancelled(errorType, errorTypeOK, failureKind, failureKindOK, status, statusOK, code, message)
}

// cancelled is Cancelled of the values of the three attributes (ok: it occurs) and a status.
func cancelled(errorType pcommon.Value, errorTypeOK bool, failureKind pcommon.Value, failureKindOK bool, status pcommon.Value, statusOK bool, code ptrace.StatusCode, message string) bool {
	if errorTypeOK && errorType.Type() == pcommon.ValueTypeStr && cancelErrorTypes[errorType.Str()] {
		return true
	}
	if failureKindOK && failureKind.Type() == pcommon.ValueTypeStr && failureKind.Str() == statusCancelled {
		return true
	}
	if statusOK && status.Type() == pcommon.ValueTypeStr && status.Str() == statusCancelled {
		return true
	}
	// An abort caused by a timeout ("The operation was aborted due to timeout") is a
	// timeout, classified by package timeout with the same pattern, not an abort.
	return code == ptrace.StatusCodeError && AbortMessage(message) && !TimeoutMessage.MatchString(message)
}

// AbortMessage reports whether a status message says that the operation was aborted or
// cancelled: after leading white space, an optional "<Name>Error: " (letters ending in
// "error", then a colon and a space), and at most four words of ASCII letters each followed
// by one space, the word aborted, cancelled or canceled, or the words "interrupted by SIG"
// and at least one more letter (a signal's name), not followed by a letter, digit or
// underscore; all without regard to case. So "Operation aborted", "The operation was
// aborted.", "Command aborted: sleep 20", "Tool execution cancelled by user", "AbortError:
// This operation was aborted", "context canceled" and "interrupted by SIGTERM" (the
// LangGraph.js capture app's signal handler, on the TOOL span of the tool it stopped) say
// so; "fatal: rebase aborted" (the word after other punctuation: the tool's own failure),
// "Operation abortedness", "the build step number one was aborted" (a sixth word),
// "Interrupted system call" and "interrupted by user" (no signal named) do not.
func AbortMessage(msg string) bool {
	s := strings.TrimLeft(msg, " \t\n\f\r")
	if i := strings.Index(s, ": "); i >= len("error") && letters(s[:i]) == i && strings.EqualFold(s[i-len("error"):i], "error") {
		s = s[i+2:]
	}
	for words := 0; ; words++ {
		n := letters(s)
		if n == 0 {
			return false
		}
		if w := s[:n]; (strings.EqualFold(w, "aborted") || strings.EqualFold(w, "cancelled") || strings.EqualFold(w, "canceled")) &&
			(n == len(s) || !wordByte(s[n])) {
			return true
		}
		if interruptedBySignal(s) {
			return true
		}
		if words == 4 || n == len(s) || s[n] != ' ' {
			return false
		}
		s = s[n+1:]
	}
}

// bySignal is what interruptedBySignal looks for after its first word.
const bySignal = " by sig"

// interruptedBySignal reports whether s starts with "interrupted by SIG", at least one more
// ASCII letter, and then no letter, digit or underscore, without regard to case.
func interruptedBySignal(s string) bool {
	const word = "interrupted"
	if len(s) < len(word)+len(bySignal)+1 || !strings.EqualFold(s[:len(word)], word) ||
		!strings.EqualFold(s[len(word):len(word)+len(bySignal)], bySignal) {
		return false
	}
	rest := s[len(word)+len(bySignal):]
	n := letters(rest)
	return n > 0 && (n == len(rest) || !wordByte(rest[n]))
}

// letters returns the number of ASCII letters s starts with.
func letters(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return i
		}
	}
	return len(s)
}

// wordByte reports whether c is a word character of a regular expression's \b: an ASCII
// letter, digit or underscore.
func wordByte(c byte) bool {
	return c == '_' || ('0' <= c && c <= '9') || ('a' <= c|0x20 && c|0x20 <= 'z')
}

// ResultKind returns pairing.KindAbort when Cancelled says a span's attributes and status
// report its call's abort, else pairing.KindResult: the kind of a span dialect's tool result
// with a call ID.
func ResultKind(span ptrace.Span) pairing.Kind {
	st := span.Status()
	if Cancelled(span.Attributes(), st.Code(), st.Message()) {
		return pairing.KindAbort
	}
	return pairing.KindResult
}

// ResultKindIn is ResultKind of a span whose attributes a reads (Found.Attrs).
func ResultKindIn(span ptrace.Span, a *fields.Record) pairing.Kind {
	st := span.Status()
	if CancelledIn(a, st.Code(), st.Message()) {
		return pairing.KindAbort
	}
	return pairing.KindResult
}
