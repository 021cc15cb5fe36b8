// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package sharedcomponent

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type value struct{ cfg string }

func TestAcquireSharesOneValuePerKey(t *testing.T) {
	m := NewMap[string, *value]()
	created := 0
	create := func(cfg string) func() (*value, error) {
		return func() (*value, error) { created++; return &value{cfg: cfg}, nil }
	}
	fits := func(cfg string) func(*value) bool { return func(v *value) bool { return v.cfg == cfg } }

	a, err := m.Acquire("toolpair", fits("c1"), create("c1"))
	require.NoError(t, err)
	b, err := m.Acquire("toolpair", fits("c1"), create("c1"))
	require.NoError(t, err)
	other, err := m.Acquire("toolpair/b", fits("c1"), create("c1"))
	require.NoError(t, err)
	assert.Same(t, a.Value(), b.Value(), "one value per key")
	assert.NotSame(t, a.Value(), other.Value(), "another key, another value")
	assert.Equal(t, 2, created)
	assert.Equal(t, 2, a.Holders())

	released, last := a.Release()
	assert.True(t, released)
	assert.False(t, last)
	released, last = a.Release()
	assert.False(t, released, "a reference is released once")
	assert.False(t, last)
	assert.Equal(t, 1, b.Holders())
	released, last = b.Release()
	assert.True(t, released)
	assert.True(t, last)
	assert.Equal(t, 1, m.Len(), "the last release removes the value")

	c, err := m.Acquire("toolpair", fits("c1"), create("c1"))
	require.NoError(t, err)
	assert.NotSame(t, b.Value(), c.Value(), "a value released for good is not handed out again")
}

func TestAcquireReplacesAValueThatDoesNotFit(t *testing.T) {
	m := NewMap[string, *value]()
	old, err := m.Acquire("toolpair", func(*value) bool { return true }, func() (*value, error) { return &value{cfg: "old"}, nil })
	require.NoError(t, err)
	fresh, err := m.Acquire("toolpair", func(v *value) bool { return v.cfg == "new" }, func() (*value, error) { return &value{cfg: "new"}, nil })
	require.NoError(t, err)
	assert.Equal(t, "new", fresh.Value().cfg)
	_, last := old.Release()
	assert.True(t, last, "the old value's holders keep it until they let go")
	assert.Equal(t, 1, m.Len(), "the old value's release leaves the new one in the map")
	again, err := m.Acquire("toolpair", func(v *value) bool { return v.cfg == "new" }, nil)
	require.NoError(t, err)
	assert.Same(t, fresh.Value(), again.Value())
}

func TestAcquireFailureStoresNothing(t *testing.T) {
	m := NewMap[string, *value]()
	_, err := m.Acquire("toolpair", func(*value) bool { return true }, func() (*value, error) { return nil, errors.New("bad") })
	require.EqualError(t, err, "bad")
	assert.Equal(t, 0, m.Len())
}
