package keyed

import (
	"math/rand/v2"
	"testing"
)

// TestTableAgreesWithMap runs the same random operations on a Table and on
// a Go map, over key sets that stress different paths: sequential keys,
// hashed keys, key 0, and few keys updated very often.
func TestTableAgreesWithMap(t *testing.T) {
	cases := []struct {
		name string
		key  func(r *rand.Rand) uint64
	}{
		{"sequential", func(r *rand.Rand) uint64 { return uint64(r.IntN(5000)) }},
		{"hashed", func(r *rand.Rand) uint64 { return uint64(r.IntN(20000)) * 0x9E3779B97F4A7C15 }},
		{"with-zero", func(r *rand.Rand) uint64 { return uint64(r.IntN(3)) }},
		{"full-range", func(r *rand.Rand) uint64 { return r.Uint64() }},
		{"same-home", func(r *rand.Rand) uint64 { return uint64(r.IntN(64)) << 58 }}, // many keys, one top-bits bucket
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			tab, ref := New(0), map[uint64]int64{}
			for i := range 200_000 {
				k := c.key(r)
				switch r.IntN(4) {
				case 0:
					v, ok := tab.Lookup(k)
					rv, rok := ref[k]
					if v != rv || ok != rok {
						t.Fatalf("op %d: Lookup(%d) = %d,%v, map has %d,%v", i, k, v, ok, rv, rok)
					}
				case 1:
					tab.Set(k, int64(i))
					ref[k] = int64(i)
				default:
					p, existed := tab.Ptr(k)
					_, rok := ref[k]
					if existed != rok {
						t.Fatalf("op %d: Ptr(%d) existed=%v, map has it: %v", i, k, existed, rok)
					}
					*p++
					ref[k]++
				}
			}
			if tab.Len() != len(ref) {
				t.Fatalf("Len %d, map has %d keys", tab.Len(), len(ref))
			}
			got := tab.Map()
			for k, v := range ref {
				if got[k] != v {
					t.Fatalf("key %d: table %d, map %d", k, got[k], v)
				}
			}
		})
	}
}

// TestRangeOrderIsDeterministic: two tables fed the same insertions iterate
// in the same order (ftbench's determinism rule for systems/).
func TestRangeOrderIsDeterministic(t *testing.T) {
	order := func() []uint64 {
		tab := New(0)
		r := rand.New(rand.NewPCG(7, 7))
		for range 10_000 {
			tab.Set(r.Uint64()%50_000, 1)
		}
		var ks []uint64
		tab.Range(func(k uint64, _ int64) { ks = append(ks, k) })
		return ks
	}
	a, b := order(), order()
	if len(a) != len(b) {
		t.Fatal("lengths differ")
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("order differs at %d", i)
		}
	}
}

func benchKeys() []uint64 {
	r := rand.New(rand.NewPCG(1, 1))
	ks := make([]uint64, 1<<16)
	for i := range ks {
		ks[i] = uint64(r.IntN(10_000)) // wordcount's keys are word ranks
	}
	return ks
}

// BenchmarkTable is one read-modify-write of a key of a 10 000-key state,
// as an operator's count does per record; BenchmarkGoMap the same with a
// Go map (the numbers the package comment quotes).
func BenchmarkTable(b *testing.B) {
	ks, tab := benchKeys(), New(0)
	b.ReportAllocs()
	for i := range b.N {
		p, _ := tab.Ptr(ks[i&(1<<16-1)])
		*p++
	}
}

func BenchmarkGoMap(b *testing.B) {
	ks, m := benchKeys(), map[uint64]int64{}
	b.ReportAllocs()
	for i := range b.N {
		k := ks[i&(1<<16-1)]
		m[k] = m[k] + 1
	}
}

// TestCloneIsIndependent: a clone holds the same keys and values, and
// writes to either side (updates, inserts that grow the table, key 0) do
// not show through in the other.
func TestCloneIsIndependent(t *testing.T) {
	tab := New(0)
	for k := range uint64(100) {
		tab.Set(k, int64(k)*10)
	}
	c := tab.Clone()
	if c.Len() != tab.Len() {
		t.Fatalf("clone has %d keys, original %d", c.Len(), tab.Len())
	}
	for k := range uint64(100) {
		if c.Get(k) != int64(k)*10 {
			t.Fatalf("clone: key %d holds %d, want %d", k, c.Get(k), k*10)
		}
	}
	c.Set(5, -1)
	c.Set(0, -2)
	for k := uint64(1000); k < 2000; k++ { // grows the clone's slots
		c.Set(k, 1)
	}
	p, _ := tab.Ptr(7)
	*p = -3
	if tab.Get(5) != 50 || tab.Get(0) != 0 || tab.Len() != 100 {
		t.Fatalf("a write to the clone showed in the original: key 5 %d, key 0 %d, %d keys", tab.Get(5), tab.Get(0), tab.Len())
	}
	if c.Get(7) != 70 {
		t.Fatalf("a write to the original showed in the clone: key 7 %d", c.Get(7))
	}
}

// TestSetKeepsFirstAddedOrder runs random adds and clears on a Set and on a
// Go map with a list beside it: the keys come out in first-added order,
// membership agrees, and a clear (both ways: key by key after a few adds,
// wholesale after many) leaves no key behind in the table.
func TestSetKeepsFirstAddedOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	s := NewSet()
	ref, order := map[uint64]bool{}, []uint64(nil)
	for i := range 290_000 {
		switch {
		case r.IntN(5000) == 0 || (i%50_000 == 49_999):
			s.Clear()
			clear(ref)
			order = order[:0]
			for j, sl := range s.t.slots {
				if sl != (slot{}) {
					t.Fatalf("op %d: slot %d holds %+v after Clear", i, j, sl)
				}
			}
		default:
			k := uint64(r.IntN(3000)) * 0x9E3779B97F4A7C15 // key 0 included
			if r.IntN(3) == 0 {
				if s.Has(k) != ref[k] {
					t.Fatalf("op %d: Has(%d) = %v, want %v", i, k, s.Has(k), ref[k])
				}
				continue
			}
			s.Add(k)
			if !ref[k] {
				ref[k] = true
				order = append(order, k)
			}
		}
		if s.Len() != len(order) {
			t.Fatalf("op %d: Len %d, want %d", i, s.Len(), len(order))
		}
	}
	if got := s.Keys(); len(got) != len(order) || !slicesEqual(got, order) {
		t.Fatalf("Keys out of first-added order")
	}
	u := NewSet()
	u.Add(order[len(order)-1])
	u.AddAll(s)
	if u.Len() != s.Len() || u.Keys()[0] != order[len(order)-1] {
		t.Fatalf("AddAll: %d keys, first %d", u.Len(), u.Keys()[0])
	}
	// A few keys in a table grown large: cleared key by key.
	u.Clear()
	u.Add(0)
	u.Add(7)
	u.Add(7 + 1<<60) // the same home slot as 7 in a small table: a probe chain
	if 8*u.Len() >= len(u.t.slots) {
		t.Fatalf("table of %d slots too small to clear key by key", len(u.t.slots))
	}
	u.Clear()
	for j, sl := range u.t.slots {
		if sl != (slot{}) || u.Has(0) || u.Has(7) {
			t.Fatalf("slot %d holds %+v after a key-by-key Clear", j, sl)
		}
	}
}

func slicesEqual(a, b []uint64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}
