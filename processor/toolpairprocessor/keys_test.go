package toolpairprocessor

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
)

// TestDialectsDeclareTheirItemScopes: on every capture and transcript file of testdata/, the
// items of a built-in or custom dialect carry a scope of their own exactly when the dialect
// declares it (ownScope): an undeclared one would be ignored by callScope, and route mode,
// which reads records with the dialects only when one declares it, relies on the flag.
func TestDialectsDeclareTheirItemScopes(t *testing.T) {
	custom, err := newCustomDialects(exampleConfig(t, "custom-dialect.yaml").CustomDialects, componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)
	scoped := map[string]int{} // items carrying a scope, by dialect
	declared := map[string]bool{}
	check := func(name string, own bool, f *dialect.Found) {
		declared[name] = own
		for _, it := range f.Items {
			if it.Scope != "" {
				scoped[name]++
				assert.True(t, own, "dialect %s gives item %s a scope without declaring it", name, it.CallID)
			}
		}
	}
	var f dialect.Found
	for _, name := range routeCaptures(t, "traces") {
		td := loadTraces(t, strings.Split(name, "/")...)
		forEachSpanAt(td, func(_ recordPos, span ptrace.Span) {
			rs, ss := ptrace.NewResourceSpans(), ptrace.NewScopeSpans()
			for _, d := range spanDialects {
				f.Reset()
				if d.extract(span, &f) {
					check(d.name, d.ownScope, &f)
				}
			}
			for _, first := range []bool{true, false} {
				f.Reset()
				if d := custom.extractSpan(context.Background(), rs, ss, span, &f, first); d != nil {
					check(d.name, d.ownScope, &f)
				}
			}
		})
	}
	logs := func(ld plog.Logs) {
		rls := ld.ResourceLogs()
		for i := 0; i < rls.Len(); i++ {
			sls := rls.At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				lrs := sls.At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					for _, d := range logDialects {
						f.Reset()
						if d.extract(lrs.At(k), &f) {
							check(d.name, d.ownScope, &f)
						}
					}
					for _, first := range []bool{true, false} {
						f.Reset()
						if d := custom.extractLog(context.Background(), rls.At(i), sls.At(j), lrs.At(k), &f, first); d != nil {
							check(d.name, d.ownScope, &f)
						}
					}
				}
			}
		}
	}
	for _, name := range routeCaptures(t, "logs") {
		logs(loadLogs(t, strings.Split(name, "/")...))
	}
	for _, path := range routeTranscriptFiles(t) {
		logs(transcriptLogs(t, path))
	}
	for name, own := range declared {
		if own {
			assert.Positive(t, scoped[name], "dialect %s declares item scopes and gives none", name)
		}
	}
	assert.Contains(t, declared, "acme_spans")
	assert.Contains(t, declared, "acme_logs")
}

// TestRouteReadsWithDialectsOnlyForOwnScopes: route mode runs a signal's dialects only when
// one of them gives its calls a scope of its own (keyer.callScope): logs with the transcript
// dialect or a custom log dialect, spans with a custom span dialect; otherwise every record
// of the signal is scoped by its attributes or trace ID.
func TestRouteReadsWithDialectsOnlyForOwnScopes(t *testing.T) {
	custom := exampleConfig(t, "custom-dialect.yaml").CustomDialects
	tests := []struct {
		name            string
		mutate          func(*Config)
		spanItems, logs bool
	}{
		{"defaults", nil, false, true},
		{"no transcript dialect", func(c *Config) { c.Dialects = without(knownDialects, DialectTranscript) }, false, false},
		{"custom dialects only", func(c *Config) { c.Dialects, c.CustomDialects = []string{}, custom }, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := testRouter(t, tt.mutate)
			assert.Equal(t, tt.spanItems, r.spanItems)
			assert.Equal(t, tt.logs, r.logItems)
		})
	}
}
