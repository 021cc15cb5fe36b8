// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// values.go reads what a custom dialect's value expressions yield: call IDs (one or a list),
// strings and times, each checked and, when wrong, skipped and counted as malformed input.

package custom

import (
	"context"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
)

// evalValue evaluates e; an error is skipped as ReasonExpressionError.
func evalValue[K any](ctx context.Context, e *ottl.ValueExpression[K], tc K, f *dialect.Found) (any, bool) {
	v, err := e.Eval(ctx, tc)
	if err != nil {
		f.Skip(ReasonExpressionError)
		return nil, false
	}
	return v, true
}

// eachID calls fn with each call ID the call_id expression's value v names: v itself, or
// every entry of a list (a slice attribute, ParseJSON of a JSON list, OTTL's Keys). Each
// entry is checked as idValue checks a value (missing or empty: ReasonMissingCallID, not a
// string: ReasonInvalidCallID); an empty list is skipped as ReasonMissingCallID.
func eachID(v any, f *dialect.Found, fn func(id string)) {
	if pv, ok := v.(pcommon.Value); ok && pv.Type() == pcommon.ValueTypeSlice {
		v = pv.Slice()
	}
	var entries []any
	switch l := v.(type) {
	case pcommon.Slice:
		for i := 0; i < l.Len(); i++ {
			entries = append(entries, l.At(i))
		}
	case []any:
		entries = l
	case []string:
		for _, s := range l {
			entries = append(entries, s)
		}
	default:
		if id, ok := idValue(v, f); ok {
			fn(id)
		}
		return
	}
	if len(entries) == 0 {
		f.Skip(dialect.ReasonMissingCallID)
	}
	for _, e := range entries {
		if id, ok := idValue(e, f); ok {
			fn(id)
		}
	}
}

// idValue checks a call ID read from a record or a call entry.
func idValue(v any, f *dialect.Found) (string, bool) {
	if pv, ok := v.(pcommon.Value); ok {
		v = pv.AsRaw()
	}
	switch v := v.(type) {
	case nil:
		f.Skip(dialect.ReasonMissingCallID)
	case string:
		if v == "" {
			f.Skip(dialect.ReasonMissingCallID)
			break
		}
		return v, true
	default:
		f.Skip(dialect.ReasonInvalidCallID)
	}
	return "", false
}

// stringValue evaluates a string expression; nothing (nil) is "", any other type is "" and
// skipped as invalid_type.
func stringValue[K any](ctx context.Context, e *ottl.ValueExpression[K], tc K, f *dialect.Found) string {
	v, err := e.Eval(ctx, tc)
	if err != nil {
		f.Skip(ReasonExpressionError)
		return ""
	}
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case pcommon.Value:
		if v.Type() == pcommon.ValueTypeStr {
			return v.Str()
		}
	}
	f.Skip(dialect.ReasonInvalidType)
	return ""
}

// timeValue evaluates the time expression: Unix nanoseconds (int), a time.Time, or an RFC
// 3339 string. Nothing (nil) or zero leaves the default time, anything else is skipped as
// invalid_type and leaves it too.
func timeValue[K any](ctx context.Context, e *ottl.ValueExpression[K], tc K, f *dialect.Found) (int64, bool) {
	v, err := e.Eval(ctx, tc)
	if err != nil {
		f.Skip(ReasonExpressionError)
		return 0, false
	}
	switch v := v.(type) {
	case nil:
		return 0, false
	case int64:
		return v, v > 0
	case time.Time:
		return v.UnixNano(), !v.IsZero()
	case string:
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			return t.UnixNano(), true
		}
	}
	f.Skip(dialect.ReasonInvalidType)
	return 0, false
}
