package toolpairprocessor

import (
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/registry"
)

// recordDialect is a dialect of records of type R (ptrace.Span, plog.LogRecord): extract
// appends the tool calls of one record to f and reports whether the record belongs to the
// dialect (even when nothing usable was found). The built-in ones, spanDialects and
// logDialects, are the rules of the registry's entries (builtinDialects); a custom dialect
// has one of its own (customDialect).
type recordDialect[R any] struct {
	name    string
	source  uint8
	extract func(r R, f *dialect.Found) bool
	// late (spans): the record's events go to the engine after the other events of its batch
	// (a companion result record, pairing.KindCompanion: handed over after its call's main
	// result record of the same batch, it is settled at once instead of being held).
	late bool
	// ownScope: the dialect gives its items a scope of their own (dialect.Item.Scope), which
	// replaces the scope_attributes lookup (keyer.callScope): a transcript line's session or
	// file, a custom dialect's scope expression. Route mode reads records with the dialects
	// only when one of them has it.
	ownScope bool
}

// spanDialect and logDialect are the dialects of each signal.
type (
	spanDialect = recordDialect[ptrace.Span]
	logDialect  = recordDialect[plog.LogRecord]
)

// claim tries on r the custom dialects that precede the built-in ones (custom(true)), the
// built-in dialects ds in order, then the other custom dialects (custom(false)), and returns
// the dialect that claims r, or nil; custom is nil when no custom dialect is configured for
// the signal. f must be empty; it holds what the claiming dialect found. It is the one place
// a record is given its dialect, in pair mode and route mode, for spans and log records
// alike.
func claim[R any](ds []recordDialect[R], r R, f *dialect.Found, custom func(first bool) *recordDialect[R]) *recordDialect[R] {
	if custom != nil {
		if d := custom(true); d != nil {
			return d
		}
	}
	for n := range ds {
		if ds[n].extract(r, f) {
			return &ds[n]
		}
	}
	if custom != nil {
		return custom(false)
	}
	return nil
}

// builtinDialects returns the rules of signal R of the built-in dialects (package registry),
// in the order they are tried: the entries in trial order, the rules of each entry in its own
// order. rules picks an entry's rules of the signal.
func builtinDialects[R any](rules func(*dialect.Entry) []dialect.Rule[R]) []recordDialect[R] {
	var ds []recordDialect[R]
	for _, e := range registry.Entries() {
		for _, r := range rules(e) {
			ds = append(ds, recordDialect[R]{name: e.Name, source: r.Source, extract: r.Extract, late: r.Late, ownScope: r.OwnScope})
		}
	}
	return ds
}
