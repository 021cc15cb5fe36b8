// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package dialecttest

import (
	"maps"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// Marker is one way a tool result span says, or does not say, that its call was cancelled
// (dialect.Cancelled), as the real captures write it.
type Marker struct {
	// Name names the case in subtests.
	Name string
	// Attrs are added to the span's own attributes.
	Attrs map[string]any
	// Code and Message are the span's status.
	Code    ptrace.StatusCode
	Message string
	// Kind is the kind of the span's result item: pairing.KindAbort or pairing.KindResult.
	Kind pairing.Kind
}

// Markers returns the cancellation markers of every span dialect's results, and results that
// look like them without being cancelled.
func Markers() []Marker {
	return []Marker{
		{Name: "none", Kind: pairing.KindResult},
		{Name: "Copilot: error.type cancelled, status Operation aborted", Attrs: map[string]any{"error.type": "cancelled"},
			Code: ptrace.StatusCodeError, Message: "Operation aborted", Kind: pairing.KindAbort},
		{Name: "error.type AbortError", Attrs: map[string]any{"error.type": "AbortError"}, Kind: pairing.KindAbort},
		{Name: "Qwen Code: tool.failure_kind cancelled", Attrs: map[string]any{"tool.failure_kind": "cancelled", "success": false},
			Kind: pairing.KindAbort},
		{Name: "status attribute cancelled", Attrs: map[string]any{"status": "cancelled"}, Kind: pairing.KindAbort},
		{Name: "error status saying aborted", Code: ptrace.StatusCodeError, Message: "Command aborted: sleep 20", Kind: pairing.KindAbort},
		{Name: "LangGraph.js capture app: status interrupted by SIGTERM", Code: ptrace.StatusCodeError,
			Message: "interrupted by SIGTERM\n\nError: interrupted by SIGTERM\n    at process.<anonymous> (file:///srv/realclients/clients/langgraph/agent.mjs:42:22)",
			Kind:    pairing.KindAbort},
		{Name: "failed tool", Attrs: map[string]any{"error.type": "tool_error"}, Code: ptrace.StatusCodeError,
			Message: "Shell command failed", Kind: pairing.KindResult},
		{Name: "aborted by a timeout", Code: ptrace.StatusCodeError, Message: "The operation was aborted due to timeout",
			Kind: pairing.KindResult},
	}
}

// MarkedSpan returns NewSpan(t, name, attrs plus m.Attrs, root) with m's status.
func MarkedSpan(t testing.TB, name string, attrs map[string]any, root bool, m Marker) ptrace.Span {
	t.Helper()
	all := map[string]any{}
	maps.Copy(all, attrs)
	maps.Copy(all, m.Attrs)
	s := NewSpan(t, name, all, root)
	s.Status().SetCode(m.Code)
	s.Status().SetMessage(m.Message)
	return s
}
