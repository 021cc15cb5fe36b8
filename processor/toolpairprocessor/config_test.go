// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/custom"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

	tests := []struct {
		id   component.ID
		want *Config
	}{
		{id: component.NewID(metadata.Type), want: createDefaultConfig().(*Config)},
		{
			id: component.NewIDWithName(metadata.Type, "custom"),
			want: &Config{
				ConversationAttributes:   []string{"session.id"},
				TenantAttributes:         []string{"deployment.environment.name"},
				PairingTimeout:           2 * time.Minute,
				OrphanGrace:              5 * time.Second,
				MaxPendingCalls:          500,
				MaxPendingCallsPerTenant: 200,
				MaxCallsPerRecord:        64,
				MaxHeldBytes:             1 << 20,
				MaxUnsentBytes:           64 << 20,
				Dialects:                 []string{"genai"},
				Orphans:                  DispositionDrop,
				Duplicates:               DispositionMark,
				Synthesize:               false,
				TimeoutClassification: TimeoutClassificationConfig{
					Enabled:              false,
					CompactionSpanNames:  []string{`^my_agent\.compact`},
					CompactionEventNames: []string{`^claude_code\.compaction$`, `compaction`},
					Retention:            time.Minute,
					MaxTrackedOperations: 2000,
				},
				DurationNormalization: DurationNormalizationConfig{
					Enabled:   true,
					Canonical: "details.durationMs",
					Mirrors:   []string{"durationMs"},
				},
				Storage:            ptrTo(component.MustNewIDWithName("file_storage", "toolpair")),
				CheckpointInterval: 2 * time.Second,
				CustomDialects: []custom.Config{{
					Name:                  "my_agent",
					Context:               custom.ContextSpan,
					Use:                   `name == "my_agent.llm"`,
					StepBoundary:          `name == "my_agent.llm"`,
					Calls:                 `attributes["my_agent.tool_calls"]`,
					CallsPath:             "choices.0.calls",
					CallIDPath:            "function.id",
					ToolNamePath:          "function.name",
					Result:                `name == "my_agent.tool" and attributes["my_agent.status"] != "cancelled"`,
					Abort:                 `attributes["my_agent.status"] == "cancelled"`,
					Reject:                `name == "my_agent.refusal"`,
					SessionEnd:            `name == "my_agent.run"`,
					CallID:                `attributes["my_agent.call_id"]`,
					ToolName:              `attributes["my_agent.tool"]`,
					Conversation:          `resource.attributes["my_agent.workspace"]`,
					ConversationAttribute: "my_agent.workspace",
					Time:                  `Time(attributes["my_agent.at"], "%Y-%m-%dT%H:%M:%SZ")`,
				}},
				Mode:           ModeRoute,
				RouteAttribute: "lb.scope",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.id.String(), func(t *testing.T) {
			cfg := createDefaultConfig()
			sub, err := cm.Sub(tt.id.String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			require.NoError(t, confmap.Validate(cfg))
			assert.Equal(t, tt.want, cfg)
		})
	}
}

func TestDefaults(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	assert.Equal(t, []string{"gen_ai.conversation.id", "session.id", "conversation.id"}, cfg.ConversationAttributes)
	assert.Empty(t, cfg.TenantAttributes)
	assert.Equal(t, 10*time.Minute, cfg.PairingTimeout)
	assert.Equal(t, 30*time.Second, cfg.OrphanGrace)
	assert.Equal(t, 100_000, cfg.MaxPendingCalls)
	assert.ElementsMatch(t, []string{"genai", "genai_events", "claude_code", "codex", "transcript", "gemini_cli", "ai_sdk", "openinference", "openllmetry", "voltagent", "adk"}, cfg.Dialects)
	assert.Equal(t, DispositionMark, cfg.Orphans)
	assert.Equal(t, DispositionDrop, cfg.Duplicates)
	assert.True(t, cfg.Synthesize)
	assert.True(t, cfg.TimeoutClassification.Enabled)
	assert.Equal(t, 5*time.Minute, cfg.TimeoutClassification.Retention)
	assert.Equal(t, 100_000, cfg.TimeoutClassification.MaxTrackedOperations)
	assert.Equal(t, []string{`^claude_code\.compaction$`, `^openclaw\.compaction$`}, cfg.TimeoutClassification.CompactionSpanNames)
	assert.Equal(t, []string{`^claude_code\.compaction$`, `^openclaw\.compaction$`}, cfg.TimeoutClassification.CompactionEventNames)
	assert.True(t, cfg.DurationNormalization.Enabled)
	assert.Equal(t, "durationMs", cfg.DurationNormalization.Canonical)
	assert.Equal(t, []string{"metadata.durationMs", "details.durationMs", "details.metadata.durationMs"}, cfg.DurationNormalization.Mirrors)
	assert.Equal(t, ModePair, cfg.Mode)
	assert.Equal(t, "toolpair.route", cfg.RouteAttribute)
}

// TestInvalidConfigNamesTheKey loads each invalid value from YAML, as the collector does at
// start-up, and checks the error names the key at fault.
func TestInvalidConfigNamesTheKey(t *testing.T) {
	tests := []struct {
		yaml map[string]any
		key  string
	}{
		{map[string]any{"pairing_timeout": "0s"}, "pairing_timeout"},
		{map[string]any{"pairing_timeout": "-1m"}, "pairing_timeout"},
		{map[string]any{"checkpoint_interval": "0s"}, "checkpoint_interval"},
		{map[string]any{"checkpoint_interval": "-1s"}, "checkpoint_interval"},
		{map[string]any{"orphan_grace": "0s"}, "orphan_grace"},
		{map[string]any{"orphan_grace": "-5s"}, "orphan_grace"},
		{map[string]any{"max_pending_calls": 0}, "max_pending_calls"},
		{map[string]any{"max_pending_calls": -3}, "max_pending_calls"},
		{map[string]any{"dialects": []any{"genai", "langchain"}}, "dialects"},
		{map[string]any{"orphans": "keep"}, "orphans"},
		{map[string]any{"duplicates": "ignore"}, "duplicates"},
		{map[string]any{"scope_attributes": []any{""}}, "scope_attributes"},
		{map[string]any{"tenant_attributes": []any{" "}}, "tenant_attributes"},
		{map[string]any{"duration_normalization": map[string]any{"canonical": ""}}, "duration_normalization.canonical"},
		{map[string]any{"timeout_classification": map[string]any{"retention": "0s"}}, "timeout_classification.retention"},
		{map[string]any{"timeout_classification": map[string]any{"retention": "-1m"}}, "timeout_classification.retention"},
		{map[string]any{"timeout_classification": map[string]any{"max_tracked_operations": 0}}, "timeout_classification.max_tracked_operations"},
		{map[string]any{"timeout_classification": map[string]any{"compaction_span_names": []any{"("}}}, "timeout_classification.compaction_span_names[0]"},
		{map[string]any{"timeout_classification": map[string]any{"compaction_event_names": []any{"ok", ""}}}, "timeout_classification.compaction_event_names[1]"},
		{map[string]any{"timeout_classification": map[string]any{"enabled": false, "retention": "0s"}}, "timeout_classification.retention"},
		{map[string]any{"duration_normalization": map[string]any{"mirrors": []any{""}}}, "duration_normalization.mirrors"},
		{map[string]any{"mode": "shard"}, "mode"},
		{map[string]any{"mode": ""}, "mode"},
		{map[string]any{"mode": "route", "route_attribute": ""}, "route_attribute"},
		{map[string]any{"route_attribute": " "}, "route_attribute"},
		{map[string]any{"mode": "route", "route_attribute": "session.id"}, "route_attribute"},
		{map[string]any{"mode": "route", "route_attribute": "service.name"}, "route_attribute"},
		{map[string]any{"mode": "route", "tenant_attributes": []any{"k8s.namespace.name"}, "route_attribute": "k8s.namespace.name"}, "route_attribute"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			cfg := createDefaultConfig()
			require.NoError(t, confmap.NewFromStringMap(tt.yaml).Unmarshal(cfg))
			err := confmap.Validate(cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.key)
		})
	}
}

func TestUnknownKeyIsRefused(t *testing.T) {
	cfg := createDefaultConfig()
	err := confmap.NewFromStringMap(map[string]any{"pairing_timout": "1m"}).Unmarshal(cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pairing_timout")
}

func TestNormalizationDisabledSkipsItsChecks(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.DurationNormalization = DurationNormalizationConfig{Enabled: false}
	assert.NoError(t, cfg.Validate())
}

func ptrTo[T any](v T) *T { return &v }

// TestRouteAttributeIsNoCustomScopeAttribute: a route_attribute equal to a custom dialect's
// scope_attribute (set, or its default under a scope expression) is refused, in either mode,
// with an error naming both keys; another name is accepted.
func TestRouteAttributeIsNoCustomScopeAttribute(t *testing.T) {
	dialect := func(scopeAttr string) map[string]any {
		d := map[string]any{
			"name": "acme", "context": "log",
			"use":     `event_name == "acme.tool.start"`,
			"result":  `event_name == "acme.tool.end"`,
			"call_id": `attributes["acme.call_id"]`,
			"scope":   `attributes["acme.session_id"]`,
		}
		if scopeAttr != "" {
			d["scope_attribute"] = scopeAttr
		}
		return d
	}
	tests := []struct {
		name      string
		mode      Mode
		scopeAttr string // of the custom dialect; "" for its default
		scopes    []any  // scope_attributes
		route     string
		refused   bool
	}{
		{"route mode, the dialect's scope attribute", ModeRoute, "acme.session_id", nil, "acme.session_id", true},
		{"pair mode too", ModePair, "acme.session_id", nil, "acme.session_id", true},
		{"the default scope attribute", ModeRoute, "", []any{"gen_ai.conversation.id"}, custom.DefaultScopeAttribute, true},
		{"another attribute", ModeRoute, "acme.session_id", nil, "acme.route", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf := map[string]any{
				"mode":            string(tt.mode),
				"route_attribute": tt.route,
				"custom_dialects": []any{dialect(tt.scopeAttr)},
			}
			if tt.scopes != nil {
				conf["scope_attributes"] = tt.scopes
			}
			cfg := createDefaultConfig()
			require.NoError(t, confmap.NewFromStringMap(conf).Unmarshal(cfg))
			err := confmap.Validate(cfg)
			if !tt.refused {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), "route_attribute")
			assert.Contains(t, err.Error(), "custom_dialects[0].scope_attribute")
		})
	}
}
