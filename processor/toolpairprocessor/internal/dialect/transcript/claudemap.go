// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// claudemap.go holds the reading of a Claude Code line whose body is an already-parsed map
// (the filelog receiver's json_parser), through fields.Get.

package transcript

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// extractMap is ExtractLog for a body already parsed into a map: a Claude Code line, else a
// pi/OpenClaw entry.
func extractMap(m pcommon.Map, lr plog.LogRecord, f *dialect.Found) bool {
	get := func(k string) string {
		if v, ok := fields.Get(m, k); ok && v.Type() == pcommon.ValueTypeStr {
			return v.Str()
		}
		return ""
	}
	l := line{typ: get("type"), sessionID: get("sessionId"), agentID: get("agentId"), timestamp: get("timestamp")}
	l.rejected = get("toolUseResult") == UserRejected
	if v, ok := fields.Get(m, "toolDenialKind"); ok && v.Type() != pcommon.ValueTypeEmpty {
		l.denial = true
	}
	if l.sessionID == "" {
		return extractPiMap(m, lr, f)
	}
	kind, want := blockKind(l.typ)
	if kind == 0 {
		return false
	}
	msg, ok := fields.Get(m, "message")
	if !ok || msg.Type() != pcommon.ValueTypeMap {
		return false
	}
	content, ok := fields.Get(msg.Map(), "content")
	if !ok || content.Type() != pcommon.ValueTypeSlice {
		return false
	}
	t := itemTime(lr, l.timestamp)
	scope := conversationOf(l)
	if id, ok := fields.Get(msg.Map(), "id"); ok && kind == pairing.KindUse && id.Type() == pcommon.ValueTypeStr && id.Str() != "" {
		l.messageID = id.Str()
		f.AddStep(pairing.KindBoundary, "", "", t, ScopeAttr, scope, l.messageID)
	}
	found := l.messageID != ""
	blocks := content.Slice()
	for i := 0; i < blocks.Len(); i++ {
		b := blocks.At(i)
		if b.Type() != pcommon.ValueTypeMap {
			continue
		}
		bm := b.Map()
		if bt, ok := fields.Get(bm, "type"); !ok || bt.AsString() != string(want) {
			continue
		}
		found = true
		idKey, name := "id", ""
		if kind == pairing.KindResult {
			idKey = "tool_use_id"
		} else if n, ok := fields.Get(bm, "name"); ok {
			name = n.AsString()
		}
		id, ok := fields.Get(bm, idKey)
		switch {
		case !ok || (id.Type() == pcommon.ValueTypeStr && id.Str() == ""):
			f.Skip(dialect.ReasonMissingCallID)
		case id.Type() != pcommon.ValueTypeStr:
			f.Skip(dialect.ReasonInvalidCallID)
		default:
			k := kind
			switch {
			case kind != pairing.KindResult:
			case l.refused() && isErrorMap(bm):
				k = pairing.KindRefused
			case interruptedMap(bm):
				k = pairing.KindAbort
			}
			f.AddStep(k, id.Str(), name, t, ScopeAttr, scope, l.messageID)
		}
	}
	if kind == pairing.KindResult {
		if r, ok := fields.Get(m, "toolUseResult"); ok && r.Type() == pcommon.ValueTypeMap {
			f.RunMs, f.HasRun = runOfMap(r.Map())
		}
	}
	return found
}

// isErrorMap reports whether a block of a parsed map body is marked is_error: true.
func isErrorMap(block pcommon.Map) bool {
	v, ok := fields.Get(block, "is_error")
	return ok && v.Type() == pcommon.ValueTypeBool && v.Bool()
}

// interruptedMap is interruptedContent for a block of a parsed map body.
func interruptedMap(block pcommon.Map) bool {
	v, ok := fields.Get(block, "content")
	if !ok {
		return false
	}
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return strings.HasPrefix(v.Str(), InterruptMarker)
	case pcommon.ValueTypeSlice:
		if v.Slice().Len() == 0 || v.Slice().At(0).Type() != pcommon.ValueTypeMap {
			return false
		}
		t, ok := fields.Get(v.Slice().At(0).Map(), "text")
		return ok && t.Type() == pcommon.ValueTypeStr && strings.HasPrefix(t.Str(), InterruptMarker)
	}
	return false
}
