// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package route is the toolpair processor's route mode (specification section 10): the
// front tier of a scaled-out deployment writes on every record the route of its call keys,
// for a load_balancing exporter to route on.
package route

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/callkey"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/claim"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/registry"
)

// Router is the toolpair processor in route mode (specification section 10), for the front
// tier of a scaled-out deployment: it writes on every span and log record the route of the
// call keys it would be paired under (the tenant and conversation, see callkey.Route), in cfg.RouteAttribute,
// for a load_balancing exporter that routes on that attribute. It keeps no state between batches:
// no pairing engine, no ticker, no held records; nothing is removed from or added to a batch.
//
// The load_balancing exporter (contrib v0.158.0, routing_key: attributes) reads each listed
// attribute from the resource first, then the instrumentation scope, then the span or log
// record, so a route attribute already on a resource or instrumentation scope would win over the record's:
// the router removes it there. It routes logs record by record, but spans by (resource,
// instrumentation scope, trace ID) group, on the attribute of the group's first span: the
// router splits a scope group in which one trace holds spans of different routes into one
// group per route (see splitByRoute).
type Router struct {
	keys callkey.Keyer
	attr string
	// claims are the dialects configured, tried in the order pairing tries them: the
	// conversation of a record's call keys is the one its claiming dialect gives.
	claims *claim.Set
	// spanItems, logItems: some span (log) dialect gives its items a conversation of their
	// own, so spans (log records) are read by the dialects; otherwise Keyer.Of gives every
	// record of the signal its conversation (scope_attributes or trace ID), items or not.
	spanItems, logItems bool
	// lineConversations are the dialect.Entry.LineScope functions of the dialects configured: the
	// conversation of a log record their dialect reads even when it has no items.
	lineConversations []func(plog.LogRecord) (attr, conv string, ok bool)
	pool              sync.Pool // *routeScratch
}

// routeMemo is the latest route computed, for the tenant and conversation it was computed
// from: the records of one batch mostly share them.
type routeMemo struct {
	tenant, conv, route string
}

// routeScratch is the per-batch scratch state of the router.
type routeScratch struct {
	found  dialect.Found
	hex    callkey.TraceHex
	memo   routeMemo
	routes []string // traces: the route of each span of the scope group being routed
}

// New returns the router writing routes in attribute attr, keying records with keys and
// claiming them with claims, whose enabled built-in dialects enabled reports by name.
func New(attr string, keys callkey.Keyer, claims *claim.Set, enabled func(name string) bool) *Router {
	r := &Router{
		keys:   keys,
		attr:   attr,
		claims: claims,
		pool:   sync.Pool{New: func() any { return &routeScratch{} }},
	}
	for _, e := range registry.Entries() {
		if e.LineConversation != nil && enabled(e.Name) {
			r.lineConversations = append(r.lineConversations, e.LineConversation)
		}
	}
	r.spanItems = claims.SpanConversations()
	r.logItems = claims.LogConversations() || len(r.lineConversations) > 0
	return r
}

// SpanItems and LogItems report whether the router reads the signal's records with the
// dialects (some dialect gives its items a conversation of their own).
func (r *Router) SpanItems() bool { return r.spanItems }

// LogItems: see SpanItems.
func (r *Router) LogItems() bool { return r.logItems }

// routeOf returns callkey.Route(tenant, conversation), from the batch's memo when it is the same pair.
func (s *routeScratch) routeOf(tenant, conv string) string {
	if s.memo.route == "" || s.memo.tenant != tenant || s.memo.conv != conv {
		s.memo = routeMemo{tenant: tenant, conv: conv, route: callkey.Route(tenant, conv)}
	}
	return s.memo.route
}

// ProcessTraces writes the route of every span: the tenant of its resource and the conversation
// pairing keys its tool items under (callkey.Keyer.ForCalls over the items its first recognising
// dialect finds: the conversation a custom dialect's expression gives, else its conversation attribute, its
// resource's, or its trace ID).
func (r *Router) ProcessTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	s := r.pool.Get().(*routeScratch)
	defer func() {
		s.found.Release() // no reference into td stays in the pool
		s.hex, s.memo, s.routes = callkey.TraceHex{}, routeMemo{}, s.routes[:0]
		r.pool.Put(s)
	}()
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		rs.Resource().Attributes().Remove(r.attr)
		tenant := r.keys.Tenant(rs.Resource())
		fallback := r.keys.ForResource(rs.Resource())
		sss := rs.ScopeSpans()
		for j, n := 0, sss.Len(); j < n; j++ {
			ss := sss.At(j)
			ss.Scope().Attributes().Remove(r.attr)
			spans := ss.Spans()
			s.routes = s.routes[:0]
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				conv := r.spanConversation(ctx, rs, ss, span, fallback, s)
				rt := s.routeOf(tenant, conv)
				span.Attributes().PutStr(r.attr, rt)
				s.routes = append(s.routes, rt)
			}
			if mixedTrace(spans, s.routes) {
				splitByRoute(rs, ss, s.routes)
			}
		}
	}
	return td, nil
}

// spanConversation returns the conversation of a span's call keys, as ProcessTraces describes it.
func (r *Router) spanConversation(ctx context.Context, rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, span ptrace.Span, fallback callkey.Fallback, s *routeScratch) string {
	if r.spanItems {
		s.found.Reset()
		if d := r.claims.Span(ctx, rs, ss, span, &s.found); d != nil && len(s.found.Items) > 0 {
			_, conv := r.keys.ForCalls(d.OwnConversation, s.found.Items, span.Attributes(), fallback, span.TraceID(), &s.hex)
			return conv
		}
	}
	_, conv := r.keys.Of(span.Attributes(), fallback, span.TraceID(), &s.hex)
	return conv
}

// mixedTrace reports whether two spans of one trace in spans have different routes (routes
// holds each span's).
func mixedTrace(spans ptrace.SpanSlice, routes []string) bool {
	same := 0
	for same < len(routes) && routes[same] == routes[0] {
		same++
	}
	if same == len(routes) {
		return false // one route: the common case
	}
	byTrace := make(map[pcommon.TraceID]string, 4)
	for k, rt := range routes {
		id := spans.At(k).TraceID()
		if prev, ok := byTrace[id]; ok && prev != rt {
			return true
		} else if !ok {
			byTrace[id] = rt
		}
	}
	return false
}

// splitByRoute leaves in ss the spans of the route of its first span, and moves the others to
// new scope groups of rs (copies of ss's instrumentation scope), one per route, in order of
// first appearance.
func splitByRoute(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, routes []string) {
	groups := map[string]ptrace.ScopeSpans{}
	k := -1
	ss.Spans().RemoveIf(func(span ptrace.Span) bool {
		k++
		rt := routes[k]
		if rt == routes[0] {
			return false
		}
		g, ok := groups[rt]
		if !ok {
			g = rs.ScopeSpans().AppendEmpty()
			ss.Scope().CopyTo(g.Scope())
			g.SetSchemaUrl(ss.SchemaUrl())
			groups[rt] = g
		}
		// RemoveIf then deletes what MoveTo leaves behind: an empty span.
		span.MoveTo(g.Spans().AppendEmpty())
		return true
	})
}

// ProcessLogs writes the route of every log record: the tenant of its resource and the conversation
// pairing keys its tool items under (callkey.Keyer.ForCalls over the items its first recognising
// dialect finds, built-in or custom). A record without items gets the conversation the timeout
// classifier tracks it under: the conversation a configured dialect's LineConversation gives it (a
// transcript line's session or file), else its conversation attribute, its resource's, or its trace
// ID.
func (r *Router) ProcessLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	s := r.pool.Get().(*routeScratch)
	defer func() { s.found.Release(); s.memo = routeMemo{}; r.pool.Put(s) }()
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		rl.Resource().Attributes().Remove(r.attr)
		tenant := r.keys.Tenant(rl.Resource())
		fallback := r.keys.ForResource(rl.Resource())
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			sl := sls.At(j)
			sl.Scope().Attributes().Remove(r.attr)
			lrs := sl.LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				lr := lrs.At(k)
				conv := r.logConversation(ctx, rl, sl, lr, fallback, &s.found)
				lr.Attributes().PutStr(r.attr, s.routeOf(tenant, conv))
			}
		}
	}
	return ld, nil
}

// logConversation returns the conversation of a log record's call keys, as ProcessLogs describes it.
func (r *Router) logConversation(ctx context.Context, rl plog.ResourceLogs, sl plog.ScopeLogs, lr plog.LogRecord, fallback callkey.Fallback, f *dialect.Found) string {
	if !r.logItems {
		_, conv := r.keys.Of(lr.Attributes(), fallback, lr.TraceID(), nil)
		return conv
	}
	f.Reset()
	d := r.claims.Log(ctx, rl, sl, lr, f)
	if d != nil && len(f.Items) > 0 {
		_, conv := r.keys.ForCalls(d.OwnConversation, f.Items, lr.Attributes(), fallback, lr.TraceID(), nil)
		return conv
	}
	for _, lineScope := range r.lineConversations {
		if _, conv, ok := lineScope(lr); ok {
			return conv
		}
	}
	_, conv := r.keys.Of(lr.Attributes(), fallback, lr.TraceID(), nil)
	return conv
}
