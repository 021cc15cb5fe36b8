// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package readonly

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

func TestBytes(t *testing.T) {
	for _, s := range []string{"", "x", `{"id":"call_1"}`, strings.Repeat("é", 100)} {
		b := Bytes(s)
		assert.Equal(t, s, string(b))
		assert.Len(t, b, len(s))
		assert.Equal(t, len(s), cap(b), "no room to append into")
		if s != "" {
			assert.Same(t, unsafe.StringData(s), &b[0], "shares the string's memory")
		}
	}
}

func TestString(t *testing.T) {
	for _, s := range []string{"", "x", `{"id":"call_1"}`, strings.Repeat("é", 100)} {
		b := []byte(s)
		got := String(b)
		assert.Equal(t, s, got)
		if s != "" {
			assert.Same(t, &b[0], unsafe.StringData(got), "shares the slice's memory")
		}
	}
	assert.Equal(t, "ab", String([]byte("abc")[:2]))
}
