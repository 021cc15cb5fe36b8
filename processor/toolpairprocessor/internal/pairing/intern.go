// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// intern.go holds the engine's copies of the strings many calls share: interned tool names
// and tenants, the step shared by the calls of one model request, and the one-allocation
// string copies they are made with.

package pairing

import (
	"strings"
	"unsafe"
)

// maxNames bounds the interned tool names, and the interned tenants; names beyond it are
// copied per call, tenants per scope.
const maxNames = 4096

// name returns the engine's copy of a tool name (nil for ""), interned while there are
// fewer than maxNames.
func (e *Engine) name(s string) *string {
	if s == "" {
		return nil
	}
	if c, ok := e.names[s]; ok {
		return c
	}
	c := strings.Clone(s)
	if len(e.names) < maxNames {
		e.names[c] = &c
	}
	return &c
}

// tenant returns the engine's copy of a tenant, interned while there are fewer than maxNames:
// a component sees a few tenants, each in many scopes.
func (e *Engine) tenant(s string) string {
	if c, ok := e.tenants[s]; ok {
		return c
	}
	c := strings.Clone(s)
	if len(e.tenants) < maxNames {
		e.tenants[c] = c
	}
	return c
}

// step returns the engine's copy of a step ID (nil for ""). Consecutive uses of one model
// request share one copy.
func (e *Engine) step(s string) *string {
	if s == "" {
		return nil
	}
	if e.lastStep == nil || *e.lastStep != s {
		e.lastStep = cloneBoxed(s)
	}
	return e.lastStep
}

// cloneBoxed returns a pointer to a copy of s made in one allocation, the string header
// followed by its bytes, where a separate header and copy would take two: step IDs (span IDs
// in hex, message IDs) are a few dozen bytes. The object takes at most 8 bytes more than the
// two would.
func cloneBoxed(s string) *string {
	switch n := len(s); {
	case n <= 16:
		return boxed[[16]byte](s)
	case n <= 32:
		return boxed[[32]byte](s)
	case n <= 48:
		return boxed[[48]byte](s)
	case n <= 64:
		return boxed[[64]byte](s)
	case n <= 80:
		return boxed[[80]byte](s)
	case n <= 96:
		return boxed[[96]byte](s)
	case n <= 112:
		return boxed[[112]byte](s)
	}
	c := strings.Clone(s)
	return &c
}

// boxed is cloneBoxed for a string that fits in B, a byte array.
func boxed[B any](s string) *string {
	x := new(struct {
		s string
		b B
	})
	b := unsafe.Slice((*byte)(unsafe.Pointer(&x.b)), unsafe.Sizeof(x.b))
	x.s = unsafe.String(&b[0], copy(b, s))
	return &x.s
}

// deref returns *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
