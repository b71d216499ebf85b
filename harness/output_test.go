package harness

import (
	"math"
	"testing"

	"ftbench/check"
	"ftbench/engine"
)

// A 2PC piece the store holds whole (reportPiece) settles exactly as its
// commits reported one by one would: same reads at every instant, same
// regressions and the same first one, and the piece goes back to the pipe
// once, after its last commit settled. Three sink processes with their own
// clocks report singles and pieces out of time order, with small key
// spaces so that pieces and singles overlap on keys and values go down.
func TestPiecesSettleAsTheirCommits(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		held, each := newOutputStore(), newOutputStore()
		released := map[*engine.Commit]int{}
		held.release = func(cs []engine.Commit) {
			released[&cs[:1][0]]++
			for _, c := range cs {
				if got := held.visible.Get(c.Key); got == 0 && c.Value != 0 {
					// Every commit of a released piece is visible or overwritten.
					t.Fatalf("seed %d: piece released before commit of key %d settled", seed, c.Key)
				}
			}
		}
		if !held.holdsPieces() {
			t.Fatal("a store with release and no observer must hold pieces")
		}
		rng := engine.NewRand(seed)
		var clock [3]engine.Time
		var pieces []*engine.Commit
		now := engine.Time(0)
		for i := range 3000 {
			p := rng.IntN(3)
			clock[p] = max(clock[p], now) + engine.Time(rng.IntN(300))*engine.Microsecond
			n := 1 + rng.IntN(6)
			cs := make([]engine.Commit, n)
			for j := range cs {
				cs[j] = engine.Commit{ID: engine.EffectID{Part: int32(p), Off: int64(i), Sub: int32(j)},
					Key: uint64(1 + rng.IntN(5)), Value: int64(1 + rng.IntN(1000))}
			}
			if rng.IntN(2) == 0 {
				held.reportPiece(now, clock[p], cs)
				pieces = append(pieces, &cs[0])
			} else {
				for _, c := range cs {
					held.report(now, clock[p], c, check.CommitFirst)
				}
			}
			for _, c := range cs {
				each.report(now, clock[p], c, check.CommitFirst)
			}
			now = min(clock[0], clock[1], clock[2])
			if rng.IntN(8) == 0 {
				key := uint64(1 + rng.IntN(5))
				if got, want := held.read(key, now), each.read(key, now); got != want {
					t.Fatalf("seed %d: read of key %d at %v: %d held, %d one by one", seed, key, now, got, want)
				}
			}
		}
		held.settle(engine.Time(math.MaxInt64))
		each.settle(engine.Time(math.MaxInt64))
		if held.regressions != each.regressions || (held.first == nil) != (each.first == nil) ||
			(held.first != nil && *held.first != *each.first) {
			t.Fatalf("seed %d: regressions %d (first %+v) held, %d (first %+v) one by one",
				seed, held.regressions, held.first, each.regressions, each.first)
		}
		if each.regressions == 0 {
			t.Fatalf("seed %d: no regression at all: the test does not exercise the order", seed)
		}
		for k := uint64(1); k <= 5; k++ {
			if held.visible.Get(k) != each.visible.Get(k) {
				t.Fatalf("seed %d: key %d ends at %d held, %d one by one", seed, k, held.visible.Get(k), each.visible.Get(k))
			}
		}
		for _, p := range pieces {
			if released[p] != 1 {
				t.Fatalf("seed %d: a piece was released %d times, want once", seed, released[p])
			}
		}
		if len(released) != len(pieces) {
			t.Fatalf("seed %d: %d pieces released, %d reported", seed, len(released), len(pieces))
		}
	}
}

// With the observer, which wants each commit's delivery status, the store
// holds no piece: the pipe then checks a piece's commits one by one.
func TestObservedStoreHoldsNoPieces(t *testing.T) {
	s := newOutputStore()
	s.release = func([]engine.Commit) {}
	s.onSettle = func(*pending) {}
	if s.holdsPieces() {
		t.Fatal("a store whose settled commits go to the observer must not hold pieces")
	}
}
