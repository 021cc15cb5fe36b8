// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// TestAnchorsObservedInTheWalk sends turn and model-call spans through a traces pipeline and
// asks the component which span a synthetic span of a call announced at each instant goes
// under: the walk tells the engine of every anchor span, under the span's scope, whether or
// not a span dialect is enabled.
func TestAnchorsObservedInTheWalk(t *testing.T) {
	for name, noDialect := range map[string]bool{"default dialects": false, "no dialect": true} {
		t.Run(name, func(t *testing.T) {
			b := newRig(t, withConfig(func(c *Config) {
				if noDialect {
					c.Dialects = []string{}
				}
				c.OrphanGrace = 50 * time.Nanosecond
			}))
			td := ptrace.NewTraces()
			rs := td.ResourceSpans().AppendEmpty()
			rs.Resource().Attributes().PutStr("service.name", "svc")
			spans := rs.ScopeSpans().AppendEmpty().Spans()
			add := func(name string, id byte, start, end int64) {
				s := spans.AppendEmpty()
				s.SetName(name)
				s.SetTraceID(pcommon.TraceID{id})
				s.SetSpanID(pcommon.SpanID{id})
				s.SetStartTimestamp(pcommon.Timestamp(start))
				s.SetEndTimestamp(pcommon.Timestamp(end))
				s.Attributes().PutStr("session.id", "session")
			}
			add("invoke_agent helper", 1, 1000, 1100)     // turn 1
			add("claude_code.llm_request", 2, 1010, 1020) // a model call of turn 1
			add("claude_code.interaction", 3, 1200, 1300) // turn 2
			add("codex.sampling", 4, 1400, 1410)          // a model call of turn 3, whose turn span is missing
			add("chat gpt-4o", 6, 1400, 1500)             // not an anchor
			add("invoke_agent", 5, 2000, 3000)            // turn 4
			require.NoError(t, b.traces.ConsumeTraces(context.Background(), td))
			// Turn 4 again, longer: replaces the first copy.
			td = ptrace.NewTraces()
			rs = td.ResourceSpans().AppendEmpty()
			rs.Resource().Attributes().PutStr("service.name", "svc")
			spans = rs.ScopeSpans().AppendEmpty().Spans()
			add("invoke_agent", 5, 2000, 3500)
			require.NoError(t, b.traces.ConsumeTraces(context.Background(), td))

			k := pairing.ConversationKey{Tenant: "svc", Conversation: "session"}
			for _, tc := range []struct {
				name string
				at   int64
				want byte // 0: none
			}{
				{"a turn covering the call is preferred to a model call", 1015, 1},
				{"the covering turn", 1250, 3},
				{"the model call that ended just before, when the turn span is missing", 1412, 4},
				{"an earlier turn is never chosen", 1150, 0},
				{"too long after the last model call", 1500, 0},
				{"the replaced copy's end counts", 3400, 5},
			} {
				a, ok := anchorOf(b.shared, k, tc.at)
				if tc.want == 0 {
					assert.False(t, ok, tc.name)
					continue
				}
				require.True(t, ok, tc.name)
				assert.Equal(t, pcommon.SpanID{tc.want}, a.SpanID, tc.name)
				assert.Equal(t, pcommon.TraceID{tc.want}, a.TraceID, tc.name)
				assert.Same(t, b.tsink, a.Next, tc.name)
			}
			_, ok := anchorOf(b.shared, pairing.ConversationKey{Tenant: k.Tenant, Conversation: "other"}, 1015)
			assert.False(t, ok, "another scope")
		})
	}
}
