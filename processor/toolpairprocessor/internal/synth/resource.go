// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package synth

import (
	"math"
	"sync/atomic"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/xpdata/entity"
)

// ResourceCache makes the Resources of origins, reusing one of the last it made for a
// resource equal to it: an agent's batches all carry the same resource, which would
// otherwise be copied again for every batch (the copies are read-only, so origins may share
// one). It remembers the resourceCacheSize resources made last, so that a pipeline fed by a
// few agents keeps one copy of each. It is safe for concurrent use.
type ResourceCache struct {
	recent [resourceCacheSize]atomic.Pointer[Resource]
	next   atomic.Uint32 // counts the resources stored in recent
}

// resourceCacheSize is the number of resources a ResourceCache remembers.
const resourceCacheSize = 8

// Get returns a Resource holding a copy of res: one made earlier when res equals it exactly
// (the same attributes in the same order, each of a string, int, double or bool value; the
// same dropped attributes count; no entity references on either), else a new one.
func (c *ResourceCache) Get(res pcommon.Resource) *Resource {
	for i := range c.recent {
		if r := c.recent[i].Load(); r != nil && r.equals(res) {
			return r
		}
	}
	r := NewResource(res)
	r.attrs = comparableAttrs(r.Resource)
	if r.attrs != nil {
		c.recent[(c.next.Add(1)-1)%resourceCacheSize].Store(r)
	}
	return r
}

// attr is a resource attribute of a scalar type, as ResourceCache compares it.
type attr struct {
	key string
	typ pcommon.ValueType
	str string
	num int64  // an int, or a bool as 0 or 1
	dbl uint64 // a double's bits
}

// comparableAttrs returns the attributes of res in order, or nil when res has an attribute of
// another type than string, int, double and bool, or entity references, or no attributes.
func comparableAttrs(res pcommon.Resource) []attr {
	attrs := res.Attributes()
	if attrs.Len() == 0 || entity.ResourceEntityRefs(res).Len() > 0 {
		return nil
	}
	out := make([]attr, 0, attrs.Len())
	for k, v := range attrs.All() {
		a := attr{key: k, typ: v.Type()}
		switch a.typ {
		case pcommon.ValueTypeStr:
			a.str = v.Str()
		case pcommon.ValueTypeInt:
			a.num = v.Int()
		case pcommon.ValueTypeDouble:
			a.dbl = math.Float64bits(v.Double())
		case pcommon.ValueTypeBool:
			if v.Bool() {
				a.num = 1
			}
		default:
			return nil
		}
		out = append(out, a)
	}
	return out
}

// equals reports whether res equals the resource r was copied from, as Get defines it. r's
// attrs are not nil.
func (r *Resource) equals(res pcommon.Resource) bool {
	attrs := res.Attributes()
	if attrs.Len() != len(r.attrs) || res.DroppedAttributesCount() != r.Resource.DroppedAttributesCount() ||
		entity.ResourceEntityRefs(res).Len() > 0 {
		return false
	}
	i := 0
	for k, v := range attrs.All() {
		a := &r.attrs[i]
		i++
		if k != a.key || v.Type() != a.typ {
			return false
		}
		switch a.typ {
		case pcommon.ValueTypeStr:
			if v.Str() != a.str {
				return false
			}
		case pcommon.ValueTypeInt:
			if v.Int() != a.num {
				return false
			}
		case pcommon.ValueTypeDouble:
			if math.Float64bits(v.Double()) != a.dbl {
				return false
			}
		case pcommon.ValueTypeBool:
			if v.Bool() != (a.num == 1) {
				return false
			}
		}
	}
	return true
}
