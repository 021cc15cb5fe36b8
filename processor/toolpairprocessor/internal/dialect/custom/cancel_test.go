// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package custom

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// TestResultCancelled: a record a custom dialect finds to be a result is an abort when it
// carries a cancellation marker (dialect.Cancelled): a span by its attributes or its status,
// a log record by its attributes. A use with a marker stays a use.
func TestResultCancelled(t *testing.T) {
	spans, err := New(acmeSpans(), componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)
	logs, err := New(acmeLogs(), componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)
	for _, m := range dialecttest.Markers() {
		t.Run(m.Name, func(t *testing.T) {
			td := ptrace.NewTraces()
			rs := td.ResourceSpans().AppendEmpty()
			ss := rs.ScopeSpans().AppendEmpty()
			dialecttest.MarkedSpan(t, "acme.tool", map[string]any{"acme.call_id": "a", "acme.tool": "ls"}, false, m).CopyTo(ss.Spans().AppendEmpty())
			tc := NewSpanContext(rs, ss, ss.Spans().At(0))
			defer tc.Close()
			var f dialect.Found
			assert.True(t, spans.ExtractSpan(context.Background(), tc, &f))
			require.Len(t, f.Items, 1)
			assert.Equal(t, m.Kind, f.Items[0].Kind)

			attrs := map[string]any{"acme.call_id": "c1", "acme.session": "s1"}
			for k, v := range m.Attrs {
				attrs[k] = v
			}
			want := pairing.KindResult
			if m.Kind == pairing.KindAbort && len(m.Attrs) > 0 {
				want = pairing.KindAbort // a log record has no status
			}
			claimed, lf := extractLog(t, logs, "acme.tool.end", attrs)
			assert.True(t, claimed)
			require.Len(t, lf.Items, 1)
			assert.Equal(t, want, lf.Items[0].Kind)

			claimed, lf = extractLog(t, logs, "acme.tool.start", attrs)
			assert.True(t, claimed)
			require.Len(t, lf.Items, 1)
			assert.Equal(t, pairing.KindUse, lf.Items[0].Kind)
		})
	}
}
