// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

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
	"strings"
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
	// fateReserved: a place taken by Reserve for a record whose delivery is still on its way
	// through the processor (Remember fills it); it is no decision.
	fateReserved Fate = 0
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
	// Place is the place Reserve returned for the record (0: none): Remember fills it without
	// looking the record up again.
	Place uint64
}

// Memory is the decisions of the records delivered within the last Retention, at most Max of
// them (the oldest forgotten first), safe for concurrent use. One lock, one map from a
// record's ID to its place, and the records in the order they were first remembered, expired
// from the front (every record has the same time to live).
//
// A remembered record holds no pointer, so that the garbage collector never scans the
// memory's hundreds of thousands of records: its marks are packed, their keys and the values of
// the enumerated keys (New) interned in a table of the memory's own; a mark of another string
// value (a call ID, a tool name: rare) is kept beside, in extra.
type Memory struct {
	retention int64
	max       int
	enums     map[string]bool

	mu    sync.Mutex
	index map[ID]uint64 // the record's sequence number: its place is order[seq-base]
	order []slot        // first remembered first; order[head:] is live
	head  int
	base  uint64 // sequence number of order[0]
	next  uint64 // sequence number of the next record remembered
	// strs interns the keys of marks and the values of enumerated keys (index+1 in packed;
	// 0 is none), at most maxInterned of them; strIdx finds them.
	strs   []string
	strIdx map[string]uint16
	// extra holds the marks of the records whose marks do not pack (more than packedMarks
	// of them, a string value not interned), by ID.
	extra map[ID][]Mark
}

// packedMarks is how many marks a record holds without extra: an outcome, a duration, a
// count and a reason.
const packedMarks = 4

// maxInterned bounds the interned strings (keys and enumerated values are few).
const maxInterned = 1 << 12

// slot is one remembered record.
type slot struct {
	id       ID
	deadline int64
	fate     Fate
	n        uint8 // packed marks; packedMarks+1: its marks are in extra
	marks    [packedMarks]packed
}

// packed is one mark: its key's and string value's places in Memory.strs (plus one), its
// type and number.
type packed struct {
	key, str uint16
	typ      pcommon.ValueType
	num      int64
}

// New returns a Memory that remembers a record for retention ns after it was first
// remembered, and at most max records (max >= 1). The string values of the keys enums (the
// processor's outcomes, reasons, phases) are interned; those of other keys are kept apart.
func New(retention int64, max int, enums ...string) *Memory {
	m := &Memory{retention: retention, max: max, index: make(map[ID]uint64), enums: map[string]bool{},
		strIdx: map[string]uint16{}, extra: map[ID][]Mark{}}
	for _, k := range enums {
		m.enums[k] = true
	}
	return m
}

// intern returns the place (plus one) of s in m.strs, adding it; 0 when the table is full.
func (m *Memory) intern(s string) uint16 {
	if i, ok := m.strIdx[s]; ok {
		return i
	}
	if len(m.strs) >= maxInterned {
		return 0
	}
	m.strs = append(m.strs, strings.Clone(s))
	i := uint16(len(m.strs))
	m.strIdx[m.strs[i-1]] = i
	return i
}

// pack sets sl's fate and marks to d's, in extra when they do not pack; m.mu is held.
func (m *Memory) pack(sl *slot, d Decision) {
	sl.fate = d.Fate
	if sl.n > packedMarks {
		delete(m.extra, sl.id)
	}
	if len(d.Marks) <= packedMarks {
		ok := true
		for i, mk := range d.Marks {
			p := packed{key: m.intern(mk.Key), typ: mk.Type, num: mk.Num}
			if mk.Type == pcommon.ValueTypeStr {
				if m.enums[mk.Key] {
					p.str = m.intern(mk.Str)
				}
				if p.str == 0 {
					ok = false
				}
			}
			if p.key == 0 {
				ok = false
			}
			sl.marks[i] = p
		}
		if ok {
			sl.n = uint8(len(d.Marks))
			return
		}
	}
	sl.n = packedMarks + 1
	m.extra[sl.id] = cloneMarks(d.Marks)
}

// decision returns what sl remembers; m.mu is held.
func (m *Memory) decision(sl *slot) Decision {
	d := Decision{Fate: sl.fate}
	if sl.n > packedMarks {
		d.Marks = m.extra[sl.id]
		return d
	}
	if sl.n > 0 {
		d.Marks = make([]Mark, sl.n)
		for i := range d.Marks {
			p := &sl.marks[i]
			d.Marks[i] = Mark{Key: m.strs[p.key-1], Type: p.typ, Num: p.num}
			if p.str > 0 {
				d.Marks[i].Str = m.strs[p.str-1]
			}
		}
	}
	return d
}

func cloneMarks(ms []Mark) []Mark {
	out := make([]Mark, len(ms))
	for i, mk := range ms {
		out[i] = Mark{Key: strings.Clone(mk.Key), Str: strings.Clone(mk.Str), Num: mk.Num, Type: mk.Type}
	}
	return out
}

// at returns the slot of the record with sequence number seq; m.mu is held.
func (m *Memory) at(seq uint64) *slot { return &m.order[seq-m.base] }

// Lookup returns the decision remembered for the record id, if any.
func (m *Memory) Lookup(id ID) (Decision, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	seq, ok := m.index[id]
	if !ok || m.at(seq).fate == fateReserved {
		return Decision{}, false
	}
	return m.decision(m.at(seq)), true
}

// Len returns the number of records remembered.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.index)
}

// Reserve returns the decision remembered for the record id when there is one (found);
// otherwise it takes a place for the record, at now (Unix ns), which the Remember of its
// decision fills (place). A record whose place is taken but not filled yet (its first
// delivery still on its way) is not found, and gets no place (0): this copy's decision is not
// remembered. One lookup for both: a record is looked up once per delivery.
func (m *Memory) Reserve(now int64, id ID) (d Decision, found bool, place uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if seq, ok := m.index[id]; ok {
		sl := m.at(seq)
		if sl.fate != fateReserved {
			return m.decision(sl), true, 0
		}
		// Another copy of a record on its way (twice in one batch, or sent again before its
		// first delivery left): judged afresh, and not remembered, the first copy's decision
		// being the record's.
		return Decision{}, false, 0
	}
	m.order = append(m.order, slot{id: id, deadline: now + m.retention})
	m.index[id] = m.next
	m.next++
	return Decision{}, false, m.next
}

// Remember records the decisions of es at now (Unix ns), setting the Deadline of each entry
// of es to its record's, and forgets the records past their retention or beyond Max. A record
// already remembered keeps its place and deadline and takes the new decision. es's marks
// are copied.
func (m *Memory) Remember(now int64, es []Entry) {
	if len(es) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range es {
		e := &es[i]
		if seq := e.Place - 1; e.Place != 0 && seq >= m.base+uint64(m.head) && seq < m.next {
			if sl := m.at(seq); sl.id == e.ID {
				// A held record its use released before this Remember was settled already.
				if e.Fate != FateHeld || sl.fate == fateReserved {
					m.pack(sl, e.Decision)
				}
				e.Decision, e.Deadline = m.decision(sl), sl.deadline
				continue
			}
		}
		e.Deadline = m.put(e.ID, now+m.retention, e.Decision)
	}
	m.expire(now)
}

// put remembers d for id with deadline, unless id is remembered already (then it takes d and
// keeps its deadline), and returns its deadline; m.mu is held.
func (m *Memory) put(id ID, deadline int64, d Decision) int64 {
	if seq, ok := m.index[id]; ok {
		sl := m.at(seq)
		if d.Fate != FateHeld || sl.fate == fateReserved {
			m.pack(sl, d)
		}
		return sl.deadline
	}
	m.order = append(m.order, slot{id: id, deadline: deadline})
	m.index[id] = m.next
	m.next++
	m.pack(&m.order[len(m.order)-1], d)
	return deadline
}

// Settle sets the decision of a record remembered as held (FateHeld) once its held copy has
// left, and returns its entry as remembered now (for storage); a record no longer remembered
// stays forgotten (ok false). A record released before its own batch remembered it as held
// (its place reserved) keeps the settled decision: Remember does not make it held again.
func (m *Memory) Settle(id ID, d Decision) (_ Entry, ok bool) {
	if id == 0 {
		return Entry{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	seq, ok := m.index[id]
	if !ok {
		return Entry{}, false
	}
	sl := m.at(seq)
	m.pack(sl, d)
	return Entry{ID: id, Deadline: sl.deadline, Decision: m.decision(sl)}, true
}

// Expire forgets the records past their retention at now (Unix ns).
func (m *Memory) Expire(now int64) {
	m.mu.Lock()
	m.expire(now)
	m.mu.Unlock()
}

func (m *Memory) expire(now int64) {
	for m.head < len(m.order) {
		sl := &m.order[m.head]
		if sl.deadline > now && len(m.order)-m.head <= m.max {
			break
		}
		delete(m.index, sl.id)
		if sl.n > packedMarks {
			delete(m.extra, sl.id)
		}
		m.head++
	}
	// Compact once the dead front is the larger part, so the slice never grows without bound.
	if m.head > 0 && m.head >= len(m.order)-m.head {
		n := copy(m.order, m.order[m.head:])
		m.order = m.order[:n]
		m.base += uint64(m.head)
		m.head = 0
	}
}

// Snapshot returns a copy of every record remembered, oldest first, for storage.
func (m *Memory) Snapshot() []Entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Entry, 0, len(m.order)-m.head)
	for i := m.head; i < len(m.order); i++ {
		if sl := &m.order[i]; sl.fate != fateReserved {
			out = append(out, Entry{ID: sl.id, Deadline: sl.deadline, Decision: m.decision(sl)})
		}
	}
	return out
}

// Restore adds the records es (oldest first, with their deadlines) as stored, before any
// other use of m, and forgets those past their deadline at now.
func (m *Memory) Restore(now int64, es []Entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range es {
		if es[i].ID != 0 {
			m.put(es[i].ID, es[i].Deadline, es[i].Decision)
		}
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
