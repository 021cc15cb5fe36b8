// Package readonly gives read-only views of memory the caller does not own, so that JSON
// held in a pdata string (a log body, a span attribute) can be read by byte-slice parsers
// without a copy.
package readonly

import "unsafe"

// Bytes returns the bytes of s without copying them: the slice shares s's memory and has
// length and capacity len(s). Go strings are immutable, so the caller must
// never write to the slice, append to it, or hand it to code that may (a write is undefined
// behaviour and may fault); it stays valid as long as s is reachable.
func Bytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
