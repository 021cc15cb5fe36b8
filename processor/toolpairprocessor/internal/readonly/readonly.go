// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package readonly converts between strings and byte slices without copying, where the
// bytes are only read: JSON held in a pdata string (a log body, a span attribute) read by
// byte-slice parsers, and strings made of bytes that are never written again.
package readonly

import "unsafe"

// Bytes returns the bytes of s without copying them: the slice shares s's memory and has
// length and capacity len(s). Go strings are immutable, so the caller must never write to
// the slice, append to it, or hand it to code that may (a write is undefined behaviour and
// may fault); it stays valid as long as s is reachable.
func Bytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// String returns a string of the bytes of b without copying them: the string shares b's
// memory. Go strings are immutable, so b must never be written again, by the caller or
// anyone holding b, for as long as the string is reachable.
func String(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}
