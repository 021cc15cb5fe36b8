package toolpairprocessor

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

// keyer computes the tenant and scope parts of call keys (specification section 1).
type keyer struct {
	scopeAttrs  []string
	tenantAttrs []string
}

// tenant returns service.name followed by the values of the tenant attributes, separated
// by NUL bytes (which attribute values from OTLP practically never contain). A missing
// attribute contributes an empty value, so resources that differ only in it stay apart.
func (k *keyer) tenant(res pcommon.Resource) string {
	attrs := res.Attributes()
	svc := ""
	if v, ok := fields.Get(attrs, attrServiceName); ok {
		svc = v.AsString()
	}
	if len(k.tenantAttrs) == 0 {
		return svc
	}
	var b strings.Builder
	b.WriteString(svc)
	for _, name := range k.tenantAttrs {
		b.WriteByte(0)
		if v, ok := fields.Get(attrs, name); ok {
			b.WriteString(v.AsString())
		}
	}
	return b.String()
}

// scopeIn returns the first scope attribute present in attrs with a non-empty value, and
// that value.
func (k *keyer) scopeIn(attrs pcommon.Map) (name, value string, ok bool) {
	for _, n := range k.scopeAttrs {
		if v, found := fields.Get(attrs, n); found {
			if s := v.AsString(); s != "" {
				return n, s, true
			}
		}
	}
	return "", "", false
}

// resourceScope is the scope a resource gives its records when they carry none themselves.
type resourceScope struct {
	name, value string
	ok          bool
}

func (k *keyer) resourceScope(res pcommon.Resource) resourceScope {
	n, v, ok := k.scopeIn(res.Attributes())
	return resourceScope{name: n, value: v, ok: ok}
}

// scope returns the scope of a record: the first scope attribute on the record, else on
// its resource, else the trace ID in hex (name ""), else "" (no scope).
func (k *keyer) scope(attrs pcommon.Map, rs resourceScope, traceID pcommon.TraceID) (name, value string) {
	return k.scopeHex(attrs, rs, traceID, nil)
}

// scopeHex is scope, taking the trace ID's hex form from c (nil: none) when it is c's.
func (k *keyer) scopeHex(attrs pcommon.Map, rs resourceScope, traceID pcommon.TraceID, c *traceHex) (name, value string) {
	if n, v, ok := k.scopeIn(attrs); ok {
		return n, v
	}
	if rs.ok {
		return rs.name, rs.value
	}
	if !traceID.IsEmpty() {
		if c == nil {
			return "", traceID.String()
		}
		return "", c.get(traceID)
	}
	return "", ""
}

// callScope returns the scope of the call keys of a span or log record in which a dialect
// found items (len(items) > 0). It is the one rule pair mode's span and log paths and route
// mode's router all key calls by, so the two modes cannot disagree: when the dialect gives its
// items a scope of their own (own: spanDialect.ownScope or logDialect.ownScope, the transcript
// dialect's session or file, a custom dialect's scope expression), the scope of the first item
// if it is not empty; otherwise the record's scope (scopeHex over the record's attributes attrs,
// its resource's scope rs and its trace ID, whose hex form is taken from c, nil for none).
// An item scope of a dialect that does not declare own is ignored.
func (k *keyer) callScope(own bool, items []dialect.Item, attrs pcommon.Map, rs resourceScope, traceID pcommon.TraceID, c *traceHex) (name, value string) {
	if it := &items[0]; own && it.Scope != "" {
		return it.ScopeAttr, it.Scope
	}
	return k.scopeHex(attrs, rs, traceID, c)
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

// route returns the route of the call keys of one tenant and scope (as tenant and scope
// return them): 16 lower-case hex digits of the FNV-1a hash of the tenant's length, the
// tenant and the scope. It depends on nothing but these strings, so every collector and every
// version that keys a record alike routes it alike. Two scopes whose routes collide only
// share a back-tier collector: their call keys stay apart there.
func route(tenant, scope string) string {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(tenant)))
	h := fnvOffset64
	for _, c := range n {
		h ^= uint64(c)
		h *= fnvPrime64
	}
	h = fnvAdd(fnvAdd(h, tenant), scope)
	binary.BigEndian.PutUint64(n[:], h)
	return hex.EncodeToString(n[:])
}

// traceHex remembers the hex form of the latest trace ID asked for: the spans of one trace
// come together in a batch, and each would otherwise format its own copy.
type traceHex struct {
	id pcommon.TraceID
	s  string
}

func (c *traceHex) get(id pcommon.TraceID) string {
	if c.s == "" || c.id != id {
		c.id, c.s = id, id.String()
	}
	return c.s
}
