// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package synth

import (
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/xpdata/entity"
)

func agentResource() pcommon.Resource {
	res := pcommon.NewResource()
	res.Attributes().PutStr("service.name", "claude-code")
	res.Attributes().PutStr("os.type", "linux")
	res.Attributes().PutInt("process.pid", 42)
	res.Attributes().PutDouble("x.ratio", 0.5)
	res.Attributes().PutBool("x.debug", true)
	res.Attributes().PutDouble("x.zero", 0)
	return res
}

// TestResourceCacheReusesEqualResources: a resource equal to the last one made gets the same
// copy, without allocating; any difference (a value, a type, the order, the dropped count,
// an entity reference, a value of another type) gets a copy of its own, equal to it.
func TestResourceCacheReusesEqualResources(t *testing.T) {
	var c ResourceCache
	first := c.Get(agentResource())
	res := agentResource()
	assert.Same(t, first, c.Get(res))
	assert.Zero(t, testing.AllocsPerRun(100, func() { c.Get(res) }))

	variants := map[string]func(pcommon.Resource){
		"string value": func(r pcommon.Resource) { r.Attributes().PutStr("os.type", "darwin") },
		"int value":    func(r pcommon.Resource) { r.Attributes().PutInt("process.pid", 43) },
		"double value": func(r pcommon.Resource) { r.Attributes().PutDouble("x.zero", math.Copysign(0, -1)) },
		"bool value":   func(r pcommon.Resource) { r.Attributes().PutBool("x.debug", false) },
		"type":         func(r pcommon.Resource) { r.Attributes().PutStr("process.pid", "42") },
		"extra":        func(r pcommon.Resource) { r.Attributes().PutStr("host.name", "vm") },
		"missing":      func(r pcommon.Resource) { r.Attributes().Remove("x.debug") },
		"order": func(r pcommon.Resource) {
			r.Attributes().Remove("service.name")
			r.Attributes().PutStr("service.name", "claude-code")
		},
		"dropped": func(r pcommon.Resource) { r.SetDroppedAttributesCount(1) },
		"entity":  func(r pcommon.Resource) { entity.ResourceEntityRefs(r).AppendEmpty().SetType("service") },
		"map value": func(r pcommon.Resource) {
			r.Attributes().PutEmptyMap("x.map").PutStr("a", "b")
		},
	}
	for name, change := range variants {
		t.Run(name, func(t *testing.T) {
			var c ResourceCache
			base := c.Get(agentResource())
			res := agentResource()
			change(res)
			got := c.Get(res)
			require.NotSame(t, base, got)
			want := pcommon.NewResource()
			res.CopyTo(want)
			assert.Equal(t, want, got.Resource)
			assert.Equal(t, got != c.Get(res), got.attrs == nil, "cached unless not comparable")
		})
	}
}

// TestResourceCacheRemembersSeveral: resources that alternate keep one copy each, up to
// resourceCacheSize of them.
func TestResourceCacheRemembersSeveral(t *testing.T) {
	var c ResourceCache
	res := make([]pcommon.Resource, resourceCacheSize)
	first := make([]*Resource, resourceCacheSize)
	for i := range res {
		res[i] = agentResource()
		res[i].Attributes().PutInt("process.pid", int64(i))
		first[i] = c.Get(res[i])
	}
	for range 3 {
		for i := range res {
			assert.Same(t, first[i], c.Get(res[i]), "resource %d", i)
		}
	}
	extra := agentResource()
	extra.Attributes().PutInt("process.pid", resourceCacheSize)
	c.Get(extra) // takes the place of the oldest
	assert.NotSame(t, first[0], c.Get(res[0]))
}

// TestResourceCacheConcurrent: goroutines getting resources at once each get a copy equal to
// theirs.
func TestResourceCacheConcurrent(t *testing.T) {
	var c ResourceCache
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				res := agentResource()
				if (g+i)%3 == 0 {
					res.Attributes().PutInt("process.pid", int64(g))
				}
				got := c.Get(res)
				assert.Equal(t, res.Attributes().AsRaw(), got.Resource.Attributes().AsRaw())
			}
		}()
	}
	wg.Wait()
}
