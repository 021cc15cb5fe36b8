// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package claim

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/custom"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/genai"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/registry"
)

// exampleCustom returns the custom dialects of examples/custom-dialect.yaml (Acme Coder, one
// log and one span dialect).
func exampleCustom(t *testing.T) []custom.Config {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "examples", "custom-dialect.yaml"))
	require.NoError(t, err)
	retrieved, err := confmap.NewRetrievedFromYAML(data)
	require.NoError(t, err)
	conf, err := retrieved.AsConf()
	require.NoError(t, err)
	sub, err := conf.Sub("processors::toolpair")
	require.NoError(t, err)
	var cfg struct {
		CustomDialects []custom.Config `mapstructure:"custom_dialects"`
	}
	require.NoError(t, sub.Unmarshal(&cfg, confmap.WithIgnoreUnused()))
	require.Len(t, cfg.CustomDialects, 2)
	return cfg.CustomDialects
}

func all(string) bool { return true }

// TestBuiltinTables: the span and log tables are the registry's rules in trial order, each
// with a source of its own, none the echoes' nor in the custom dialects' range; genai's span
// rules come after the span dialects whose spans they would also read, and the transcript
// lines are tried last among the logs.
func TestBuiltinTables(t *testing.T) {
	seen := map[uint8]string{}
	check := func(name string, source uint8) {
		assert.Contains(t, registry.Names(), name)
		assert.NotZero(t, source, name)
		assert.NotEqual(t, dialect.SourceEcho, source, name)
		assert.NotEqual(t, dialect.SourceEchoLog, source, name)
		assert.Less(t, source, dialect.SourceCustom, name)
		if prev, ok := seen[source]; ok {
			t.Errorf("source %d of %s is also %s's", source, name, prev)
		}
		seen[source] = name
	}
	for _, d := range BuiltinSpans {
		check(d.Name, d.Source)
	}
	for _, d := range BuiltinLogs {
		check(d.Name, d.Source)
	}
	assert.Len(t, seen, len(BuiltinSpans)+len(BuiltinLogs))
	last := -1
	for i, d := range BuiltinSpans {
		if d.Name == genai.Name {
			last = i
		}
	}
	assert.Equal(t, len(BuiltinSpans)-1, last)
	assert.True(t, BuiltinLogs[len(BuiltinLogs)-1].OwnConversation, "the transcript lines are tried last")
	assert.Less(t, dialect.SourceEcho, dialect.SourceCustom)
	assert.Less(t, dialect.SourceEchoLog, dialect.SourceCustom)
	assert.LessOrEqual(t, int(dialect.SourceCustom)+MaxCustom, 256, "every custom dialect's source fits a byte")
}

// TestCustomDialects: each custom dialect is reported under its name with a source of its
// own, by its context; enabled picks the built-in dialects.
func TestCustomDialects(t *testing.T) {
	s, err := New(func(string) bool { return false }, exampleCustom(t), componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)
	require.Len(t, s.customLogs, 1)
	require.Len(t, s.customSpans, 1)
	assert.Empty(t, s.spans)
	assert.Empty(t, s.logs)
	assert.Equal(t, "acme_logs", s.customLogs[0].asLog.Name)
	assert.Equal(t, "acme_spans", s.customSpans[0].asSpn.Name)
	assert.NotEqual(t, s.customLogs[0].asLog.Source, s.customSpans[0].asSpn.Source)
	assert.True(t, s.Spans())
	assert.True(t, s.SpanConversations())
	assert.True(t, s.LogConversations())

	none, err := New(func(string) bool { return false }, nil, componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)
	assert.False(t, none.Spans())
	assert.False(t, none.Logs())
}

// TestValidateCustom: a custom dialect may not take a built-in dialect's name, nor another
// custom dialect's; every error names its entry.
func TestValidateCustom(t *testing.T) {
	cfgs := exampleCustom(t)
	require.NoError(t, ValidateCustom(cfgs))
	dup := append(cfgs[:1:1], cfgs[0])
	assert.ErrorContains(t, ValidateCustom(dup), `custom_dialects[1].name: "acme_logs" is already the name of custom_dialects[0]`)
	builtin := cfgs[0]
	builtin.Name = genai.Name
	assert.ErrorContains(t, ValidateCustom([]custom.Config{builtin}), "custom_dialects[0].name")
}

// TestItemsCarryConversationsOnlyWhenDeclared: on every capture and transcript file of
// testdata/, the items of a built-in or custom dialect carry a conversation of their own
// exactly when the dialect declares it (OwnConversation): an undeclared one would be ignored
// by callkey.Keyer.ForCalls, and route mode reads records with the dialects only when one
// declares it.
func TestItemsCarryConversationsOnlyWhenDeclared(t *testing.T) {
	set, err := New(all, exampleCustom(t), componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)
	scoped := map[string]int{} // items carrying a conversation, by dialect
	declared := map[string]bool{}
	check := func(name string, own bool, f *dialect.Found) {
		declared[name] = own
		for _, it := range f.Items {
			if it.Conversation != "" {
				scoped[name]++
				assert.True(t, own, "dialect %s gives item %s a conversation without declaring it", name, it.CallID)
			}
		}
	}
	var f dialect.Found
	root := filepath.Join("..", "..", "..", "..", "testdata")
	traces, err := filepath.Glob(filepath.Join(root, "*", "*", "traces.json"))
	require.NoError(t, err)
	traces = append(traces, filepath.Join(root, "custom", "traces.json"))
	for _, path := range traces {
		td, err := golden.ReadTraces(path)
		require.NoError(t, err)
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			sss := rss.At(i).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				spans := sss.At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					// Every dialect that reads the span, not only the one that claims it.
					for _, d := range BuiltinSpans {
						f.Reset()
						if d.Extract(spans.At(k), &f) {
							check(d.Name, d.OwnConversation, &f)
						}
					}
					f.Reset()
					if d := set.Span(context.Background(), rss.At(i), sss.At(j), spans.At(k), &f); d != nil {
						check(d.Name, d.OwnConversation, &f)
					}
				}
			}
		}
	}
	logs := func(ld plog.Logs) {
		rls := ld.ResourceLogs()
		for i := 0; i < rls.Len(); i++ {
			sls := rls.At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				lrs := sls.At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					for _, d := range BuiltinLogs {
						f.Reset()
						if d.Extract(lrs.At(k), &f) {
							check(d.Name, d.OwnConversation, &f)
						}
					}
					f.Reset()
					if d := set.Log(context.Background(), rls.At(i), sls.At(j), lrs.At(k), &f); d != nil {
						check(d.Name, d.OwnConversation, &f)
					}
				}
			}
		}
	}
	logFiles, err := filepath.Glob(filepath.Join(root, "*", "*", "logs.json"))
	require.NoError(t, err)
	logFiles = append(logFiles, filepath.Join(root, "custom", "logs.json"))
	for _, path := range logFiles {
		ld, err := golden.ReadLogs(path)
		require.NoError(t, err)
		logs(ld)
	}
	transcripts := 0
	require.NoError(t, filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		transcripts++
		logs(dialecttest.TranscriptLogs(t, path))
		return nil
	}))
	assert.GreaterOrEqual(t, transcripts, 15)
	for name, own := range declared {
		if own {
			assert.Positive(t, scoped[name], "dialect %s declares item conversations and gives none", name)
		}
	}
	assert.Contains(t, declared, "acme_spans")
	assert.Contains(t, declared, "acme_logs")
	assert.Contains(t, declared, genai.Name)
}
