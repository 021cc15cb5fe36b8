// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package batch

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestAnchorKind: turn spans by exact name or by a prefix and a space, model-call spans by
// exact name.
func TestAnchorKind(t *testing.T) {
	for name, want := range map[string][2]bool{
		"claude_code.interaction": {true, false},
		"invoke_agent":            {true, false},
		"invoke_agent weather":    {true, false},
		"invoke_agentic":          {false, false},
		"claude_code.llm_request": {false, true},
		"codex.sampling":          {false, true},
		"chat gpt-4o":             {false, false},
		"claude_code.tool":        {false, false},
	} {
		s := ptrace.NewSpan()
		s.SetName(name)
		turn, model := AnchorKind(s)
		assert.Equal(t, want, [2]bool{turn, model}, name)
	}
}
