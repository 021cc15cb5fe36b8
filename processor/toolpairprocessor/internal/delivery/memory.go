// Package delivery remembers what each delivery of a record got, by the record's identity
// (ID), so that a record delivered again gets what its first delivery got (specification
// section 2). Collector pipelines deliver at least once: when anything after the processor
// refuses a batch, its sender sends the same batch again, and the processor, which has already
// taken the first delivery into its state, must neither drop the second copy as a duplicate
// nor give it another outcome. It cannot know whether the first copy reached the next hop; a
// backend can deduplicate what it receives twice, never recover what it never received.
//
// The data flow: a batch's result record is identified (Span, Log) before the engine sees it;
// Memory.Lookup finds a record delivered before, whose Decision (its Fate and the Marks the
// processor wrote on it) is applied to it again (Apply), the engine never seeing it; a record
// not found goes through the engine as usual, and once its batch's marks are written its
// Decision is captured (Capture) and remembered (Memory.Remember). A record held for its use
// is remembered as FateHeld, and settled (Memory.Settle) when it leaves.
package delivery

import (
	"math"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Fate is what a delivery of a record got.
type Fate uint8

const (
	// FatePassed: the record was passed on, with its Marks.
	FatePassed Fate = iota + 1
	// FateDropped: the record was removed from its batch (a duplicate or an orphan under
	// `drop`).
	FateDropped
	// FateHeld: the engine holds a copy of the record for its use; that copy leaves when the
	// use comes or orphan_grace passes (then the decision is settled).
	FateHeld
)

// Mark is one attribute the processor wrote on a record (an outcome, a duration, a timeout
// classification): its key, and its value of type Type (Str, Int, Bool as Num 0 or 1, Double
// as the bits of Num).
type Mark struct {
	Key  string
	Str  string
	Num  int64
	Type pcommon.ValueType
}

// Decision is what a delivery of a record got: its fate and, for FatePassed, the attributes
// the processor wrote on it.
type Decision struct {
	Fate  Fate
	Marks []Mark
}

// Entry is one remembered record: its ID, its decision, and the instant (Unix ns of the
// memory's clock) after which it is forgotten.
type Entry struct {
	ID       ID
	Deadline int64
	Decision
}

// Memory is the decisions of the records delivered within the last Retention, at most Max of
// them (the oldest forgotten first), safe for concurrent use. One lock, one map, and the
// records in the order they were first remembered, expired from the front (every record has
// the same time to live).
type Memory struct {
	retention int64
	max       int

	mu        sync.Mutex
	decisions map[ID]*Entry
	order     []*Entry // first remembered first; order[head:] is live
	head      int
}

// New returns a Memory that remembers a record for retention ns after it was first
// remembered, and at most max records (max >= 1).
func New(retention int64, max int) *Memory {
	return &Memory{retention: retention, max: max, decisions: make(map[ID]*Entry)}
}

// Lookup returns the decision remembered for the record id, if any. The returned Marks must
// not be changed.
func (m *Memory) Lookup(id ID) (Decision, bool) {
	m.mu.Lock()
	e, ok := m.decisions[id]
	var d Decision
	if ok {
		d = e.Decision
	}
	m.mu.Unlock()
	return d, ok
}

// Len returns the number of records remembered.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.decisions)
}

// Remember records the decisions of es at now (Unix ns), setting the Deadline of each entry
// of es to its record's, and forgets the records past their retention or beyond Max. A record
// already remembered keeps its place and deadline and takes the new decision.
func (m *Memory) Remember(now int64, es []Entry) {
	if len(es) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range es {
		if e, ok := m.decisions[es[i].ID]; ok {
			e.Decision = es[i].Decision
			es[i].Deadline = e.Deadline
			continue
		}
		e := &Entry{ID: es[i].ID, Deadline: now + m.retention, Decision: es[i].Decision}
		es[i].Deadline = e.Deadline
		m.decisions[e.ID] = e
		m.order = append(m.order, e)
	}
	m.expire(now)
}

// Settle sets the decision of a record remembered as held (FateHeld) once its held copy has
// left, and returns its entry as remembered now (for storage); a record no longer remembered
// stays forgotten (ok false).
func (m *Memory) Settle(id ID, d Decision) (_ Entry, ok bool) {
	if id == 0 {
		return Entry{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.decisions[id]
	if !ok {
		return Entry{}, false
	}
	e.Decision = d
	return *e, true
}

// Expire forgets the records past their retention at now (Unix ns).
func (m *Memory) Expire(now int64) {
	m.mu.Lock()
	m.expire(now)
	m.mu.Unlock()
}

func (m *Memory) expire(now int64) {
	for m.head < len(m.order) {
		e := m.order[m.head]
		if e.Deadline > now && len(m.order)-m.head <= m.max {
			break
		}
		delete(m.decisions, e.ID)
		m.order[m.head] = nil
		m.head++
	}
	// Compact once the dead front is the larger part, so the slice never grows without bound.
	if m.head > 0 && m.head >= len(m.order)-m.head {
		n := copy(m.order, m.order[m.head:])
		clear(m.order[n:])
		m.order, m.head = m.order[:n], 0
	}
}

// Snapshot returns a copy of every record remembered, oldest first, for storage.
func (m *Memory) Snapshot() []Entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Entry, 0, len(m.order)-m.head)
	for _, e := range m.order[m.head:] {
		out = append(out, *e)
	}
	return out
}

// Restore adds the records es (oldest first, with their deadlines) as stored, before any
// other use of m, and forgets those past their deadline at now.
func (m *Memory) Restore(now int64, es []Entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range es {
		if es[i].ID == 0 {
			continue
		}
		if e, ok := m.decisions[es[i].ID]; ok {
			e.Decision = es[i].Decision
			continue
		}
		e := new(Entry)
		*e = es[i]
		m.decisions[e.ID] = e
		m.order = append(m.order, e)
	}
	m.expire(now)
}

// Capture appends to dst the attributes of attrs that marked says the processor writes, in
// the map's order, and returns dst. Values of other types than string, int, bool and double
// are never the processor's and are skipped.
func Capture(dst []Mark, attrs pcommon.Map, marked func(key string) bool) []Mark {
	for k, v := range attrs.All() {
		if !marked(k) {
			continue
		}
		mk := Mark{Key: k, Type: v.Type()}
		switch v.Type() {
		case pcommon.ValueTypeStr:
			mk.Str = v.Str()
		case pcommon.ValueTypeInt:
			mk.Num = v.Int()
		case pcommon.ValueTypeBool:
			if v.Bool() {
				mk.Num = 1
			}
		case pcommon.ValueTypeDouble:
			mk.Num = int64(math.Float64bits(v.Double()))
		default:
			continue
		}
		dst = append(dst, mk)
	}
	return dst
}

// Apply writes marks on attrs, replacing what attrs holds under their keys.
func Apply(attrs pcommon.Map, marks []Mark) {
	for _, mk := range marks {
		switch mk.Type {
		case pcommon.ValueTypeStr:
			attrs.PutStr(mk.Key, mk.Str)
		case pcommon.ValueTypeInt:
			attrs.PutInt(mk.Key, mk.Num)
		case pcommon.ValueTypeBool:
			attrs.PutBool(mk.Key, mk.Num != 0)
		case pcommon.ValueTypeDouble:
			attrs.PutDouble(mk.Key, math.Float64frombits(uint64(mk.Num)))
		}
	}
}
