// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package claim gives a record its dialect: the one place a span or log record is tried
// against the dialects of a component (built-in rules from package registry, and custom
// dialects compiled from OTTL), in pair mode and route mode alike.
//
// The order is: custom dialects with precedence before_builtin, the built-in rules in the
// registry's trial order, then the other custom dialects; each part in configuration order.
// The first dialect whose extraction recognises the record claims it.
package claim

import (
	"context"
	"slices"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/custom"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/registry"
)

// Dialect is a dialect of records of type R (ptrace.Span, plog.LogRecord).
type Dialect[R any] struct {
	// Name is the dialect's configuration name (a built-in entry's, or custom_dialects[i].name).
	Name string
	// Source identifies the dialect's records in the engine (pairing.Event.Source): unique,
	// built-in ones below dialect.SourceCustom.
	Source uint8
	// Extract appends the tool calls of one record to f and reports whether the record
	// belongs to the dialect (even when nothing usable was found). Nil for custom dialects,
	// whose OTTL needs the resource and scope too (Set.Span, Set.Log).
	Extract func(r R, f *dialect.Found) bool
	// Late (spans): the record's events go to the engine after the other events of its batch
	// (a companion result record, handed over after its call's main result record).
	Late bool
	// OwnConversation: the dialect gives its items a conversation of their own
	// (dialect.Item.Scope), which replaces the scope_attributes lookup (callkey.Keyer.ForCalls).
	OwnConversation bool
}

// Builtin returns the rules of signal R of the registry's entries, in the order they are
// tried: the entries in trial order, the rules of each entry in its own order. rules picks an
// entry's rules of the signal (Entry.Spans or Entry.Logs).
func Builtin[R any](rules func(*dialect.Entry) []dialect.Rule[R]) []Dialect[R] {
	var ds []Dialect[R]
	for _, e := range registry.Entries() {
		for _, r := range rules(e) {
			ds = append(ds, Dialect[R]{Name: e.Name, Source: r.Source, Extract: r.Extract, Late: r.Late, OwnConversation: r.OwnConversation})
		}
	}
	return ds
}

// BuiltinSpans and BuiltinLogs are the built-in span and log dialects in trial order.
var (
	BuiltinSpans = Builtin(func(e *dialect.Entry) []dialect.Rule[ptrace.Span] { return e.Spans })
	BuiltinLogs  = Builtin(func(e *dialect.Entry) []dialect.Rule[plog.LogRecord] { return e.Logs })
)

// Set is the dialects of one component, by signal.
type Set struct {
	spans []Dialect[ptrace.Span]
	logs  []Dialect[plog.LogRecord]
	// custom dialects by context; those tried before the built-in ones (precedence
	// before_builtin) first, counted by spansBefore and logsBefore.
	customSpans, customLogs []customDialect
	spansBefore, logsBefore int
}

// customDialect is one compiled custom dialect and the Dialect it is reported as.
type customDialect struct {
	d     *custom.Dialect
	asSpn Dialect[ptrace.Span]
	asLog Dialect[plog.LogRecord]
}

// New returns the set of the built-in dialects enabled reports true for, by name, and the
// custom dialects cfgs (validated already: see ValidateCustom), compiled with set. The i-th
// custom dialect gets Source dialect.SourceCustom+i. The error names the custom dialect's
// key, as custom_dialects[i].key.
func New(enabled func(name string) bool, cfgs []custom.Config, set component.TelemetrySettings) (*Set, error) {
	s := &Set{}
	for _, d := range BuiltinSpans {
		if enabled(d.Name) {
			s.spans = append(s.spans, d)
		}
	}
	for _, d := range BuiltinLogs {
		if enabled(d.Name) {
			s.logs = append(s.logs, d)
		}
	}
	for i, dc := range cfgs {
		d, err := custom.New(dc, set)
		if err != nil {
			return nil, customError(i, dc.Name, err)
		}
		cd := customDialect{d: d}
		source := dialect.SourceCustom + uint8(i)
		switch d.Context() {
		case custom.ContextSpan, custom.ContextSpanEvent:
			cd.asSpn = Dialect[ptrace.Span]{Name: d.Name(), Source: source, OwnConversation: true}
			s.customSpans, s.spansBefore = insertCustom(s.customSpans, s.spansBefore, cd)
		default:
			cd.asLog = Dialect[plog.LogRecord]{Name: d.Name(), Source: source, OwnConversation: true}
			s.customLogs, s.logsBefore = insertCustom(s.customLogs, s.logsBefore, cd)
		}
	}
	return s, nil
}

// insertCustom adds cd to ds, whose first before dialects are tried before the built-in
// ones: after them when cd is one of those too, else at the end. It returns the new list and
// count.
func insertCustom(ds []customDialect, before int, cd customDialect) ([]customDialect, int) {
	if !cd.d.BeforeBuiltin() {
		return append(ds, cd), before
	}
	return slices.Insert(ds, before, cd), before + 1
}

// Spans and Logs report whether the set has any dialect of the signal.
func (s *Set) Spans() bool { return len(s.spans)+len(s.customSpans) > 0 }

// Logs: see Spans.
func (s *Set) Logs() bool { return len(s.logs)+len(s.customLogs) > 0 }

// SpanConversations and LogConversations report whether some dialect of the signal gives
// its items a conversation of their own (Dialect.OwnConversation): route mode then reads
// the signal's records with the dialects.
func (s *Set) SpanConversations() bool {
	return len(s.customSpans) > 0 || slices.ContainsFunc(s.spans, func(d Dialect[ptrace.Span]) bool { return d.OwnConversation })
}

// LogConversations: see SpanConversations.
func (s *Set) LogConversations() bool {
	return len(s.customLogs) > 0 || slices.ContainsFunc(s.logs, func(d Dialect[plog.LogRecord]) bool { return d.OwnConversation })
}

// Span returns the dialect that claims span (under resource group rs and scope group ss), or
// nil. f must be empty; it holds what the claiming dialect found.
func (s *Set) Span(ctx context.Context, rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, span ptrace.Span, f *dialect.Found) *Dialect[ptrace.Span] {
	if len(s.customSpans) == 0 {
		return first(s.spans, span, f)
	}
	tc := custom.NewSpanContext(rs, ss, span)
	defer tc.Close()
	claims := func(cd *customDialect) bool {
		if cd.d.Context() == custom.ContextSpanEvent {
			return cd.d.ExtractSpanEvents(ctx, rs, ss, span, f)
		}
		return cd.d.ExtractSpan(ctx, tc, f)
	}
	for n := range s.customSpans[:s.spansBefore] {
		if claims(&s.customSpans[n]) {
			return &s.customSpans[n].asSpn
		}
	}
	if d := first(s.spans, span, f); d != nil {
		return d
	}
	for n := s.spansBefore; n < len(s.customSpans); n++ {
		if claims(&s.customSpans[n]) {
			return &s.customSpans[n].asSpn
		}
	}
	return nil
}

// Log is Span for a log record.
func (s *Set) Log(ctx context.Context, rl plog.ResourceLogs, sl plog.ScopeLogs, lr plog.LogRecord, f *dialect.Found) *Dialect[plog.LogRecord] {
	if len(s.customLogs) == 0 {
		return first(s.logs, lr, f)
	}
	tc := custom.NewLogContext(rl, sl, lr)
	defer tc.Close()
	for n := range s.customLogs[:s.logsBefore] {
		if s.customLogs[n].d.ExtractLog(ctx, tc, f) {
			return &s.customLogs[n].asLog
		}
	}
	if d := first(s.logs, lr, f); d != nil {
		return d
	}
	for n := s.logsBefore; n < len(s.customLogs); n++ {
		if s.customLogs[n].d.ExtractLog(ctx, tc, f) {
			return &s.customLogs[n].asLog
		}
	}
	return nil
}

// first returns the first of ds that claims r, or nil.
func first[R any](ds []Dialect[R], r R, f *dialect.Found) *Dialect[R] {
	for n := range ds {
		if ds[n].Extract(r, f) {
			return &ds[n]
		}
	}
	return nil
}
