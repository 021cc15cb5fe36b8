// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package fields

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// claudeResult is the attribute map of a Claude Code tool_result event (internal/benchload).
func claudeResult() pcommon.Map {
	m := pcommon.NewMap()
	for _, kv := range [][2]string{
		{"session.id", "sess-1"}, {"terminal.type", "dumb"}, {"event.name", "tool_result"},
		{"event.timestamp", "2026-01-01T00:00:00.000Z"}, {"event.sequence", "3"},
		{"tool_name", "Bash"}, {"tool_use_id", "toolu_1"}, {"success", "true"}, {"duration_ms", "25"},
		{"tool_parameters", `{"bash_command":"echo"}`}, {"tool_input", `{"command":"echo hello"}`},
		{"tool_input_size_bytes", "52"}, {"tool_result_size_bytes", "5"},
	} {
		m.PutStr(kv[0], kv[1])
	}
	return m
}

// BenchmarkRead reads three fields of a Claude Code tool_result's attributes (two present,
// one absent): a Get per field, and Get3's one pass.
func BenchmarkRead(b *testing.B) {
	m := claudeResult()
	b.Run("get_per_field", func(b *testing.B) {
		for b.Loop() {
			_, ok0 := Get(m, "tool_use_id")
			_, ok1 := Get(m, "tool_name")
			_, ok2 := Get(m, "decision")
			if !ok0 || !ok1 || ok2 {
				b.Fatal("wrong fields")
			}
		}
	})
	b.Run("get3", func(b *testing.B) {
		for b.Loop() {
			_, ok0, _, ok1, _, ok2 := Get3(m, "tool_use_id", "tool_name", "decision")
			if !ok0 || !ok1 || ok2 {
				b.Fatal("wrong fields")
			}
		}
	})
	b.Run("get_present", func(b *testing.B) {
		for b.Loop() {
			if _, ok := Get(m, "tool_use_id"); !ok {
				b.Fatal("absent")
			}
		}
	})
	b.Run("get_absent", func(b *testing.B) {
		for b.Loop() {
			if _, ok := Get(m, "decision"); ok {
				b.Fatal("present")
			}
		}
	})
}
