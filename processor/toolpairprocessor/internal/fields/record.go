// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package fields

import "go.opentelemetry.io/collector/pdata/pcommon"

// MaxKeys is the number of keys Register accepts.
const MaxKeys = 128

// Key is a key registered with Register: its slot in a Record.
type Key uint8

// tableSize is the size of the open table that tells a registered key from the others by
// hash, a power of two well above MaxKeys so that most keys have an entry of their own.
const tableSize = 1 << tableBits

// tableBits is the number of bits of a key's hash that give its entry of table.
const tableBits = 10

// collided marks an entry of table shared by several registered keys, which are then looked
// up in overflow.
const collided = 0xFF

// filter has, at index len(k)&31, bit k[0]&31 set for each registered key k: most keys of a
// record are told from the registered ones by it, before any hashing.
var filter [32]uint32

// The registered keys: names by Key; table holds Key+1 at the hash of each registered key
// (0: none), or collided; overflow maps the keys of collided entries. Written by Register
// only, during package initialization, and only read after it.
var (
	names    []string
	table    [tableSize]uint8
	overflow map[string]Key
)

// hashKey is the entry of table of a non-empty key: a multiplicative hash of its length and
// four of its bytes (first, middle, third from last, last), what tells the keys the processor
// reads apart (error.type from event.name, gen_ai.tool.call.id from gen_ai.tool.call_id)
// without reading them whole.
func hashKey(k string) int {
	n := len(k)
	i := max(n-3, 0)
	h := uint32(n)*0x9E3779B1 + uint32(k[0])*0x85EBCA77 + uint32(k[n/2])*0xC2B2AE3D + uint32(k[i])*0x27D4EB2F + uint32(k[n-1])*0x165667B1
	return int(h >> (32 - tableBits)) // the top bits, the best mixed
}

// Register makes key one of the keys a Record collects in its one pass over a map, and
// returns its Key; registering a key twice returns the same Key. It must be called during
// package initialization only (a package-level variable's initializer): Records read the
// registered keys without locking. It panics past MaxKeys keys, or for the empty key.
func Register(key string) Key {
	if k, ok := lookup(key); ok {
		return k
	}
	if key == "" || len(names) >= MaxKeys {
		panic("fields: cannot register key " + key)
	}
	k := Key(len(names))
	names = append(names, key)
	filter[len(key)&31] |= 1 << (key[0] & 31)
	switch h := hashKey(key); table[h] {
	case 0:
		table[h] = uint8(k) + 1
	case collided:
		overflow[key] = k
	default:
		if overflow == nil {
			overflow = map[string]Key{}
		}
		overflow[names[table[h]-1]] = Key(table[h] - 1)
		overflow[key] = k
		table[h] = collided
	}
	return k
}

// Name returns the key k was registered for.
func (k Key) Name() string { return names[k] }

// Lookup returns the Key of key when it is registered: a reader that asks for the same key
// of every record resolves it once and reads it with Record.Value.
func Lookup(key string) (Key, bool) { return lookup(key) }

// lookup returns the Key of a registered key.
func lookup(key string) (Key, bool) {
	if key == "" {
		return 0, false
	}
	switch e := table[hashKey(key)]; e {
	case 0:
		return 0, false
	case collided:
		k, ok := overflow[key]
		return k, ok
	default:
		if k := Key(e - 1); names[k] == key {
			return k, true
		}
		return 0, false
	}
}

// Record reads the fields of one attribute map as Get does (of a repeated key, the last
// occurrence), the registered ones in one pass over the map, made at the first read: the
// readers of a record (its dialect, its conversation, the timeout classifier) share that
// pass instead of scanning the map once per field. A key that is not registered is read
// with Get.
//
// The values refer into the map: a Record is valid for as long as no key is added to or
// removed from its map (setting a value in place is seen). The zero Record reads an empty
// map; Reset points it at another.
type Record struct {
	m      pcommon.Map
	filled bool
	seen   [MaxKeys / 64]uint64
	vals   [MaxKeys]pcommon.Value
}

// Reset points r at m, to be read at its first use.
func (r *Record) Reset(m pcommon.Map) {
	r.m, r.filled = m, false
}

// Release points r at no map and drops its references into the last one.
func (r *Record) Release() {
	clear(r.vals[:len(names)]) // Reset keeps the values of the maps read before
	r.m, r.filled = pcommon.Map{}, false
}

// Map returns the map r reads.
func (r *Record) Map() pcommon.Map { return r.m }

// fill reads the registered keys of r's map in one pass.
func (r *Record) fill() {
	r.seen = [MaxKeys / 64]uint64{}
	r.filled = true
	if r.m == (pcommon.Map{}) {
		return
	}
	for k, v := range r.m.All() {
		// Most keys are not registered: the filter tells most of them, the table entry
		// (empty, or holding another key) the others.
		if k == "" || filter[len(k)&31]&(1<<(k[0]&31)) == 0 {
			continue
		}
		switch e := table[hashKey(k)]; e {
		case 0:
		case collided:
			r.setOverflow(k, v)
		default:
			if s := Key(e - 1); names[s] == k {
				r.vals[s] = v
				r.seen[s>>6] |= 1 << (s & 63)
			}
		}
	}
}

// setOverflow notes value v of key k, whose table entry several registered keys share.
func (r *Record) setOverflow(k string, v pcommon.Value) {
	if s, ok := overflow[k]; ok {
		r.vals[s] = v
		r.seen[s>>6] |= 1 << (s & 63)
	}
}

// Value returns the value of the last occurrence of registered key k, and whether k occurs.
func (r *Record) Value(k Key) (pcommon.Value, bool) {
	if !r.filled {
		r.fill()
	}
	if r.seen[k>>6]&(1<<(k&63)) == 0 {
		return pcommon.Value{}, false
	}
	return r.vals[k], true
}

// Has reports whether registered key k occurs.
func (r *Record) Has(k Key) bool {
	_, ok := r.Value(k)
	return ok
}

// Seen returns the registered keys that occur, as a bit set: bit k&63 of word k>>6 is set
// when Key k occurs.
func (r *Record) Seen() [MaxKeys / 64]uint64 {
	if !r.filled {
		r.fill()
	}
	return r.seen
}

// Get returns the value of the last occurrence of key, and whether key occurs (see Get).
func (r *Record) Get(key string) (pcommon.Value, bool) {
	if k, ok := lookup(key); ok {
		return r.Value(k)
	}
	if r.m == (pcommon.Map{}) {
		return pcommon.Value{}, false
	}
	return Get(r.m, key)
}
