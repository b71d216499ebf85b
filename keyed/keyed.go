// Package keyed holds Table, the keyed state of a stream operator, of the
// oracle and of the sink's output store: a map from 64-bit keys to int64
// values, updated in place.
//
// Why not a Go map: every input record reads and writes the state of its
// key several times over (the operator, the oracle, the output store), and
// a Go map needs a lookup to read and another to write, hashes the key
// each time and cannot hand out a pointer to a value. With a 10 000-word
// vocabulary a read-modify-write costs 26 ns in a Go map, 15 ns in
// github.com/kamstrup/intmap (no in-place update either) and 4 ns here
// (BenchmarkTable in this package).
package keyed

import (
	"math/bits"
	"slices"
)

// Table maps uint64 keys to int64 values with open addressing and linear
// probing. A key absent from the table reads as 0, as in a Go map.
//
// Invariants: the table is at most 3/4 full, so a probe always ends at an
// empty slot; key 0 marks an empty slot, so the key 0 itself lives apart in
// zero/hasZero. Iteration (Range) visits slots in table order, which
// depends only on the sequence of insertions: the same run gives the same
// order, as ftbench's determinism requires of everything under systems/.
type Table struct {
	slots   []slot
	n       int // keys in slots (key 0 not counted)
	shift   uint8
	hasZero bool
	zero    int64
}

type slot struct {
	key uint64
	val int64
}

// minSlots is the size of a new table: small, since most tables (an
// instance's share of a small vocabulary) stay small.
const minSlots = 16

// New returns a table with room for about n keys before it grows.
func New(n int) *Table {
	t := &Table{}
	t.alloc(max(minSlots, nextPow2(n+n/3+1)))
	return t
}

func nextPow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}

func (t *Table) alloc(size int) {
	t.slots = make([]slot, size)
	t.shift = uint8(64 - bits.Len(uint(size-1)))
}

// home is key's first slot: Fibonacci hashing (the multiplier is 2^64 over
// the golden ratio) spreads sequential keys as well as hashed ones.
func (t *Table) home(key uint64) uint64 { return (key * 0x9E3779B97F4A7C15) >> t.shift }

// Len is the number of keys in the table.
func (t *Table) Len() int {
	if t.hasZero {
		return t.n + 1
	}
	return t.n
}

// Lookup returns key's value and whether key is in the table.
func (t *Table) Lookup(key uint64) (int64, bool) {
	if key == 0 {
		return t.zero, t.hasZero
	}
	mask := uint64(len(t.slots) - 1)
	for i := t.home(key); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.key == key {
			return s.val, true
		}
		if s.key == 0 {
			return 0, false
		}
	}
}

// Get returns key's value, 0 when key is absent.
func (t *Table) Get(key uint64) int64 {
	v, _ := t.Lookup(key)
	return v
}

// Ptr returns a pointer to key's value, inserting key with value 0 if it
// is absent; existed says whether it was there. The pointer is valid until
// the next insertion of another key (which may move every value).
func (t *Table) Ptr(key uint64) (v *int64, existed bool) {
	if key == 0 {
		existed, t.hasZero = t.hasZero, true
		return &t.zero, existed
	}
	mask := uint64(len(t.slots) - 1)
	for i := t.home(key); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.key == key {
			return &s.val, true
		}
		if s.key == 0 {
			if 4*(t.n+1) > 3*len(t.slots) {
				t.grow()
				return t.Ptr(key)
			}
			s.key = key
			t.n++
			return &s.val, false
		}
	}
}

// Set sets key's value.
func (t *Table) Set(key uint64, val int64) {
	p, _ := t.Ptr(key)
	*p = val
}

func (t *Table) grow() {
	old := t.slots
	t.alloc(2 * len(old))
	t.n = 0
	for _, s := range old {
		if s.key != 0 {
			p, _ := t.Ptr(s.key)
			*p = s.val
		}
	}
}

// Range calls f for every key and value in table order (deterministic, not
// sorted).
func (t *Table) Range(f func(key uint64, val int64)) {
	if t.hasZero {
		f(0, t.zero)
	}
	for _, s := range t.slots {
		if s.key != 0 {
			f(s.key, s.val)
		}
	}
}

// Map returns a copy of the table as a Go map (for checks that compare
// whole states once, not per record).
func (t *Table) Map() map[uint64]int64 {
	m := make(map[uint64]int64, t.Len())
	t.Range(func(k uint64, v int64) { m[k] = v })
	return m
}

// Clone returns an independent copy: one allocation and a copy of the
// slots, far cheaper than re-inserting every key (the oracle's milestones,
// workloads.Milestones, copy whole states this way).
func (t *Table) Clone() *Table {
	c := *t
	c.slots = slices.Clone(t.slots)
	return &c
}

// Set is a set of keys that remembers the order they were first added in
// since it was last cleared: a RocksDB memtable's keys (incremental
// checkpoints) or a Kafka Streams record cache's dirty keys.
//
// Why not a Go map: an operator adds its key for every record it
// processes, and a map insert cost kstreams' event loop a tenth of its
// time; here it is one probe of a Table. Invariant: keys holds each key
// of t exactly once.
type Set struct {
	t    Table
	keys []uint64
}

// NewSet returns an empty set.
func NewSet() *Set {
	s := &Set{}
	s.t.alloc(minSlots)
	return s
}

// Add adds key; it keeps its place when it is already there.
func (s *Set) Add(key uint64) {
	if _, existed := s.t.Ptr(key); !existed {
		s.keys = append(s.keys, key)
	}
}

// AddAll adds o's keys in o's order.
func (s *Set) AddAll(o *Set) {
	for _, k := range o.keys {
		s.Add(k)
	}
}

// Has says whether key is in the set.
func (s *Set) Has(key uint64) bool {
	_, ok := s.t.Lookup(key)
	return ok
}

// Len is the number of keys.
func (s *Set) Len() int { return len(s.keys) }

// Keys returns the keys in the order they were first added. The slice is
// the set's own: valid until the next Add or Clear.
func (s *Set) Keys() []uint64 { return s.keys }

// Clear empties the set and keeps its memory. A set cleared every commit
// interval holds few keys for its size after a burst, so it empties the
// slots of its keys one by one then: with every key of a linearly probed
// table going, no probe chain needs repairing.
func (s *Set) Clear() {
	if 8*len(s.keys) < len(s.t.slots) {
		mask := uint64(len(s.t.slots) - 1)
		for _, k := range s.keys {
			if k == 0 {
				continue
			}
			for i := s.t.home(k); ; i = (i + 1) & mask {
				if sl := &s.t.slots[i]; sl.key == k {
					*sl = slot{}
					break
				}
			}
		}
	} else {
		clear(s.t.slots)
	}
	s.t.n, s.t.hasZero, s.t.zero = 0, false, 0
	s.keys = s.keys[:0]
}
