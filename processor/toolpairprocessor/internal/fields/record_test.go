// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package fields

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

var (
	testKeyA = Register("test.record.a")
	testKeyB = Register("test.record.b")
)

// TestRecordReadsAsGet: a Record reads registered and other keys as Get does (of a repeated
// key, the last occurrence), and follows Reset to another map.
func TestRecordReadsAsGet(t *testing.T) {
	m := mapOf(kv{"test.record.a", "first"}, kv{"other", "x"}, kv{"test.record.a", "last"}, kv{"other", "y"})
	var r Record
	r.Reset(m)
	v, ok := r.Value(testKeyA)
	assert.True(t, ok)
	assert.Equal(t, "last", v.Str())
	assert.False(t, r.Has(testKeyB))
	v, ok = r.Get("other")
	assert.True(t, ok)
	assert.Equal(t, "y", v.Str(), "a key not registered, read with Get")
	_, ok = r.Get("absent")
	assert.False(t, ok)
	assert.Equal(t, testKeyA, Register("test.record.a"), "registering twice")
	assert.Equal(t, "test.record.b", testKeyB.Name())

	r.Reset(mapOf(kv{"test.record.b", int64(3)}))
	assert.False(t, r.Has(testKeyA))
	v, ok = r.Value(testKeyB)
	assert.True(t, ok)
	assert.Equal(t, int64(3), v.Int())

	r.Release()
	_, ok = r.Get("test.record.b")
	assert.False(t, ok, "a released Record reads no map")
}
