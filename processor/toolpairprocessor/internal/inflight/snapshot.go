package inflight

import (
	"cmp"
	"errors"
	"slices"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// Saved is one operation of a tracker, as Export copies it and Import rebuilds it. Times are
// Unix ns: Start and End are record times (0: unknown / not resolved), ResolvedAt the
// tracker's clock when End was first set (0 when not resolved).
type Saved struct {
	Kind       Kind
	Scope      pairing.ScopeKey
	CallID     string // tool calls only
	Tool       string
	Start, End int64
	ResolvedAt int64
}

// Export returns every operation kept, in the order they were first recorded.
func (t *Tracker) Export() []Saved {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Saved, 0, t.n)
	for o := t.order.head; o != nil; o = o.inOrder.next {
		out = append(out, Saved{Kind: o.kind, Scope: o.scope.key, CallID: o.callID, Tool: o.tool, Start: o.start, End: o.end, ResolvedAt: o.resolvedAt})
	}
	return out
}

// Import adds saved operations, in order, to a tracker that holds none, keeping their times
// (retention keeps counting from ResolvedAt), then applies the bounds. Operations of an
// unknown kind, and tool calls without a call ID or repeated, are skipped. It returns an
// error when the tracker is not empty.
func (t *Tracker) Import(saved []Saved) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n > 0 {
		return errors.New("inflight: import into a tracker that is not empty")
	}
	resolved := make([]*op, 0, len(saved))
	for i := range saved {
		s := &saved[i]
		if s.Kind != Call && s.Kind != Model && s.Kind != Compaction {
			continue
		}
		sc := t.scope(s.Scope, false)
		o := &op{kind: s.Kind, tool: intern(t.names, s.Tool), start: s.Start, end: s.End, resolvedAt: s.ResolvedAt}
		if s.Kind == Call {
			if s.CallID == "" || t.findCall(sc, s.CallID) != nil {
				continue
			}
			o.callID = s.CallID
		} else {
			o.tool = ""
		}
		t.add(sc, o)
		if o.end != 0 {
			resolved = append(resolved, o)
		}
	}
	// The resolved list is in the order resolved: oldest first.
	slices.SortStableFunc(resolved, func(a, b *op) int { return cmp.Compare(a.resolvedAt, b.resolvedAt) })
	for _, o := range resolved {
		t.resolved.push(o, resolvedLink)
	}
	t.trim(t.cfg.Now().UnixNano())
	return nil
}
