package toolpairprocessor

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/custom"
)

// maxCustomDialects bounds custom_dialects: each has a Source of its own, above the built-in
// ones (sourceCustom).
const maxCustomDialects = 100

// sourceCustom is the Source of the first custom dialect; the i-th has sourceCustom+i.
const sourceCustom uint8 = 128

// customDialect is one compiled custom dialect, with the spanDialect or logDialect the batch
// loops report it as (its extract is unused: the OTTL needs the resource and scope too).
type customDialect struct {
	d      *custom.Dialect
	asSpan spanDialect
	asLog  logDialect
}

// customDialects are the custom dialects of one component, by context: those tried before
// the built-in dialects (precedence before_builtin) first, then the others, each part in
// configuration order. The zero value has none and costs nothing per record.
type customDialects struct {
	spans, logs []customDialect
	// spansBefore and logsBefore count the dialects at the head of spans and logs that are
	// tried before the built-in ones.
	spansBefore, logsBefore int
}

// newCustomDialects compiles the custom dialects of cfg (validated already).
func newCustomDialects(cfgs []custom.Config, set component.TelemetrySettings) (customDialects, error) {
	var c customDialects
	for i, dc := range cfgs {
		d, err := custom.New(dc, set)
		if err != nil {
			return customDialects{}, customDialectError(i, dc.Name, err)
		}
		cd := customDialect{d: d}
		source := sourceCustom + uint8(i)
		switch d.Context() {
		case custom.ContextSpan:
			cd.asSpan = spanDialect{name: d.Name(), source: source, ownScope: true}
			c.spans, c.spansBefore = insertCustom(c.spans, c.spansBefore, cd)
		default:
			cd.asLog = logDialect{name: d.Name(), source: source, ownScope: true}
			c.logs, c.logsBefore = insertCustom(c.logs, c.logsBefore, cd)
		}
	}
	return c, nil
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

// extractSpan tries on span the span dialects tried before the built-in ones (first) or
// after them, in order, and returns the one that claims it, or nil. f must be empty.
func (c *customDialects) extractSpan(ctx context.Context, rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, span ptrace.Span, f *dialect.Found, first bool) *spanDialect {
	ds := c.spans[c.spansBefore:]
	if first {
		ds = c.spans[:c.spansBefore]
	}
	if len(ds) == 0 {
		return nil
	}
	tc := custom.NewSpanContext(rs, ss, span)
	defer tc.Close()
	for n := range ds {
		if ds[n].d.ExtractSpan(ctx, tc, f) {
			return &ds[n].asSpan
		}
	}
	return nil
}

// extractLog is extractSpan for a log record.
func (c *customDialects) extractLog(ctx context.Context, rl plog.ResourceLogs, sl plog.ScopeLogs, lr plog.LogRecord, f *dialect.Found, first bool) *logDialect {
	ds := c.logs[c.logsBefore:]
	if first {
		ds = c.logs[:c.logsBefore]
	}
	if len(ds) == 0 {
		return nil
	}
	tc := custom.NewLogContext(rl, sl, lr)
	defer tc.Close()
	for n := range ds {
		if ds[n].d.ExtractLog(ctx, tc, f) {
			return &ds[n].asLog
		}
	}
	return nil
}

// validateCustomDialects checks custom_dialects: names unique and not those of built-in
// dialects, and each declaration compiled (its OTTL parsed). Every error names the entry and
// the key, as custom_dialects[i].key.
func validateCustomDialects(cfgs []custom.Config) error {
	var errs []error
	if len(cfgs) > maxCustomDialects {
		errs = append(errs, fmt.Errorf("custom_dialects: at most %d dialects, got %d", maxCustomDialects, len(cfgs)))
	}
	for i, dc := range cfgs {
		if slices.Contains(knownDialects, dc.Name) {
			errs = append(errs, fmt.Errorf("custom_dialects[%d].name: %q is the name of a built-in dialect", i, dc.Name))
		}
		if j := slices.IndexFunc(cfgs[:i], func(o custom.Config) bool { return o.Name == dc.Name }); j >= 0 && dc.Name != "" {
			errs = append(errs, fmt.Errorf("custom_dialects[%d].name: %q is already the name of custom_dialects[%d]", i, dc.Name, j))
		}
		if err := custom.Validate(dc); err != nil {
			errs = append(errs, customDialectError(i, dc.Name, err))
		}
	}
	return errors.Join(errs...)
}

// customDialectError names the entry, its key and the dialect in each error of custom.New:
// custom_dialects[i].key: dialect "name": reason.
func customDialectError(i int, name string, err error) error {
	var errs []error
	for _, e := range leafErrors(err) {
		var ke *custom.KeyError
		switch {
		case errors.As(e, &ke) && name != "":
			errs = append(errs, fmt.Errorf("custom_dialects[%d].%s: dialect %q: %w", i, ke.Key, name, ke.Err))
		case errors.As(e, &ke):
			errs = append(errs, fmt.Errorf("custom_dialects[%d].%s: %w", i, ke.Key, ke.Err))
		default:
			errs = append(errs, fmt.Errorf("custom_dialects[%d]: %w", i, e))
		}
	}
	return errors.Join(errs...)
}

// leafErrors flattens joined errors.
func leafErrors(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, leafErrors(e)...)
		}
		return out
	}
	return []error{err}
}
