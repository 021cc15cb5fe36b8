// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package custom

import (
	"context"
	"encoding/hex"
	"errors"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl/contexts/ottllog"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl/contexts/ottlspan"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl/contexts/ottlspanevent"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl/ottlfuncs"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// ReasonExpressionError is the malformed-input reason of a record on which an expression of
// a custom dialect failed at run time (a converter refusing its argument, for example
// ParseJSON of a value that is not JSON).
const ReasonExpressionError = "expression_error"

// Steps of custom dialect items. A step boundary closes the pending calls of its scope
// announced at or before its time by another step: a span's uses and its own boundary share
// the span's ID (a model request span whose start is a boundary and whose output announces
// calls never closes its own calls); log records have no such identity, so their uses and
// boundaries have one step each.
const (
	stepUse      = "use"
	stepBoundary = "boundary"
)

// role is what a condition says a record is.
type role uint8

const (
	roleAbort role = iota
	roleReject
	roleResult
	roleUse
	roleBoundary
	roleSessionEnd
	roleModel
	nRoles
)

// keys are the configuration keys of the conditions, by role.
var keys = [nRoles]string{"abort", "reject", "result", "use", "step_boundary", "session_end", "model_call"}

// kinds are the pairing kinds of the call roles.
var kinds = [roleUse + 1]pairing.Kind{pairing.KindAbort, pairing.KindReject, pairing.KindResult, pairing.KindUse}

// program is a dialect compiled for the transform context K of its OTTL context.
type program[K any] struct {
	where                                *ottl.Condition[K]
	conds                                [nRoles]*ottl.Condition[K]
	callID, toolName, scope, tm, callsEx *ottl.ValueExpression[K]
}

// Dialect is a compiled custom dialect. It is safe for concurrent use.
type Dialect struct {
	name             string
	context          string
	before           bool
	conversationAttr string
	calls            callsPaths
	span             *program[*ottlspan.TransformContext]
	event            *program[*ottlspanevent.TransformContext]
	log              *program[*ottllog.TransformContext]
}

// Name returns the dialect's configured name.
func (d *Dialect) Name() string { return d.name }

// Context returns ContextSpan, ContextSpanEvent or ContextLog.
func (d *Dialect) Context() string { return d.context }

// BeforeBuiltin reports whether the dialect is tried before the built-in dialects
// (PrecedenceBeforeBuiltin).
func (d *Dialect) BeforeBuiltin() bool { return d.before }

// Validate compiles cfg and returns every error New would, each naming its key, without
// keeping the result: for the processor's configuration check, before the collector starts.
func Validate(cfg Config) error {
	_, err := New(cfg, component.TelemetrySettings{Logger: zap.NewNop()})
	return err
}

// New compiles a custom dialect. Its error joins a *KeyError for every key refused (an
// OTTL parse error as the parser reports it).
func New(cfg Config, set component.TelemetrySettings) (*Dialect, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	d := &Dialect{name: cfg.Name, context: cfg.Context, before: cfg.Precedence == PrecedenceBeforeBuiltin, conversationAttr: cfg.ConversationAttribute}
	var errs []error
	var err error
	d.calls, err = parsePaths(cfg)
	errs = append(errs, err)
	if set.Logger == nil {
		set.Logger = zap.NewNop()
	}
	switch cfg.Context {
	case ContextSpan:
		parser, perr := ottlspan.NewParser(ottlfuncs.StandardConverters[*ottlspan.TransformContext](), set)
		if perr != nil {
			return nil, perr
		}
		d.span, err = compile(&parser, cfg)
	case ContextSpanEvent:
		parser, perr := ottlspanevent.NewParser(ottlfuncs.StandardConverters[*ottlspanevent.TransformContext](), set)
		if perr != nil {
			return nil, perr
		}
		d.event, err = compile(&parser, cfg)
	default:
		parser, perr := ottllog.NewParser(ottlfuncs.StandardConverters[*ottllog.TransformContext](), set)
		if perr != nil {
			return nil, perr
		}
		d.log, err = compile(&parser, cfg)
	}
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return d, nil
}

// compile parses the conditions and value expressions of cfg.
func compile[K any](parser *ottl.Parser[K], cfg Config) (*program[K], error) {
	p := &program[K]{}
	var errs []error
	if cfg.Where != "" {
		c, err := parser.ParseCondition(cfg.Where)
		if err != nil {
			errs = append(errs, keyError("where", err))
		}
		p.where = c
	}
	conds := [nRoles]string{cfg.Abort, cfg.Reject, cfg.Result, cfg.Use, cfg.StepBoundary, cfg.SessionEnd, cfg.ModelCall}
	for r, src := range conds {
		if src == "" {
			continue
		}
		c, err := parser.ParseCondition(src)
		if err != nil {
			errs = append(errs, keyError(keys[r], err))
			continue
		}
		p.conds[r] = c
	}
	values := []struct {
		key, src string
		dst      **ottl.ValueExpression[K]
	}{
		{"call_id", cfg.CallID, &p.callID},
		{"tool_name", cfg.ToolName, &p.toolName},
		{"scope", cfg.Conversation, &p.scope},
		{"time", cfg.Time, &p.tm},
		{"calls", cfg.Calls, &p.callsEx},
	}
	for _, v := range values {
		if v.src == "" {
			continue
		}
		e, err := parser.ParseValueExpression(v.src)
		if err != nil {
			errs = append(errs, keyError(v.key, err))
			continue
		}
		*v.dst = e
	}
	return p, errors.Join(errs...)
}

// record is what extract needs of a record besides its transform context.
type record struct {
	// start, end: the record's default times of boundaries and of everything else.
	start, end int64
	// step of its uses and boundaries.
	useStep, boundaryStep string
	// attrs, code and message are what dialect.Cancelled reads of the record: its
	// attributes and, for a span, its status (ptrace.StatusCodeUnset and "" for a log record).
	attrs   pcommon.Map
	code    ptrace.StatusCode
	message string
}

// ExtractSpan appends to f what the dialect finds in the span of tc (made by NewSpanContext
// with the span's resource and scope spans, which resource and scope paths read), and
// reports whether the dialect claims it: its where condition (when set) failed on it, or
// held and another condition held or failed. It appends nothing to f on a span it does not
// claim, and never modifies the span. It must be called only on a dialect of ContextSpan.
func (d *Dialect) ExtractSpan(ctx context.Context, tc *ottlspan.TransformContext, f *dialect.Found) bool {
	span := tc.GetSpan()
	rec := record{
		start: int64(span.StartTimestamp()), end: int64(span.EndTimestamp()), useStep: stepUse, boundaryStep: stepBoundary,
		attrs: span.Attributes(), code: span.Status().Code(), message: span.Status().Message(),
	}
	if id := span.SpanID(); !id.IsEmpty() {
		rec.useStep = hex.EncodeToString(id[:])
		rec.boundaryStep = rec.useStep
	}
	return extract(ctx, d, d.span, tc, rec, f)
}

// ExtractSpanEvents appends to f what the dialect finds in the events of span (under resource
// group rs and scope group ss), each read with OTTL's span event context, and reports whether
// it claims the span: whether it claims one of its events, as ExtractSpan claims a span. An
// event's default time is its timestamp (the span's end when it has none); its uses and
// boundaries have the span's step, as a span dialect's; a result event is an abort when the
// event's attributes or the span's status carry a cancellation marker (dialect.Cancelled).
// It must be called only on a dialect of ContextSpanEvent.
func (d *Dialect) ExtractSpanEvents(ctx context.Context, rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, span ptrace.Span, f *dialect.Found) bool {
	events := span.Events()
	if events.Len() == 0 {
		return false
	}
	step := stepUse
	if id := span.SpanID(); !id.IsEmpty() {
		step = hex.EncodeToString(id[:])
	}
	st := span.Status()
	claimed := false
	for i := 0; i < events.Len(); i++ {
		ev := events.At(i)
		t := int64(ev.Timestamp())
		if t == 0 {
			t = int64(span.EndTimestamp())
		}
		tc := ottlspanevent.NewTransformContextPtr(rs, ss, span, ev, ottlspanevent.WithEventIndex(int64(i)))
		rec := record{start: t, end: t, useStep: step, boundaryStep: step, attrs: ev.Attributes(), code: st.Code(), message: st.Message()}
		if extract(ctx, d, d.event, tc, rec, f) {
			claimed = true
		}
		tc.Close()
	}
	return claimed
}

// ExtractLog is ExtractSpan for a log record, in a dialect of ContextLog. The default time
// is the record's time (dialect.LogTime).
func (d *Dialect) ExtractLog(ctx context.Context, tc *ottllog.TransformContext, f *dialect.Found) bool {
	lr := tc.GetLogRecord()
	t := dialect.LogTime(lr)
	return extract(ctx, d, d.log, tc, record{start: t, end: t, useStep: stepUse, boundaryStep: stepBoundary, attrs: lr.Attributes()}, f)
}

// extract evaluates the conditions of p on one record. The where condition comes first: a
// record it does not select is not the dialect's, one on which it fails is claimed and
// counted, with nothing else evaluated. The call conditions are tried in the order abort,
// reject, result, use, and the first that holds decides the record's call kind;
// step_boundary and session_end are evaluated besides, so that one record may be a boundary
// (first) and announce calls, or resolve a call and end the session (last); model_call too,
// which sets f.ModelCall (and f.ModelScope to the scope expression's value). A result whose
// record carries a cancellation marker (dialect.Cancelled) is an abort, as in every dialect.
func extract[K any](ctx context.Context, d *Dialect, p *program[K], tc K, rec record, f *dialect.Found) bool {
	if p.where != nil {
		ok, err := p.where.Eval(ctx, tc)
		if err != nil {
			f.Skip(ReasonExpressionError)
			return true
		}
		if !ok {
			return false
		}
	}
	claimed := false
	holds := func(r role) bool {
		c := p.conds[r]
		if c == nil {
			return false
		}
		ok, err := c.Eval(ctx, tc)
		if err != nil {
			f.Skip(ReasonExpressionError)
			claimed = true
			return false
		}
		claimed = claimed || ok
		return ok
	}
	call := nRoles
	for r := roleAbort; r <= roleUse; r++ {
		if holds(r) {
			call = r
			break
		}
	}
	boundary, end, model := holds(roleBoundary), holds(roleSessionEnd), holds(roleModel)
	if !claimed {
		return false
	}
	scope := ""
	if p.scope != nil {
		scope = stringValue(ctx, p.scope, tc, f)
	}
	scopeAttr := ""
	if scope != "" {
		scopeAttr = d.conversationAttr
	}
	start, endTime := rec.start, rec.end
	if p.tm != nil {
		if t, ok := timeValue(ctx, p.tm, tc, f); ok {
			start, endTime = t, t
		}
	}
	if model {
		f.ModelCall = true
		if scope != "" {
			f.ModelScope = scope
		}
	}
	if boundary {
		f.AddStep(pairing.KindBoundary, "", "", start, scopeAttr, scope, rec.boundaryStep)
	}
	if call != nRoles {
		addCalls(ctx, d, p, tc, rec, call, endTime, scopeAttr, scope, f)
	}
	if end {
		f.AddStep(pairing.KindSessionEnd, "", "", endTime, scopeAttr, scope, "")
	}
	return true
}

// NewSpanContext returns the OTTL transform context of a span, for ExtractSpan; the caller
// must Close it once done with the span.
func NewSpanContext(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, span ptrace.Span) *ottlspan.TransformContext {
	return ottlspan.NewTransformContextPtr(rs, ss, span)
}

// NewLogContext returns the OTTL transform context of a log record, for ExtractLog; the
// caller must Close it once done with the record.
func NewLogContext(rl plog.ResourceLogs, sl plog.ScopeLogs, lr plog.LogRecord) *ottllog.TransformContext {
	return ottllog.NewTransformContextPtr(rl, sl, lr)
}

// addCalls adds the call items of a record of call role call (a use, result, abort or
// reject) at t: the entries of the calls expression on a use record that has one (each
// naming its own tool, tool_name_path), else one item per call ID the call_id expression
// names, with the tool_name expression's name; a result carrying a cancellation marker is an
// abort.
func addCalls[K any](ctx context.Context, d *Dialect, p *program[K], tc K, rec record, call role, t int64, scopeAttr, scope string, f *dialect.Found) {
	step := ""
	if call == roleUse {
		step = rec.useStep
	}
	if call == roleUse && p.callsEx != nil {
		// Each entry names its own tool (tool_name_path); tool_name is not read.
		v, err := p.callsEx.Eval(ctx, tc)
		if err != nil {
			f.Skip(ReasonExpressionError)
		} else {
			d.calls.each(v, f, func(id, tool string) {
				f.AddStep(pairing.KindUse, id, tool, t, scopeAttr, scope, step)
			})
		}
	} else if v, ok := evalValue(ctx, p.callID, tc, f); ok {
		name := ""
		if p.toolName != nil {
			name = stringValue(ctx, p.toolName, tc, f)
		}
		kind := kinds[call]
		if call == roleResult && dialect.Cancelled(rec.attrs, rec.code, rec.message) {
			kind = pairing.KindAbort
		}
		eachID(v, f, func(id string) {
			f.AddStep(kind, id, name, t, scopeAttr, scope, step)
		})
	}
}
