// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package callkey

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// session.id is read from a record's one pass in this package's tests, gen_ai.conversation.id
// by name: a Keyer made by New reads each its way (in the processor both are registered).
var _ = fields.Register("session.id")

// TestForCalls: the one rule spans, log records and route mode key calls by. A dialect's
// item conversation counts only when the dialect declares it gives one (own), whatever the
// signal; else the record's conversation attribute, its resource's, its trace ID, or nothing.
// The same from the record's attributes (ForCalls) and from its one pass (ForCallsIn), with
// a Keyer made by New and one made without.
func TestForCalls(t *testing.T) {
	convAttrs := []string{"gen_ai.conversation.id", "session.id"}
	changed := New([]string{"session.id", "gen_ai.conversation.id"}, nil)
	changed.ConversationAttrs = convAttrs // changed after New: read by name where they differ
	keyers := map[string]Keyer{"literal": {ConversationAttrs: convAttrs}, "New": New(convAttrs, nil), "changed after New": changed}
	tid := pcommon.TraceID{0xab, 1}
	withConv := []dialect.Item{{Kind: pairing.KindUse, CallID: "c1", Conversation: "sess-1", ConversationAttr: "acme.session_id"}, {Kind: pairing.KindUse, CallID: "c2", Conversation: "other"}}
	noConv := []dialect.Item{{Kind: pairing.KindUse, CallID: "c1"}}
	res := Fallback{name: "session.id", value: "res-sess", ok: true}
	tests := []struct {
		name      string
		own       bool
		items     []dialect.Item
		record    map[string]string
		fb        Fallback
		traceID   pcommon.TraceID
		wantAttr  string
		wantValue string
	}{
		{"own conversation of the first item", true, withConv, map[string]string{"session.id": "rec"}, res, tid, "acme.session_id", "sess-1"},
		{"item conversation of a dialect not declaring one is ignored", false, withConv, map[string]string{"session.id": "rec"}, res, tid, "session.id", "rec"},
		{"own dialect, empty item conversation: the record's", true, noConv, map[string]string{"gen_ai.conversation.id": "conv"}, res, tid, "gen_ai.conversation.id", "conv"},
		{"empty record attribute skipped: the resource's", false, noConv, map[string]string{"gen_ai.conversation.id": ""}, res, tid, "session.id", "res-sess"},
		{"no conversation attribute: the trace ID", false, withConv, nil, Fallback{}, tid, "", tid.String()},
		{"nothing: no conversation", true, noConv, nil, Fallback{}, pcommon.TraceID{}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			attrs := pcommon.NewMap()
			for n, v := range tt.record {
				attrs.PutStr(n, v)
			}
			var rec fields.Record
			rec.Reset(attrs)
			for kn, k := range keyers {
				for _, c := range []*TraceHex{nil, {}} {
					name, value := k.ForCalls(tt.own, tt.items, attrs, tt.fb, tt.traceID, c)
					assert.Equal(t, tt.wantAttr, name, kn)
					assert.Equal(t, tt.wantValue, value, kn)
					name, value = k.ForCallsIn(tt.own, tt.items, &rec, tt.fb, tt.traceID, c)
					assert.Equal(t, tt.wantAttr, name, kn+" in")
					assert.Equal(t, tt.wantValue, value, kn+" in")
				}
			}
		})
	}
}

// TestForResource: a resource's conversation attribute is its records' fallback.
func TestForResource(t *testing.T) {
	k := Keyer{ConversationAttrs: []string{"session.id"}}
	res := pcommon.NewResource()
	res.Attributes().PutStr("session.id", "s-9")
	name, value := k.Of(pcommon.NewMap(), k.ForResource(res), pcommon.TraceID{1}, nil)
	assert.Equal(t, "session.id", name)
	assert.Equal(t, "s-9", value)
}

// TestTenant: service.name, then each tenant attribute after a NUL byte; a missing attribute
// contributes an empty value.
func TestTenant(t *testing.T) {
	res := pcommon.NewResource()
	res.Attributes().PutStr("service.name", "agent")
	res.Attributes().PutStr("deployment.environment.name", "prod")
	assert.Equal(t, "agent", (&Keyer{}).Tenant(res))
	k := Keyer{TenantAttrs: []string{"deployment.environment.name", "tenant.id"}}
	assert.Equal(t, "agent\x00prod\x00", k.Tenant(res))
	assert.Equal(t, "\x00\x00", k.Tenant(pcommon.NewResource()))
}

// TestRoute: routes are 16 hex digits, depend on tenant and conversation only, and keep
// apart tenant and conversation strings that concatenate alike.
func TestRoute(t *testing.T) {
	tests := []struct {
		name         string
		tenantA, cvA string
		tenantB, cvB string
		equal        bool
	}{
		{"same key", "svc", "s1", "svc", "s1", true},
		{"other conversation", "svc", "s1", "svc", "s2", false},
		{"other tenant", "svc", "s1", "svc2", "s1", false},
		{"boundary moved", "ab", "c", "a", "bc", false},
		{"no conversation, by tenant", "svc", "", "svc", "", true},
		{"no conversation vs empty tenant", "svc", "", "", "svc", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := Route(tt.tenantA, tt.cvA), Route(tt.tenantB, tt.cvB)
			assert.Regexp(t, "^[0-9a-f]{16}$", a)
			assert.Equal(t, tt.equal, a == b)
		})
	}
}

// TestRouteIsStable: a route must not change between collectors or versions: a front tier
// and a back tier of different versions route a conversation alike.
func TestRouteIsStable(t *testing.T) {
	assert.Equal(t, "f76715d01f9fe37a", Route("svc", "s1"))
	assert.Equal(t, "a8c7f832281a39c5", Route("", ""))
}
