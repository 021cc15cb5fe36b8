// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package callkey computes the tenant and conversation parts of a call key (specification
// section 1) and the route of a conversation in route mode (section 8). A call key is
// (tenant, conversation, call ID): the tenant comes from a record's resource, the
// conversation from the record, its resource, or its trace.
package callkey

import (
	"encoding/binary"
	"encoding/hex"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
)

var attrServiceName = string(semconv.ServiceNameKey)

// Keyer computes the tenant and conversation of records from the configured attributes.
// The zero Keyer keys every record by service.name and its trace ID.
type Keyer struct {
	// ConversationAttrs are the attributes naming a conversation, tried in order on the
	// record, then on its resource (config key scope_attributes).
	ConversationAttrs []string
	// TenantAttrs are resource attributes whose values join service.name in the tenant
	// (config key tenant_attributes).
	TenantAttrs []string

	// convKeys are ConversationAttrs as New saw them, each with its key among those a
	// record's one pass reads; a Keyer built without New reads ConversationAttrs by name.
	convKeys []convKey
}

// convKey is a conversation attribute, with its registered key of package fields when it is
// one.
type convKey struct {
	name       string
	key        fields.Key
	registered bool
}

// New returns the Keyer of the configured conversation and tenant attributes, their
// conversation attributes resolved once among the keys a record's one pass reads
// (fields.Record): inRecord then reads them without hashing their names for every record.
func New(conversationAttrs, tenantAttrs []string) Keyer {
	k := Keyer{ConversationAttrs: conversationAttrs, TenantAttrs: tenantAttrs}
	k.convKeys = make([]convKey, len(conversationAttrs))
	for i, n := range conversationAttrs {
		k.convKeys[i].name = n
		k.convKeys[i].key, k.convKeys[i].registered = fields.Lookup(n)
	}
	return k
}

// Tenant returns service.name followed by the values of the tenant attributes, separated by
// NUL bytes (which attribute values from OTLP practically never contain). A missing
// attribute contributes an empty value, so resources that differ only in it stay apart.
func (k *Keyer) Tenant(res pcommon.Resource) string {
	attrs := res.Attributes()
	svc := ""
	if v, ok := fields.Get(attrs, attrServiceName); ok {
		svc = v.AsString()
	}
	if len(k.TenantAttrs) == 0 {
		return svc
	}
	var b strings.Builder
	b.WriteString(svc)
	for _, name := range k.TenantAttrs {
		b.WriteByte(0)
		if v, ok := fields.Get(attrs, name); ok {
			b.WriteString(v.AsString())
		}
	}
	return b.String()
}

// in returns the first conversation attribute present in attrs with a non-empty value, and
// that value.
func (k *Keyer) in(attrs pcommon.Map) (name, value string, ok bool) {
	for _, n := range k.ConversationAttrs {
		if v, found := fields.Get(attrs, n); found {
			if s := v.AsString(); s != "" {
				return n, s, true
			}
		}
	}
	return "", "", false
}

// inRecord is in of the attributes a reads, in a's one pass for the registered keys.
func (k *Keyer) inRecord(a *fields.Record) (name, value string, ok bool) {
	for i, n := range k.ConversationAttrs {
		var v pcommon.Value
		var found bool
		// The resolved key only for the attribute New resolved (the same string: a Keyer
		// whose attributes changed since reads the others by name).
		if i < len(k.convKeys) && k.convKeys[i].registered && k.convKeys[i].name == n {
			v, found = a.Value(k.convKeys[i].key)
		} else {
			v, found = a.Get(n)
		}
		if found {
			if s := v.AsString(); s != "" {
				return n, s, true
			}
		}
	}
	return "", "", false
}

// Fallback is the conversation a resource gives its records when they name none themselves
// (ForResource).
type Fallback struct {
	name, value string
	ok          bool
}

// ForResource returns the conversation res names, the fallback of its records.
func (k *Keyer) ForResource(res pcommon.Resource) Fallback {
	n, v, ok := k.in(res.Attributes())
	return Fallback{name: n, value: v, ok: ok}
}

// Of returns the conversation of a record with attributes attrs: the first conversation
// attribute on the record (name, value), else its resource's fb, else the trace ID in hex
// (name ""), else "" (none). c, when not nil, keeps the hex form of the latest trace ID.
func (k *Keyer) Of(attrs pcommon.Map, fb Fallback, traceID pcommon.TraceID, c *TraceHex) (name, value string) {
	if n, v, ok := k.in(attrs); ok {
		return n, v
	}
	return k.fallback(fb, traceID, c)
}

// OfIn is Of of a record whose attributes a reads (dialect.Found.Attrs).
func (k *Keyer) OfIn(a *fields.Record, fb Fallback, traceID pcommon.TraceID, c *TraceHex) (name, value string) {
	if n, v, ok := k.inRecord(a); ok {
		return n, v
	}
	return k.fallback(fb, traceID, c)
}

// fallback is the conversation of a record that names none itself (see Of).
func (k *Keyer) fallback(fb Fallback, traceID pcommon.TraceID, c *TraceHex) (name, value string) {
	if fb.ok {
		return fb.name, fb.value
	}
	if !traceID.IsEmpty() {
		if c == nil {
			return "", traceID.String()
		}
		return "", c.get(traceID)
	}
	return "", ""
}

// ForCalls returns the conversation of the calls of a span or log record in which a dialect
// found items (len(items) > 0). It is the one rule pair mode and route mode key calls by, so
// the two modes cannot disagree: when the dialect gives its items a conversation of their own
// (own: a transcript line's session or file, a custom dialect's scope expression), the first
// item's if it is not empty; otherwise Of over the record. An item's conversation is ignored
// for a dialect that does not declare own.
func (k *Keyer) ForCalls(own bool, items []dialect.Item, attrs pcommon.Map, fb Fallback, traceID pcommon.TraceID, c *TraceHex) (name, value string) {
	if it := &items[0]; own && it.Conversation != "" {
		return it.ConversationAttr, it.Conversation
	}
	return k.Of(attrs, fb, traceID, c)
}

// ForCallsIn is ForCalls of a record whose attributes a reads (dialect.Found.Attrs).
func (k *Keyer) ForCallsIn(own bool, items []dialect.Item, a *fields.Record, fb Fallback, traceID pcommon.TraceID, c *TraceHex) (name, value string) {
	if it := &items[0]; own && it.Conversation != "" {
		return it.ConversationAttr, it.Conversation
	}
	return k.OfIn(a, fb, traceID, c)
}

// FNV-1a, 64 bits (the constants of hash/fnv), computed inline so that a route costs no
// allocation but its string.
const (
	fnvOffset64 uint64 = 14695981039346656037
	fnvPrime64  uint64 = 1099511628211
)

func fnvAdd(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime64
	}
	return h
}

// Route returns the route of the call keys of one tenant and conversation: 16 lower-case hex
// digits of the FNV-1a hash of the tenant's length, the tenant and the conversation. It
// depends on nothing but these strings, so every collector and every version that keys a
// record alike routes it alike. Two conversations whose routes collide only share a back-tier
// collector: their call keys stay apart there.
func Route(tenant, conversation string) string {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(tenant)))
	h := fnvOffset64
	for _, c := range n {
		h ^= uint64(c)
		h *= fnvPrime64
	}
	h = fnvAdd(fnvAdd(h, tenant), conversation)
	binary.BigEndian.PutUint64(n[:], h)
	return hex.EncodeToString(n[:])
}

// TraceHex remembers the hex form of the latest trace ID asked for: the spans of one trace
// come together in a batch, and each would otherwise format its own copy. The zero value is
// empty.
type TraceHex struct {
	id pcommon.TraceID
	s  string
}

func (c *TraceHex) get(id pcommon.TraceID) string {
	if c.s == "" || c.id != id {
		c.id, c.s = id, id.String()
	}
	return c.s
}
