package dialect

import (
	"regexp"

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
	// attrStatus is a record's own status attribute (Gemini CLI's and Qwen Code's tool_call
	// events write it).
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

// AbortMessage is the pattern of a status message that says the operation was aborted or
// cancelled, case-insensitive: at the start of the message, after an optional "<Name>Error: "
// and at most four words separated by single spaces, the word aborted, cancelled or canceled
// ("Operation aborted", "The operation was aborted.", "Command aborted: sleep 20", "Tool
// execution cancelled by user", "context canceled"). A message where the word comes later, after
// other punctuation ("fatal: rebase aborted"), is the tool's own failure, not an abort.
var AbortMessage = regexp.MustCompile(`(?i)^\s*(?:[a-z]*error: )?(?:[a-z]+ ){0,4}(?:aborted|cancell?ed)\b`)

// timeoutMessage is specification section 4's timeout message pattern (package timeout's
// MessagePattern, which imports this package): an abort caused by a timeout ("The operation
// was aborted due to timeout") is a timeout, classified there, not an abort.
var timeoutMessage = regexp.MustCompile(`(?i)timed? ?out|deadline exceeded`)

// Cancelled reports whether a tool result record of any span or event dialect says that its
// own call was aborted or cancelled, so that the dialect reports it as pairing.KindAbort
// (outcome interrupted, reason aborted, no synthetic record) instead of pairing.KindResult.
// It holds when any of these does (each attribute a string, read at its last occurrence):
//
//   - the attribute error.type is cancelled, canceled, aborted or AbortError (GitHub Copilot
//     CLI ends an interrupted execute_tool span with error.type=cancelled);
//   - the attribute tool.failure_kind or status is cancelled (Qwen Code's qwen-code.tool span
//     carries tool.failure_kind=cancelled);
//   - code is ptrace.StatusCodeError and message matches AbortMessage without matching the
//     timeout pattern of specification section 4 (Copilot's status message "Operation
//     aborted").
//
// For a log record, pass ptrace.StatusCodeUnset and "": only the attributes count. Values are
// compared exactly, as the timeout classifier compares error.type.
func Cancelled(attrs pcommon.Map, code ptrace.StatusCode, message string) bool {
	if v, ok := fields.Get(attrs, attrErrorType); ok && v.Type() == pcommon.ValueTypeStr && cancelErrorTypes[v.Str()] {
		return true
	}
	if v, ok := fields.Get(attrs, attrFailureKind); ok && v.Type() == pcommon.ValueTypeStr && v.Str() == statusCancelled {
		return true
	}
	if v, ok := fields.Get(attrs, attrStatus); ok && v.Type() == pcommon.ValueTypeStr && v.Str() == statusCancelled {
		return true
	}
	return code == ptrace.StatusCodeError && AbortMessage.MatchString(message) && !timeoutMessage.MatchString(message)
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
