// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package claim

import (
	"errors"
	"fmt"
	"slices"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/custom"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/registry"
)

// MaxCustom bounds custom_dialects: each has a Source of its own, from dialect.SourceCustom
// up to 255.
const MaxCustom = 100

// ValidateCustom checks custom_dialects: at most MaxCustom, names unique and not those of
// built-in dialects, and each declaration compiled (its OTTL parsed). Every error names the
// entry and the key, as custom_dialects[i].key.
func ValidateCustom(cfgs []custom.Config) error {
	var errs []error
	if len(cfgs) > MaxCustom {
		errs = append(errs, fmt.Errorf("custom_dialects: at most %d dialects, got %d", MaxCustom, len(cfgs)))
	}
	builtin := registry.Names()
	for i, dc := range cfgs {
		if slices.Contains(builtin, dc.Name) {
			errs = append(errs, fmt.Errorf("custom_dialects[%d].name: %q is the name of a built-in dialect", i, dc.Name))
		}
		if j := slices.IndexFunc(cfgs[:i], func(o custom.Config) bool { return o.Name == dc.Name }); j >= 0 && dc.Name != "" {
			errs = append(errs, fmt.Errorf("custom_dialects[%d].name: %q is already the name of custom_dialects[%d]", i, dc.Name, j))
		}
		if err := custom.Validate(dc); err != nil {
			errs = append(errs, customError(i, dc.Name, err))
		}
	}
	return errors.Join(errs...)
}

// customError names the entry, its key and the dialect in each error of custom.New:
// custom_dialects[i].key: dialect "name": reason.
func customError(i int, name string, err error) error {
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
