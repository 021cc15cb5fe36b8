package normalize

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

func TestApply(t *testing.T) {
	mirrors := []string{"metadata.durationMs", "details.durationMs", "details.metadata.durationMs"}
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
			m := pcommon.NewMap()
			assert.NoError(t, m.FromRaw(tt.in))
			assert.Equal(t, tt.changed, New("durationMs", mirrors).Apply(m))
			assert.Equal(t, tt.want, m.AsRaw())
		})
	}
}

func TestNestedCanonical(t *testing.T) {
	m := pcommon.NewMap()
	assert.NoError(t, m.FromRaw(map[string]any{"toolUseResult": map[string]any{"durationMs": int64(120)}, "details": map[string]any{"durationMs": int64(1)}}))
	assert.True(t, New("toolUseResult.durationMs", []string{"details.durationMs"}).Apply(m))
	assert.Equal(t, int64(120), m.AsRaw()["details"].(map[string]any)["durationMs"])
}
