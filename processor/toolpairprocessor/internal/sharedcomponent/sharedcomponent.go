// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package sharedcomponent keeps one instance of a component per component ID across the
// pipelines it is configured in, as the collector-contrib receivers that serve several
// signals from one instance do: the collector creates one processor per pipeline, each with
// the same processor.Settings.ID, and every one of them takes a reference on the instance of
// its ID (Map.Acquire) and lets go of it once at its shutdown (Ref.Release). The last release
// removes the instance from the map.
package sharedcomponent

import "sync"

// Map holds one value per key while references to it are held. The zero Map is not usable:
// see NewMap.
type Map[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]*entry[V]
}

type entry[V any] struct {
	v    V
	refs int // references not released yet; guarded by the map's lock
}

// NewMap returns an empty map.
func NewMap[K comparable, V any]() *Map[K, V] {
	return &Map[K, V]{m: map[K]*entry[V]{}}
}

// Acquire returns a new reference to the value under key, creating the value with create
// when the map has none. A held value that fits reports false for (one built from an earlier
// configuration whose pipelines were never shut down) is left to its references, and a new
// value takes its place in the map. create's error is returned as is, and nothing is stored.
func (m *Map[K, V]) Acquire(key K, fits func(V) bool, create func() (V, error)) (*Ref[K, V], error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.m[key]; e != nil && fits(e.v) {
		e.refs++
		return &Ref[K, V]{m: m, key: key, e: e}, nil
	}
	v, err := create()
	if err != nil {
		return nil, err
	}
	e := &entry[V]{v: v, refs: 1}
	m.m[key] = e
	return &Ref[K, V]{m: m, key: key, e: e}, nil
}

// Len returns the number of values in the map.
func (m *Map[K, V]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.m)
}

// Ref is one holder's reference to a value of a Map.
type Ref[K comparable, V any] struct {
	m    *Map[K, V]
	key  K
	e    *entry[V]
	once sync.Once
}

// Value returns the value referred to.
func (r *Ref[K, V]) Value() V { return r.e.v }

// Holders returns the number of references to the value not released yet.
func (r *Ref[K, V]) Holders() int {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	return r.e.refs
}

// Release lets go of the reference. Only its first call counts: released reports whether
// this call did, last whether it released the value's last reference, which then leaves the
// map (unless another value has taken its key).
func (r *Ref[K, V]) Release() (released, last bool) {
	r.once.Do(func() {
		released = true
		r.m.mu.Lock()
		defer r.m.mu.Unlock()
		r.e.refs--
		last = r.e.refs == 0
		if last && r.m.m[r.key] == r.e {
			delete(r.m.m, r.key)
		}
	})
	return released, last
}

// Load returns the value under key, if the map has one.
func (m *Map[K, V]) Load(key K) (v V, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.m[key]; e != nil {
		return e.v, true
	}
	return v, false
}

// Range calls f with each key, its value and the number of its references not released
// yet, until f returns false. f must not call the map's methods.
func (m *Map[K, V]) Range(f func(key K, v V, holders int) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, e := range m.m {
		if !f(k, e.v, e.refs) {
			return
		}
	}
}

// Delete removes the value under key whatever its references, for a value abandoned without
// its holders' releases (a process ending without shutdown). Its references' releases then
// leave the map alone.
func (m *Map[K, V]) Delete(key K) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, key)
}
