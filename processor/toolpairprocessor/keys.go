package toolpairprocessor

import (
	"encoding/binary"
	"encoding/hex"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
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
	if v, ok := attrs.Get(attrServiceName); ok {
		svc = v.AsString()
	}
	if len(k.tenantAttrs) == 0 {
		return svc
	}
	var b strings.Builder
	b.WriteString(svc)
	for _, name := range k.tenantAttrs {
		b.WriteByte(0)
		if v, ok := attrs.Get(name); ok {
			b.WriteString(v.AsString())
		}
	}
	return b.String()
}

// scopeIn returns the first scope attribute present in attrs with a non-empty value, and
// that value.
func (k *keyer) scopeIn(attrs pcommon.Map) (name, value string, ok bool) {
	for _, n := range k.scopeAttrs {
		if v, found := attrs.Get(n); found {
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

// logScope returns the scope of the call keys of a log record in which a dialect found items
// (len(items) > 0): the scope the dialect gave its first item (a transcript line's session or
// file), else the record's scope (scope).
func (k *keyer) logScope(lr plog.LogRecord, items []dialect.Item, rs resourceScope) (name, value string) {
	if it := &items[0]; it.Scope != "" {
		return it.ScopeAttr, it.Scope
	}
	return k.scope(lr.Attributes(), rs, lr.TraceID())
}

// spanScope returns the scope of the call keys of a span in which dialect d found items
// (len(items) > 0): the scope d gave its first item when d's items carry their own
// (spanDialect.ownScope, a custom dialect's scope expression), else the span's scope
// (scopeHex, the trace ID's hex form from c).
func (k *keyer) spanScope(span ptrace.Span, d *spanDialect, items []dialect.Item, rs resourceScope, c *traceHex) (name, value string) {
	if it := &items[0]; d.ownScope && it.Scope != "" {
		return it.ScopeAttr, it.Scope
	}
	return k.scopeHex(span.Attributes(), rs, span.TraceID(), c)
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
