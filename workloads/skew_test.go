package workloads

import (
	"math"
	"testing"

	"ftbench/engine"
)

// A vocabulary of one word sends every count to one instance: its share is
// 1, and that instance alone bounds the rate, however many there are.
func TestOneWordGoesToOneInstance(t *testing.T) {
	w := mustNew(t, "wordcount", map[string]string{"vocabulary": "1"})
	c := engine.DefaultCost()
	c.Cores = 0 // only the instances limit
	costs := w.CostPerRecord(&c)
	for _, par := range []int{1, 4, 64} {
		if s := BusiestShare(w, &c, "count", par); s != 1 {
			t.Fatalf("par %d: busiest count share %v, want 1", par, s)
		}
		want := 1e9 / float64(max(costs["count"], costs["sink"]))
		if par == 1 {
			want = 1e9 / float64(max(costs["source"], costs["split"], costs["count"], costs["sink"]))
		}
		if got := CapacityBound(w, &c, par, par); math.Abs(got-want) > 1e-9*want {
			t.Fatalf("par %d: bound %.1f, want %.1f", par, got, want)
		}
	}
	if s := BusiestShare(w, &c, "split", 4); s != 0.25 {
		t.Fatalf("split is fed evenly by the source partitions: share %v", s)
	}
}

// The shares are the workload's exact distribution: running many records
// through the plan's real stage functions, routed as the systems route
// them (KeyPartition for a hash stage), gives per-instance CPU within
// sampling error of InstanceShares, for Zipf and uniform words and for
// bank's two keyed stages.
func TestSharesMatchTheRecords(t *testing.T) {
	c := engine.DefaultCost()
	for _, tc := range []struct {
		name string
		opts map[string]string
		par  int
	}{
		{"wordcount", nil, 4},
		{"wordcount", nil, 16},
		{"wordcount", map[string]string{"zipf-s": "0", "vocabulary": "200"}, 16},
		// Beyond the table: the exact rejection-inversion and uniform samplers.
		{"wordcount", map[string]string{"vocabulary": "100000"}, 8},
		{"wordcount", map[string]string{"zipf-s": "0", "vocabulary": "100000"}, 8},
		{"bank", map[string]string{"accounts": "100"}, 8},
	} {
		w := mustNew(t, tc.name, tc.opts)
		plan := w.Plan()
		got := map[string][]float64{}
		for _, st := range plan.Stages {
			got[st.Name] = make([]float64, tc.par)
		}
		state := make([]map[uint64]int64, len(plan.Stages))
		for i := range state {
			state[i] = map[uint64]int64{}
		}
		var push func(stage, from int, m engine.Msg)
		push = func(stage, from int, m engine.Msg) {
			st := &plan.Stages[stage]
			inst := from
			switch st.Input {
			case Hash:
				inst = KeyPartition(m.Key, tc.par)
			case Forward:
			default:
				t.Fatalf("%s: untested partitioning %v", tc.name, st.Input)
			}
			got[st.Name][inst] += float64(st.Cost(&c, m))
			emit := func(out engine.Msg) { push(stage+1, inst, out) }
			switch {
			case st.Sink:
			case st.Keyed():
				v := state[stage][m.Key]
				st.Update(&v, m, emit)
				state[stage][m.Key] = v
			default:
				st.Fn(m, emit)
			}
		}
		const perPart = 40000
		for p := range tc.par {
			for off := int64(0); off < perPart/int64(tc.par)*4; off++ {
				push(0, p, w.Record(int32(p), off))
			}
		}
		want := InstanceShares(w, &c, tc.par)
		for _, st := range plan.Stages {
			total := 0.0
			for _, v := range got[st.Name] {
				total += v
			}
			for i, v := range got[st.Name] {
				share := v / total
				// A binomial share's standard error is below 0.5/sqrt(n)
				// for n = 160000 sampled records or more: 0.00125. Allow 4.
				if d := math.Abs(share - want[st.Name][i]); d > 0.005 {
					t.Errorf("%s %v par %d: %s/%d does %.4f of the work, InstanceShares says %.4f",
						tc.name, tc.opts, tc.par, st.Name, i, share, want[st.Name][i])
				}
			}
		}
	}
}

// Grep has no keyed stage: its bound is the even-spread one, unchanged.
func TestEvenWorkloadSharesAreEven(t *testing.T) {
	w := mustNew(t, "grep", nil)
	c := engine.DefaultCost()
	for op, sh := range InstanceShares(w, &c, 5) {
		for i, s := range sh {
			if s != 0.2 {
				t.Fatalf("%s/%d: share %v, want 0.2", op, i, s)
			}
		}
	}
}
