package workloads

import (
	"math"
	"testing"

	"ftbench/engine"
)

// A per-operator override moves the capacity bound through that operator's
// cost only. On 4 workers of 4 cores at parallelism 4 the bound is the
// busiest operator's busiest instance (1 / (share · cost)), so every
// expectation below is computed from the workload's own CostPerRecord and
// InstanceShares.
func TestCapacityBoundPerOperatorCosts(t *testing.T) {
	const par, workers = 4, 4
	model := func(overrides ...string) *engine.CostModel {
		c := engine.DefaultCost()
		for _, o := range overrides {
			if err := c.Set(o); err != nil {
				t.Fatal(err)
			}
		}
		return &c
	}
	costOf := func(w Workload, op string, overrides ...string) engine.Time {
		return w.CostPerRecord(model(overrides...).For(op))[op]
	}
	bound := func(w Workload, overrides ...string) float64 {
		return CapacityBound(w, model(overrides...), par, workers)
	}
	wc, grep := mustNew(t, "wordcount", nil), mustNew(t, "grep", nil)
	tests := []struct {
		name      string
		w         Workload
		overrides []string // all for one operator, target
		target    string
		busiest   string // the operator whose instances bound the rate afterwards
		same      bool   // the bound must not move
	}{
		// count is wordcount's busiest operator: doubling its state cost
		// lowers the bound to par / its new cost.
		{"count state", wc, []string{"count.state-cpu=8us"}, "count", "count", false},
		// split keeps no state: its state-cpu is never charged.
		{"split state", wc, []string{"split.state-cpu=8us"}, "split", "count", true},
		// sink's sink-cpu doubled still leaves count the busiest.
		{"sink cost", wc, []string{"sink.sink-cpu=3us"}, "sink", "count", true},
		// split's scan cost made huge makes split the busiest.
		{"split scan", wc, []string{"split.scan-per-byte=1us"}, "split", "split", false},
		// grep's filter scans every byte; its sends count too.
		{"filter scan", grep, []string{"filter.scan-per-byte=20ns"}, "filter", "filter", false},
		{"filter send", grep, []string{"filter.send-cpu=40us"}, "filter", "filter", false},
		{"source send", grep, []string{"source.send-cpu=40us"}, "source", "source", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for op := range tc.w.CostPerRecord(&engine.CostModel{}) {
				if op != tc.target && costOf(tc.w, op, tc.overrides...) != costOf(tc.w, op) {
					t.Errorf("override %v changed %s's cost", tc.overrides, op)
				}
			}
			before, after := bound(tc.w), bound(tc.w, tc.overrides...)
			if tc.same {
				if after != before {
					t.Errorf("bound moved from %.0f to %.0f records/s", before, after)
				}
				return
			}
			share := BusiestShare(tc.w, model(tc.overrides...), tc.busiest, par)
			want := 1e9 / (share * float64(costOf(tc.w, tc.busiest, tc.overrides...)))
			if math.Abs(after-want) > 1e-6*want || after == before {
				t.Errorf("bound %.0f records/s (before %.0f), want %.0f: 1 / (%s's busiest share %.3f x its cost)", after, before, want, tc.busiest, share)
			}
		})
	}
	// On wordcount only count pays state-cpu, so a global override and a
	// count-only one give the same bound.
	if g, o := bound(wc, "state-cpu=8us"), bound(wc, "count.state-cpu=8us"); g != o {
		t.Errorf("state-cpu=8us gives %.0f records/s, count.state-cpu=8us %.0f", g, o)
	}
}
