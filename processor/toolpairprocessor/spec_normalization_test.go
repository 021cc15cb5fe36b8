// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

// Specification section 5: duration normalization.

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestContractS5DurationNormalization: on tool_result records (attributes, and map bodies),
// when the canonical field exists (int, double or numeric string) every mirror that exists is
// set to it as an int of milliseconds; a missing canonical field writes nothing, a mirror-only
// record is never promoted, a mirror is never created; disabled, records pass untouched. Use
// records and records that are not tool records are never touched.
func TestContractS5DurationNormalization(t *testing.T) {
	type rec struct {
		attrs map[string]any
		body  map[string]any // a pi/OpenClaw toolResult entry as a map body when set
	}
	tests := []struct {
		name      string
		mutate    func(*Config)
		in        rec
		wantAttrs map[string]any // the attributes asked about, after
		wantBody  map[string]any // the body's details after, when a body is given
	}{
		{name: "int canonical, every existing mirror set, none created",
			in:        rec{attrs: map[string]any{"durationMs": int64(461), "metadata.durationMs": int64(3), "details": map[string]any{"durationMs": "9"}}},
			wantAttrs: map[string]any{"durationMs": int64(461), "metadata.durationMs": int64(461), "details": map[string]any{"durationMs": int64(461)}}},
		{name: "numeric string canonical becomes an int on the mirrors; the canonical is left as it is",
			in:        rec{attrs: map[string]any{"durationMs": "461", "details": map[string]any{"durationMs": 1.5, "metadata": map[string]any{"durationMs": "x"}}}},
			wantAttrs: map[string]any{"durationMs": "461", "details": map[string]any{"durationMs": int64(461), "metadata": map[string]any{"durationMs": int64(461)}}}},
		{name: "double canonical rounded to ms",
			in:        rec{attrs: map[string]any{"durationMs": 460.6, "metadata.durationMs": int64(0)}},
			wantAttrs: map[string]any{"durationMs": 460.6, "metadata.durationMs": int64(461)}},
		{name: "missing canonical writes nothing (a mirror-only record is never promoted)",
			in:        rec{attrs: map[string]any{"metadata.durationMs": int64(3), "details": map[string]any{"durationMs": "9"}}},
			wantAttrs: map[string]any{"metadata.durationMs": int64(3), "details": map[string]any{"durationMs": "9"}}},
		{name: "a non-numeric canonical counts as missing",
			in:        rec{attrs: map[string]any{"durationMs": "fast", "metadata.durationMs": int64(3)}},
			wantAttrs: map[string]any{"durationMs": "fast", "metadata.durationMs": int64(3)}},
		{name: "disabled: untouched", mutate: func(c *Config) { c.DurationNormalization.Enabled = false },
			in:        rec{attrs: map[string]any{"durationMs": int64(461), "metadata.durationMs": int64(3)}},
			wantAttrs: map[string]any{"durationMs": int64(461), "metadata.durationMs": int64(3)}},
		{name: "configured canonical and mirrors", mutate: func(c *Config) {
			c.DurationNormalization.Canonical, c.DurationNormalization.Mirrors = "details.durationMs", []string{"durationMs", "timing.ms"}
		},
			in:        rec{attrs: map[string]any{"durationMs": int64(1), "metadata.durationMs": int64(3), "timing": map[string]any{"ms": int64(2)}, "details": map[string]any{"durationMs": int64(77)}}},
			wantAttrs: map[string]any{"durationMs": int64(77), "metadata.durationMs": int64(3), "timing": map[string]any{"ms": int64(77)}, "details": map[string]any{"durationMs": int64(77)}}},
		{name: "map body of a transcript result",
			in:       rec{body: map[string]any{"durationMs": "461", "details": map[string]any{"durationMs": int64(3), "metadata": map[string]any{}}}},
			wantBody: map[string]any{"durationMs": "461", "details": map[string]any{"durationMs": int64(461), "metadata": map[string]any{}}}},
	}
	for _, tt := range tests {
		for _, signal := range []string{"span", "log"} {
			if tt.in.body != nil && signal == "span" {
				continue
			}
			t.Run(signal+"/"+tt.name, func(t *testing.T) {
				r := newRig(t, withConfig(tt.mutate))
				switch {
				case tt.in.body != nil:
					body := ctPiResult("e2", "call_pi", 200, nil)
					for k, v := range tt.in.body {
						body[k] = v
					}
					use := ctLine("/pi/a.jsonl", ctPiUse("e1", "call_pi", 100))
					res := ctLog{service: "transcripts", observed: 999_000, body: body, attrs: map[string]any{"log.file.path": "/pi/a.jsonl"}}
					r.logRecords(use, res)
					out := r.outLogs()
					require.Len(t, out, 2)
					got := out[1].Body().Map().AsRaw()
					assert.Equal(t, tt.wantBody["durationMs"], got["durationMs"])
					assert.Equal(t, tt.wantBody["details"], got["details"])
					assert.Equal(t, "paired", ctStr(out[1].Attributes(), "toolpair.outcome"))
				case signal == "span":
					res := ctTool(1, 2, 0, "c1", 110, 150)
					for k, v := range tt.in.attrs {
						res.attrs[k] = v
					}
					use := ctChat(1, 1, 0, 0, 100, "c1")
					for k, v := range tt.in.attrs {
						use.attrs[k] = v // a use record is never normalized
					}
					r.spans(res) // held while its use is missing: normalized as it leaves
					r.spans(use)
					out := r.outSpans()
					require.Len(t, out, 2)
					for _, s := range out {
						got := s.Attributes().AsRaw()
						want := tt.wantAttrs
						if s.Name() == "chat m" {
							want = tt.in.attrs
						} else {
							assert.Equal(t, "paired", got["toolpair.outcome"])
						}
						for k, v := range want {
							assert.Equal(t, v, got[k], "%s %s", s.Name(), k)
						}
						for k := range got {
							if strings.Contains(strings.ToLower(k), "duration") && k != "toolpair.call.duration_ms" {
								assert.Contains(t, want, k, "%s: no field created", s.Name())
							}
						}
					}
				default:
					res := ctClaudeResult("toolu_1", 300)
					for k, v := range tt.in.attrs {
						res.attrs[k] = v
					}
					r.logRecords(ctClaudeDecision("toolu_1", "accept", 100), res)
					out := r.outLogs()
					require.Len(t, out, 2)
					got := out[1].Attributes().AsRaw()
					for k, v := range tt.wantAttrs {
						assert.Equal(t, v, got[k], k)
					}
					assert.Equal(t, "12", got["duration_ms"], "not a mirror")
				}
			})
		}
	}

	t.Run("records that are not tool results are untouched", func(t *testing.T) {
		r := newRig(t)
		in := map[string]any{"durationMs": int64(461), "metadata.durationMs": int64(3)}
		r.spans(ctSpan{trace: 1, id: 1, name: "GET /", start: 0, end: 10, attrs: in})
		out := r.outSpans()
		require.Len(t, out, 1)
		assert.Equal(t, in, out[0].Attributes().AsRaw())
	})
}

// TestDurationNormalizationOnResultRecords: with duration normalization on, a transcript
// result line's details.durationMs takes the line's durationMs; off, it is left alone; a line
// that is not a result is never touched.
func TestDurationNormalizationOnResultRecords(t *testing.T) {
	for _, enabled := range []bool{true, false} {
		b := newRig(t, withConfig(func(c *Config) { c.DurationNormalization.Enabled = enabled }))
		line := transcriptLine("user", "", map[string]any{"type": "tool_result", "tool_use_id": "a"})
		body := line.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body().Map()
		require.NoError(t, body.FromRaw(map[string]any{
			"type": "user", "sessionId": "sess", "timestamp": "2026-02-10T21:12:02.480Z",
			"message":    map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "a"}}},
			"durationMs": "461", "details": map[string]any{"durationMs": int64(3)},
		}))
		other := transcriptLine("assistant", "m1") // not a result: never touched
		obody := other.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body().Map()
		obody.PutInt("durationMs", 5)
		obody.PutEmptyMap("details").PutInt("durationMs", 1)
		require.NoError(t, b.logs.ConsumeLogs(context.Background(), other))
		require.NoError(t, b.logs.ConsumeLogs(context.Background(), line))
		b.shutdown()
		var got []int64
		for _, lr := range allLogs(b.lsink) {
			d, _ := lr.Body().Map().Get("details")
			v, _ := d.Map().Get("durationMs")
			got = append(got, v.Int())
		}
		if enabled {
			assert.Equal(t, []int64{1, 461}, got)
		} else {
			assert.Equal(t, []int64{1, 3}, got)
		}
	}
}
