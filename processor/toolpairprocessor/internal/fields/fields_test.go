// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package fields

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// mapOf returns the attributes of a log record decoded from OTLP JSON that holds the pairs in
// order, repeats included, as they arrive on the wire (pcommon.Map's Put methods would
// overwrite the first occurrence instead).
func mapOf(pairs ...kv) pcommon.Map {
	var b strings.Builder
	b.WriteString(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[`)
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte(',')
		}
		switch v := p.v.(type) {
		case string:
			fmt.Fprintf(&b, `{"key":%q,"value":{"stringValue":%q}}`, p.k, v)
		case int64:
			fmt.Fprintf(&b, `{"key":%q,"value":{"intValue":"%d"}}`, p.k, v)
		}
	}
	b.WriteString(`]}]}]}]}`)
	ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs([]byte(b.String()))
	if err != nil {
		panic(err)
	}
	return ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes()
}

func TestGetTakesTheLast(t *testing.T) {
	tests := []struct {
		name   string
		pairs  []kv
		key    string
		want   any
		wantOk bool
	}{
		{"absent", []kv{{"a", "1"}}, "b", nil, false},
		{"once", []kv{{"a", "1"}, {"b", "2"}}, "b", "2", true},
		{"repeated: the last", []kv{{"call_id", "first"}, {"x", "y"}, {"call_id", "last"}}, "call_id", "last", true},
		{"repeated with another type: the last", []kv{{"duration_ms", "12"}, {"duration_ms", int64(15)}}, "duration_ms", int64(15), true},
		{"empty map", nil, "a", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mapOf(tt.pairs...)
			v, ok := Get(m, tt.key)
			assert.Equal(t, tt.wantOk, ok)
			if ok {
				assert.Equal(t, tt.want, v.AsRaw())
			}
			first, _ := m.Get(tt.key)
			if tt.name == "repeated: the last" {
				assert.Equal(t, "first", first.Str(), "pcommon.Map.Get takes the first: the case this package exists for")
			}
		})
	}
	assert.Equal(t, "last", Str(mapOf(kv{"k", "first"}, kv{"k", "last"}), "k"))
	assert.Equal(t, "", Str(mapOf(kv{"k", "first"}, kv{"k", int64(1)}), "k"), "the last is not a string")
}

type kv struct {
	k string
	v any
}

// BenchmarkGet compares Get with pcommon.Map.Get on the attributes of a Claude Code
// tool_result event (17 keys): a key near the front, one at the end, and one absent.
func BenchmarkGet(b *testing.B) {
	m := mapOf(
		kv{"event.name", "tool_result"}, kv{"event.timestamp", "2026-02-10T21:12:01.117Z"},
		kv{"session.id", "72b63dad-969f-401e-a1e1-6208a465a3c6"}, kv{"user.id", "u"},
		kv{"organization.id", "o"}, kv{"user.account_uuid", "a"}, kv{"user.email", "e"},
		kv{"terminal.type", "vscode"}, kv{"app.version", "2.1.33"}, kv{"prompt.id", "p"},
		kv{"tool_name", "Bash"}, kv{"success", "true"}, kv{"duration_ms", "12"},
		kv{"decision_source", "config"}, kv{"decision_type", "accept"},
		kv{"tool_result_size_bytes", "4096"}, kv{"tool_use_id", "toolu_01ABC"},
	)
	for _, key := range []string{"event.name", "tool_use_id", "gen_ai.conversation.id"} {
		b.Run("pcommon/"+key, func(b *testing.B) {
			for b.Loop() {
				_, _ = m.Get(key)
			}
		})
		b.Run("fields/"+key, func(b *testing.B) {
			for b.Loop() {
				_, _ = Get(m, key)
			}
		})
	}
}

// TestGetNTakeTheLast: Get2 and Get3 read each key as Get does, repeats and absent keys
// included, in one pass.
func TestGetNTakeTheLast(t *testing.T) {
	m := mapOf(kv{"id", "first"}, kv{"tool", "Bash"}, kv{"x", "y"}, kv{"id", "last"}, kv{"n", int64(3)}, kv{"n", "4"})
	for _, keys := range [][3]string{{"id", "tool", "n"}, {"n", "absent", "id"}, {"absent", "x", "tool"}} {
		v0, ok0, v1, ok1, v2, ok2 := Get3(m, keys[0], keys[1], keys[2])
		for i, got := range []struct {
			v  pcommon.Value
			ok bool
		}{{v0, ok0}, {v1, ok1}, {v2, ok2}} {
			want, wantOk := Get(m, keys[i])
			assert.Equal(t, wantOk, got.ok, keys[i])
			if wantOk && got.ok {
				assert.Equal(t, want.AsRaw(), got.v.AsRaw(), keys[i])
			}
		}
		w0, okw0, w1, okw1 := Get2(m, keys[0], keys[1])
		assert.Equal(t, []bool{ok0, ok1}, []bool{okw0, okw1})
		if ok0 {
			assert.Equal(t, v0.AsRaw(), w0.AsRaw())
		}
		if ok1 {
			assert.Equal(t, v1.AsRaw(), w1.AsRaw())
		}
	}
}
