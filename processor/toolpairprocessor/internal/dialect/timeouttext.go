// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package dialect

import (
	"regexp"
	"strings"
)

// TimeoutMessage is the specification section 4 pattern of a timeout message. Without regard
// to case, a timeout word: "timeout", "timed out", "time out", "timedout", "deadline
// exceeded" or "deadlineexceeded", each optionally followed by "error" or "exception"
// ("TimeoutError", "DeadlineExceeded"), or "etimedout" / "esockettimedout" (Node's errno
// names), standing as a word: not preceded by an ASCII letter or digit (an underscore may
// precede it: Claude Code's error_class "api_timeout", undici's "UND_ERR_CONNECT_TIMEOUT") and
// not followed by an ASCII letter, digit or underscore. So the names of settings, the
// identifiers "timeout_ms", "timeoutMs", "request_timeout_seconds", "idle_timeout_s" and
// "readTimeout" (VoltAgent's retry logs carry a request JSON whose tool schema has
// "timeout_ms"), do not match. Also, with regard to case, an error class name that ends in
// Timeout, TimedOut or TimeOut then Error or Exception ("APITimeoutError",
// "SocketTimeoutException", "ConnectTimeoutError"). Checked against "Request timed out." (Claude
// Code, the OpenAI SDKs), "idle timeout waiting for SSE" (Codex), "Command timed out after
// 2000 ms", "The operation was aborted due to timeout" (the AI SDK), "TimeoutError", "connect
// ETIMEDOUT", "context deadline exceeded" (Go), "DeadlineExceeded".
var TimeoutMessage = regexp.MustCompile(`(?i:(?:^|[^a-z0-9])(?:time(?:d ?| )?out|deadline ?exceeded)(?:error|exception)?(?:$|[^a-z0-9_])|(?:^|[^a-z0-9])e(?:socket)?timedout(?:$|[^a-z0-9_]))|\b[A-Z][A-Za-z0-9]*(?:Timeout|TimedOut|TimeOut)(?:Error|Exception)\b`)

// commandTimedOut matches the line the shell tools of Claude Code ("Command timed out after
// 2s"), pi ("Command timed out after 2 seconds") and OpenClaw write into a tool result whose
// command was killed by its own timeout.
var commandTimedOut = regexp.MustCompile(`(?m)^Command timed out\b`)

// TimeoutStatus reports whether an HTTP status code (an int, or its decimal string form) is a
// timeout: 408 Request Timeout or 504 Gateway Timeout.
func TimeoutStatus(v string) bool {
	v = strings.TrimSpace(v)
	return v == "408" || v == "504"
}

// TimeoutText reports whether an error, status or exception message says timeout
// (TimeoutMessage).
func TimeoutText(s string) bool { return s != "" && TimeoutMessage.MatchString(s) }

// CommandTimedOut reports whether the content of a tool result marked as an error says that
// the tool's command was killed by its timeout: a line starting with "Command timed out". The
// rest of a tool's output is the command's own and is not read (a failed test run that prints
// "timeout" is not a timeout of the tool).
func CommandTimedOut(s string) bool { return s != "" && commandTimedOut.MatchString(s) }

// TimeoutLine is what a dialect reads of a log body that is a timeout line of its own
// (dialect.Entry.TimeoutLine): a transcript line saying a tool or a model call timed out.
type TimeoutLine struct {
	// Model: the line is a model call's timeout; otherwise a tool call's.
	Model bool
	// End is the line's own time in Unix nanoseconds, 0 when it has none.
	End int64
	// Scope and ScopeAttr are the scope the line names itself (a session), "" when none.
	Scope, ScopeAttr string
}
