// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package normalize

import (
	"slices"
	"testing"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// checkBoth applies n to a map made of in with Apply, and to another with ApplyIn (the
// registered default paths read from a record's one pass, the others with fields.Get): both
// must leave want and report changed.
func checkBoth(t *testing.T, n *Normalizer, in, want map[string]any, changed bool) {
	t.Helper()
	m := pcommon.NewMap()
	assert.NoError(t, m.FromRaw(in))
	assert.Equal(t, changed, n.Apply(m), "Apply")
	assert.Equal(t, want, m.AsRaw(), "Apply")

	m = pcommon.NewMap()
	assert.NoError(t, m.FromRaw(in))
	var r fields.Record
	r.Reset(m)
	assert.Equal(t, changed, n.ApplyIn(&r), "ApplyIn")
	assert.Equal(t, want, m.AsRaw(), "ApplyIn")
}

func TestApply(t *testing.T) {
	mirrors := slices.Clone(DefaultMirrors)
	tests := []struct {
		name    string
		in      map[string]any
		want    map[string]any
		changed bool
	}{
		{
			name:    "int canonical, flat mirror present",
			in:      map[string]any{"durationMs": int64(461), "details.durationMs": int64(3)},
			want:    map[string]any{"durationMs": int64(461), "details.durationMs": int64(461)},
			changed: true,
		},
		{
			name:    "double canonical rounds, nested mirrors present",
			in:      map[string]any{"durationMs": 3322.6, "details": map[string]any{"durationMs": "x", "metadata": map[string]any{"durationMs": 1.0}}},
			want:    map[string]any{"durationMs": 3322.6, "details": map[string]any{"durationMs": int64(3323), "metadata": map[string]any{"durationMs": int64(3323)}}},
			changed: true,
		},
		{
			name:    "numeric string canonical",
			in:      map[string]any{"durationMs": " 31 ", "metadata": map[string]any{"durationMs": int64(0)}},
			want:    map[string]any{"durationMs": " 31 ", "metadata": map[string]any{"durationMs": int64(31)}},
			changed: true,
		},
		{
			name: "mirrors absent: nothing is created",
			in:   map[string]any{"durationMs": int64(5), "details": map[string]any{"status": "ok"}},
			want: map[string]any{"durationMs": int64(5), "details": map[string]any{"status": "ok"}},
		},
		{
			name: "canonical absent: a mirror-only record is never promoted",
			in:   map[string]any{"details.durationMs": int64(9)},
			want: map[string]any{"details.durationMs": int64(9)},
		},
		{
			name: "non-numeric canonical counts as missing",
			in:   map[string]any{"durationMs": "fast", "details.durationMs": int64(9)},
			want: map[string]any{"durationMs": "fast", "details.durationMs": int64(9)},
		},
		{
			name: "mirror already equal",
			in:   map[string]any{"durationMs": int64(9), "details.durationMs": int64(9)},
			want: map[string]any{"durationMs": int64(9), "details.durationMs": int64(9)},
		},
		{
			name: "a path through a non-map stops",
			in:   map[string]any{"durationMs": int64(9), "details": "text"},
			want: map[string]any{"durationMs": int64(9), "details": "text"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkBoth(t, New(DefaultCanonical, mirrors), tt.in, tt.want, tt.changed)
		})
	}
}

// TestClaudeCodeTranscriptShapes runs the rules on the body shape of a real Claude Code
// transcript tool_result line (testdata/transcripts/claude-code: `toolUseResult` holds
// `durationMs` next to the tool's own output fields), with the canonical field configured as
// `toolUseResult.durationMs` and with the defaults.
func TestClaudeCodeTranscriptShapes(t *testing.T) {
	// The Glob result of a real line, trimmed to its duration-related fields.
	line := func(result map[string]any) map[string]any {
		return map[string]any{"type": "user", "sessionId": "s1", "toolUseResult": result}
	}
	tests := []struct {
		name      string
		canonical string
		mirrors   []string
		in, want  map[string]any
		changed   bool
	}{
		{
			name:      "nested canonical, top-level mirror present",
			canonical: "toolUseResult.durationMs",
			mirrors:   []string{"durationMs"},
			in:        map[string]any{"type": "user", "durationMs": "0", "toolUseResult": map[string]any{"durationMs": int64(411), "numFiles": int64(1)}},
			want:      map[string]any{"type": "user", "durationMs": int64(411), "toolUseResult": map[string]any{"durationMs": int64(411), "numFiles": int64(1)}},
			changed:   true,
		},
		{
			name:      "nested canonical, nested mirror present",
			canonical: "toolUseResult.durationMs",
			mirrors:   []string{"toolUseResult.metadata.durationMs"},
			in:        line(map[string]any{"durationMs": 638.4, "metadata": map[string]any{"durationMs": int64(1)}}),
			want:      line(map[string]any{"durationMs": 638.4, "metadata": map[string]any{"durationMs": int64(638)}}),
			changed:   true,
		},
		{
			name:      "nested canonical, no mirror: nothing created",
			canonical: "toolUseResult.durationMs",
			mirrors:   []string{"durationMs", "toolUseResult.metadata.durationMs"},
			in:        line(map[string]any{"durationMs": int64(593), "truncated": false}),
			want:      line(map[string]any{"durationMs": int64(593), "truncated": false}),
		},
		{
			name:      "defaults on a transcript line: the canonical durationMs is not at the top, nothing written",
			canonical: "durationMs",
			mirrors:   []string{"metadata.durationMs", "details.durationMs", "details.metadata.durationMs"},
			in:        line(map[string]any{"durationMs": int64(776), "details": map[string]any{"durationMs": int64(2)}}),
			want:      line(map[string]any{"durationMs": int64(776), "details": map[string]any{"durationMs": int64(2)}}),
		},
		{
			name:      "toolUseResult is a string (a failed call's error text): canonical missing",
			canonical: "toolUseResult.durationMs",
			mirrors:   []string{"durationMs"},
			in:        map[string]any{"toolUseResult": "Error: exit code 1", "durationMs": int64(3)},
			want:      map[string]any{"toolUseResult": "Error: exit code 1", "durationMs": int64(3)},
		},
		{
			name:      "boolean canonical counts as missing",
			canonical: "toolUseResult.durationMs",
			mirrors:   []string{"durationMs"},
			in:        map[string]any{"toolUseResult": map[string]any{"durationMs": true}, "durationMs": int64(3)},
			want:      map[string]any{"toolUseResult": map[string]any{"durationMs": true}, "durationMs": int64(3)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkBoth(t, New(tt.canonical, tt.mirrors), tt.in, tt.want, tt.changed)
		})
	}
}
