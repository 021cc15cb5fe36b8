// intervals.go holds the model call and compaction intervals of a scope: each new one is
// merged into the scope's latest of its kind when they overlap or are less than Settle apart,
// and a scope keeps at most maxIntervalsInScope of them.

package inflight

// maxIntervalsInScope bounds the model call and compaction intervals kept per scope (the most
// recent are kept).
const maxIntervalsInScope = 32

// interval applies an OpInterval update (see Apply).
func (t *Tracker) interval(u *Update, now int64) {
	kind, start, end := u.Kind, u.Start, u.End
	if (kind != Model && kind != Compaction) || end <= 0 {
		return
	}
	if start <= 0 || start > end {
		start = end
	}
	sc := t.scope(u.Scope, u.Owned)
	settle := int64(t.cfg.Settle)
	for o := sc.ops.tail; o != nil; o = o.inScope.prev {
		if o.kind != kind {
			continue
		}
		if start <= o.end+settle && o.start <= end+settle {
			if start < o.start {
				o.start = start
			}
			if end > o.end {
				// Extended: it was resolved again now.
				o.end = end
				t.resolved.remove(o, resolvedLink)
				o.resolvedAt = now
				t.resolved.push(o, resolvedLink)
			}
			return
		}
		break // only the latest interval of the kind is merged into
	}
	if sc.intervals >= maxIntervalsInScope {
		for o := sc.ops.head; o != nil; o = o.inScope.next {
			if o.kind != Call {
				t.forget(o)
				break
			}
		}
		sc = t.scope(u.Scope, u.Owned) // forgetting may have dropped an empty scope
	}
	o := &op{kind: kind, start: start}
	t.add(sc, o)
	t.setEnd(o, end, now)
}
