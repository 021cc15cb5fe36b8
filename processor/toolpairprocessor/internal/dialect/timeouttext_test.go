// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package dialect_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
)

// TestTimeoutMessage: the timeout words of specification section 4 match as words, in the
// messages of the captures and of the usual runtimes, and not inside the identifiers of
// settings (VoltAgent's retry logs carry, in their error attribute, the request JSON with the
// tool schema's timeout_ms).
func TestTimeoutMessage(t *testing.T) {
	for _, msg := range []string{
		"idle timeout waiting for SSE", // Codex
		"stream disconnected before completion: idle timeout waiting for SSE",
		"Request timed out.", // Claude Code, the OpenAI SDKs, LangGraph's ChatOpenAI
		"TimeoutError",
		"TimeoutError: The operation was aborted due to timeout",
		"Command timed out after 2000 ms", // VoltAgent's and LangGraph's capture app
		"Command timed out after 2000 ms; the command was killed",
		"The operation was aborted due to timeout", // the AI SDK
		"ETIMEDOUT",
		"connect ETIMEDOUT 10.0.0.1:443",
		"ESOCKETTIMEDOUT",
		"deadline exceeded",
		"context deadline exceeded",
		"DeadlineExceeded",
		"rpc error: code = DeadlineExceeded desc = context deadline exceeded",
		"4 DEADLINE_EXCEEDED: Deadline exceeded after 5.001s",
		"api_timeout",             // Claude Code's error_class
		"UND_ERR_CONNECT_TIMEOUT", // undici's error code
		"LLM idle timeout (6s): no response from model", // OpenClaw
		"REQUEST TIMED OUT",
		"time out",
		"TimeOut",
		"Request TimedOut",
		"timedout",
		"i/o timeout",
		"(timeout)",
		"timeout.",
		"30s timeout, giving up",
		"openai.APITimeoutError: Request timed out.",
		"APITimeoutError",
		"java.net.SocketTimeoutException: Read timed out",
		"SocketTimeoutException",
		"ConnectTimeoutError",
		"asyncio.exceptions.TimeoutError",
		"TimeoutException",
		`{"error":"timeout"}`,
	} {
		assert.True(t, dialect.TimeoutText(msg), "%q should be a timeout", msg)
	}
	for _, msg := range []string{
		"",
		"timeout_ms",
		`"timeoutMs":`,
		`{"timeoutMs":2000}`,
		"request_timeout_seconds",
		"idle_timeout_s",
		"readTimeout",
		"ReadTimeout",
		"connectTimeout: 5000",
		`{"tools":[{"parameters":{"properties":{"timeout_ms":{"type":"number"}}}}]}`,
		"timeouts",
		"Timeouts: 0",
		"runtime output",
		"mytimeout",
		"timeout2",
		"ETIMEDOUTX",
		"deadline_exceeded_count",
		"deadlines exceeded",
		"TimeoutErrors",
		"timeoutErrorCount",
		"Shell command failed",
		"Command aborted: interrupted by SIGINT",
		"503 The server is overloaded or not ready yet.",
	} {
		assert.False(t, dialect.TimeoutText(msg), "%q should not be a timeout", msg)
	}
}
