// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

// Specification section 1: the call key a use and its result share.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestContractS1CallKey: a result pairs only with a use of the same call key (tenant, scope,
// call ID). Scope: the first of scope_attributes present on the record, else on its
// resource; else the trace ID; else none. Tenant: service.name plus tenant_attributes.
func TestContractS1CallKey(t *testing.T) {
	res := func(s ctSpan, kv ...any) ctSpan {
		s.res = map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			s.res[kv[i].(string)] = kv[i+1]
		}
		return s
	}
	tests := []struct {
		name   string
		mutate func(*Config)
		use    ctSpan
		result ctSpan
		want   string // outcome of the result record
	}{
		{name: "same trace, no scope attribute: the trace ID is the scope",
			use: ctChat(1, 1, 0, 0, 100, "c1"), result: ctTool(1, 2, 0, "c1", 110, 150), want: "paired"},
		{name: "other trace, no scope attribute: other scope",
			use: ctChat(1, 1, 0, 0, 100, "c1"), result: ctTool(2, 2, 0, "c1", 110, 150), want: "standalone"},
		{name: "gen_ai.conversation.id on the records keys across traces",
			use:    ctWith(ctChat(1, 1, 0, 0, 100, "c1"), "gen_ai.conversation.id", "conv-a"),
			result: ctWith(ctTool(2, 2, 0, "c1", 110, 150), "gen_ai.conversation.id", "conv-a"), want: "paired"},
		{name: "session.id on the records keys across traces",
			use:    ctWith(ctChat(1, 1, 0, 0, 100, "c1"), "session.id", "s-a"),
			result: ctWith(ctTool(2, 2, 0, "c1", 110, 150), "session.id", "s-a"), want: "paired"},
		{name: "conversation.id on the records keys across traces",
			use:    ctWith(ctChat(1, 1, 0, 0, 100, "c1"), "conversation.id", "k-a"),
			result: ctWith(ctTool(2, 2, 0, "c1", 110, 150), "conversation.id", "k-a"), want: "paired"},
		{name: "different conversation in one trace: other scope",
			use:    ctWith(ctChat(1, 1, 0, 0, 100, "c1"), "gen_ai.conversation.id", "conv-a"),
			result: ctWith(ctTool(1, 2, 0, "c1", 110, 150), "gen_ai.conversation.id", "conv-b"), want: "standalone"},
		{name: "scope on the resource",
			use:    res(ctChat(1, 1, 0, 0, 100, "c1"), "session.id", "s-r"),
			result: res(ctTool(2, 2, 0, "c1", 110, 150), "session.id", "s-r"), want: "paired"},
		{name: "the record's scope attribute wins over its resource's",
			use:    ctWith(res(ctChat(1, 1, 0, 0, 100, "c1"), "session.id", "s-r"), "session.id", "s-own"),
			result: res(ctTool(2, 2, 0, "c1", 110, 150), "session.id", "s-r"), want: "standalone"},
		{name: "a record attribute later in the list wins over the resource's first",
			use:    ctWith(res(ctChat(1, 1, 0, 0, 100, "c1"), "gen_ai.conversation.id", "conv-r"), "conversation.id", "k-own"),
			result: ctWith(ctTool(2, 2, 0, "c1", 110, 150), "conversation.id", "k-own"), want: "paired"},
		{name: "the first attribute of scope_attributes wins",
			use:    ctWith(ctChat(1, 1, 0, 0, 100, "c1"), "gen_ai.conversation.id", "conv-a", "session.id", "s-a"),
			result: ctWith(ctTool(2, 2, 0, "c1", 110, 150), "session.id", "s-a"), want: "standalone"},
		{name: "configured scope_attributes replace the defaults",
			mutate: func(c *Config) { c.ConversationAttributes = []string{"thread.id"} },
			use:    ctWith(ctChat(1, 1, 0, 0, 100, "c1"), "thread.id", "th", "gen_ai.conversation.id", "conv-a"),
			result: ctWith(ctTool(2, 2, 0, "c1", 110, 150), "thread.id", "th", "gen_ai.conversation.id", "conv-b"), want: "paired"},
		{name: "another service.name is another tenant",
			use: ctChat(1, 1, 0, 0, 100, "c1"), result: func() ctSpan { s := ctTool(1, 2, 0, "c1", 110, 150); s.service = "other"; return s }(),
			want: "standalone"},
		{name: "tenant_attributes: another value is another tenant",
			mutate: func(c *Config) { c.TenantAttributes = []string{"deployment.environment.name"} },
			use:    res(ctChat(1, 1, 0, 0, 100, "c1"), "deployment.environment.name", "prod"),
			result: res(ctTool(1, 2, 0, "c1", 110, 150), "deployment.environment.name", "dev"), want: "standalone"},
		{name: "tenant_attributes: the same value pairs",
			mutate: func(c *Config) { c.TenantAttributes = []string{"deployment.environment.name"} },
			use:    res(ctChat(1, 1, 0, 0, 100, "c1"), "deployment.environment.name", "prod"),
			result: res(ctTool(1, 2, 0, "c1", 110, 150), "deployment.environment.name", "prod"), want: "paired"},
		{name: "a resource attribute not in tenant_attributes does not split tenants",
			use:    res(ctChat(1, 1, 0, 0, 100, "c1"), "host.name", "a"),
			result: res(ctTool(1, 2, 0, "c1", 110, 150), "host.name", "b"), want: "paired"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, withConfig(tt.mutate))
			r.spans(tt.use, tt.result)
			r.advance(r.cfg.OrphanGrace + time.Second)
			got := r.marks(nil)["c1"]
			require.NotEmpty(t, got)
			assert.Equal(t, "span:"+tt.want, got[0])
			r.checkConservation()
		})
	}

	// No scope at all (log records without scope attribute or trace ID): the call key is
	// (tenant, no scope, call ID), and records of one tenant pair.
	t.Run("no scope: log records without scope attribute or trace ID", func(t *testing.T) {
		r := newRig(t)
		use, result := ctClaudeDecision("c1", "accept", 100), ctClaudeResult("c1", 300)
		delete(use.attrs, "session.id")
		delete(result.attrs, "session.id")
		r.logRecords(use, result)
		assert.Equal(t, map[string][]string{"c1": {"log:paired"}}, r.marks(nil))
		r.checkConservation()
	})
}
