// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package timeout

import (
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
)

// maxCachedNames bounds the names whose verdict a nameKinds remembers: span and event names
// are a small vocabulary, and a stream of distinct names (a body that looks like an event
// name, say) past the bound is matched every time, as if there were no cache.
const maxCachedNames = 256

// nameKinds answers the kind a span or event name says by itself: KindCompaction when a
// compaction pattern matches it, else the kind of a known name (modelSpanNames, modelEvents,
// ...), else KindTool when it starts with one of toolPrefixes, else KindOther.
//
// Known names and exact compaction patterns are one lookup in a nameTable, skipped when no
// known name has the name's length. Names the compaction regular expressions must be run on are matched
// once and their verdict kept in a copy-on-write map (read with one atomic load), up to
// maxCachedNames names.
type nameKinds struct {
	// exact maps the known names and the exact compaction names to their kind, a compaction
	// pattern winning over a known kind.
	exact *nameTable
	// lens has bit l set when a name of exact has length l (bit 63: 63 or longer).
	lens uint64
	// res are the compaction patterns that are not exact.
	res []*regexp.Regexp
	// toolPrefixes are the prefixes of tool names that are not exact.
	toolPrefixes []string

	mu    sync.Mutex // serialises writers of cache
	cache atomic.Pointer[nameCache]
}

// nameCache is a version of nameKinds' cache: the verdicts as a map (to make the next version
// from) and as a table (to look them up).
type nameCache struct {
	names map[string]Kind
	table *nameTable
}

// newNameKinds builds the verdicts of the known names (known) and the compaction patterns p.
func newNameKinds(p patterns, known map[string]Kind, toolPrefixes []string) *nameKinds {
	k := &nameKinds{res: p.res, toolPrefixes: toolPrefixes}
	exact := make(map[string]Kind, len(known)+len(p.exact))
	for name, kind := range known {
		exact[name] = kind
	}
	for name := range p.exact {
		exact[name] = KindCompaction
	}
	for name := range exact {
		if k.matchRes(name) {
			exact[name] = KindCompaction
		}
		k.lens |= lenBit(len(name))
	}
	delete(exact, "") // never looked up
	k.exact = newNameTable(exact)
	return k
}

// lenBit is the bit of nameKinds.lens of a name of length l.
func lenBit(l int) uint64 { return 1 << min(l, 63) }

// kind is the kind name says (see nameKinds); a verdict of the configured regular expressions
// is kept for the next time.
func (k *nameKinds) kind(name string) Kind { return k.lookup(name, true) }

// kindOnce is kind for a name that may be any string (a log body that looks like an event
// name): its verdict is not kept, so such strings never take the places of real names.
func (k *nameKinds) kindOnce(name string) Kind { return k.lookup(name, false) }

func (k *nameKinds) lookup(name string, keep bool) Kind {
	if name == "" {
		return KindOther
	}
	h, hashed := uint32(0), false // one hash for both tables
	if k.lens&lenBit(len(name)) != 0 {
		h, hashed = nameHash(name), true
		if kind, ok := k.exact.get(name, h); ok {
			return kind
		}
	}
	if len(k.res) == 0 {
		return k.rest(name)
	}
	full := false
	if c := k.cache.Load(); c != nil {
		if !hashed {
			h = nameHash(name)
		}
		if kind, ok := c.table.get(name, h); ok {
			return kind
		}
		full = c.table.n >= maxCachedNames
	}
	kind := KindCompaction
	if !k.matchRes(name) {
		kind = k.rest(name)
	}
	if keep && !full { // a full cache never changes: no lock for it
		k.remember(name, kind)
	}
	return kind
}

// rest is the kind of a name that is neither known nor a compaction name.
func (k *nameKinds) rest(name string) Kind {
	for _, p := range k.toolPrefixes {
		if len(name) >= len(p) && name[:len(p)] == p {
			return KindTool
		}
	}
	return KindOther
}

func (k *nameKinds) matchRes(name string) bool {
	for _, re := range k.res {
		if re.MatchString(name) {
			return true
		}
	}
	return false
}

// remember keeps the verdict of name unless maxCachedNames names are kept already. The name
// is copied: it may point into a batch's memory.
func (k *nameKinds) remember(name string, kind Kind) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var old map[string]Kind
	if c := k.cache.Load(); c != nil {
		old = c.names
	}
	if len(old) >= maxCachedNames {
		return
	}
	if _, ok := old[name]; ok {
		return
	}
	m := make(map[string]Kind, len(old)+1)
	for n, v := range old {
		m[n] = v
	}
	m[strings.Clone(name)] = kind
	k.cache.Store(&nameCache{names: m, table: newNameTable(m)})
}

// cached is the number of names whose verdict is kept, for tests.
func (k *nameKinds) cached() int {
	if c := k.cache.Load(); c != nil {
		return len(c.names)
	}
	return 0
}
