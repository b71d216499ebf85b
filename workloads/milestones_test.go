package workloads

import (
	"maps"
	"math/rand/v2"
	"testing"
)

// feedRounds is the harness's oracle pass over parts x total records,
// taking milestones on the way.
func feedRounds(w Workload, parts int, total int64, m *Milestones) *Oracle {
	o := NewOracle(w)
	for off := range total {
		m.Take(off, o)
		for p := range parts {
			o.Feed(int32(p), off)
		}
	}
	m.End(o)
	return o
}

// replay is an oracle fed {(p, off): off < offsets[p]} from offset 0.
func replay(w Workload, offsets []int64) *Oracle {
	o := NewOracle(w)
	for p, end := range offsets {
		for off := range end {
			o.Feed(int32(p), off)
		}
	}
	return o
}

func sameKeyedState(t *testing.T, w Workload, got, want *Oracle, what string) {
	t.Helper()
	for i := range w.Plan().Stages {
		g, x := got.State(i), want.State(i)
		if maps.Equal(g, x) {
			continue
		}
		for k := range maps.Keys(x) {
			if v, ok := g[k]; !ok || v != x[k] {
				t.Fatalf("%s: stage %s holds %d for key %d, want %d", what, w.Plan().Stages[i].Name, v, k, x[k])
			}
		}
		t.Fatalf("%s: stage %s holds %d keys, want %d", what, w.Plan().Stages[i].Name, len(g), len(x))
	}
}

// TestKeyedStateIgnoresOrder holds every registered workload to the
// contract on Stage.Update: the same records fed round by round, partition
// by partition backwards, and shuffled leave the same keyed state. A
// workload whose state kept the last value seen, say, fails here.
func TestKeyedStateIgnoresOrder(t *testing.T) {
	const parts, n = 4, 300
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			w := mustNew(t, name, nil)
			rounds := feedRounds(w, parts, n, NewMilestones(parts, n))
			type rec struct {
				p   int32
				off int64
			}
			var recs []rec
			for p := parts - 1; p >= 0; p-- {
				for off := int64(n - 1); off >= 0; off-- {
					recs = append(recs, rec{int32(p), off})
				}
			}
			backwards := NewOracle(w)
			for _, r := range recs {
				backwards.Feed(r.p, r.off)
			}
			sameKeyedState(t, w, backwards, rounds, "backwards")
			rand.New(rand.NewPCG(3, 4)).Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
			shuffled := NewOracle(w)
			for _, r := range recs {
				shuffled.Feed(r.p, r.off)
			}
			sameKeyedState(t, w, shuffled, rounds, "shuffled")
		})
	}
}

// TestMilestonesAt: an oracle from the milestones holds exactly the keyed
// state of a replay of the same prefix, from the milestone Base names.
func TestMilestonesAt(t *testing.T) {
	const parts, total = 3, 100 // milestones every 4 rounds, and the end
	tests := []struct {
		offsets []int64
		base    int64
	}{
		{[]int64{0, 0, 0}, 0},
		{[]int64{3, 50, 7}, 0},
		{[]int64{4, 4, 4}, 4},
		{[]int64{37, 90, 41}, 36},
		{[]int64{99, 99, 99}, 96},
		{[]int64{100, 98, 100}, 96},
		{[]int64{100, 100, 100}, 100},
		{[]int64{100, 103, 100}, 100}, // past the log: fed on from the end
		{[]int64{50, 50}, 0},          // another partition count: replayed
	}
	for name, opts := range map[string]map[string]string{"wordcount": {"vocabulary": "50"}, "bank": {"accounts": "20"}} {
		w := mustNew(t, name, opts)
		m := NewMilestones(parts, total)
		feedRounds(w, parts, total, m)
		for _, tc := range tests {
			if got := m.Base(tc.offsets); got != tc.base {
				t.Errorf("%s: Base(%v) = %d, want %d", name, tc.offsets, got, tc.base)
			}
			sameKeyedState(t, w, m.At(w, tc.offsets), replay(w, tc.offsets), name)
		}
	}
	var none *Milestones
	w := mustNew(t, "wordcount", nil)
	if none.Base([]int64{10}) != 0 {
		t.Error("nil milestones have a base")
	}
	sameKeyedState(t, w, none.At(w, []int64{10, 20}), replay(w, []int64{10, 20}), "nil milestones")
}

// TestMilestonesBudget: however the state grows, the milestones hold at
// most the budget's keys and maxMilestones copies, drop every other one to
// stay under it, stop once the state alone exceeds it, and still give
// exact oracles.
func TestMilestonesBudget(t *testing.T) {
	const parts, total = 2, 2000
	w := mustNew(t, "wordcount", map[string]string{"vocabulary": "5000", "zipf-s": "0"})
	m := NewMilestones(parts, total)
	m.budget = 3000
	o := NewOracle(w)
	stopped := int64(-1)
	for off := range int64(total) {
		m.Take(off, o)
		if m.keys > m.budget || len(m.taken) > maxMilestones {
			t.Fatalf("round %d: %d milestones hold %d keys, budget %d", off, len(m.taken), m.keys, m.budget)
		}
		if m.off && stopped < 0 {
			stopped = off
		}
		for p := range parts {
			o.Feed(int32(p), off)
		}
	}
	m.End(o)
	if stopped < 0 || m.end != nil {
		t.Fatalf("a state of %d keys, over the budget of %d, did not stop the milestones (stopped %d, end kept %v)", o.keys(), m.budget, stopped, m.end != nil)
	}
	if m.every <= (total+maxMilestones-1)/maxMilestones || len(m.taken) == 0 {
		t.Fatalf("spacing %d with %d milestones: the budget never thinned them, or dropped them all", m.every, len(m.taken))
	}
	for _, ms := range m.taken {
		if ms.round%m.every != 0 || ms.round >= stopped {
			t.Fatalf("milestone at round %d: not on the spacing %d, or after the stop at %d", ms.round, m.every, stopped)
		}
	}
	last := m.taken[len(m.taken)-1].round
	for _, offsets := range [][]int64{{last, last + 7}, {total, total}, {last - 1, total}} {
		if got, want := m.Base(offsets), min(offsets[0], offsets[1])/m.every*m.every; got != min(want, last) {
			t.Errorf("Base(%v) = %d, want %d", offsets, got, min(want, last))
		}
		sameKeyedState(t, w, m.At(w, offsets), replay(w, offsets), "thinned milestones")
	}
}
