package kstreams

import (
	"slices"
	"testing"

	"ftbench/workloads"
)

// Sub-topologies split at every key change: wordcount's count reads a
// repartition topic, grep has none, bank repartitions twice (by payer,
// then by payee) and its first sub-topology only repartitions the source.
func TestSplitTopology(t *testing.T) {
	for _, tc := range []struct {
		workload string
		stages   [][]string
		stores   []string
	}{
		{"wordcount", [][]string{{"split"}, {"count", "sink"}}, []string{"", "count"}},
		{"grep", [][]string{{"filter", "sink"}}, []string{""}},
		{"bank", [][]string{{}, {"debit"}, {"credit", "sink"}}, []string{"", "debit", "credit"}},
	} {
		w, err := workloads.New(tc.workload, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		plan := w.Plan()
		subs, err := splitTopology(plan)
		if err != nil {
			t.Fatal(err)
		}
		var got [][]string
		var stores []string
		for _, s := range subs {
			names := []string{}
			for _, i := range s.stages {
				names = append(names, plan.Stages[i].Name)
			}
			got = append(got, names)
			store := ""
			if s.store >= 0 {
				store = plan.Stages[s.store].Name
			}
			stores = append(stores, store)
		}
		if !slices.EqualFunc(got, tc.stages, slices.Equal) || !slices.Equal(stores, tc.stores) {
			t.Errorf("%s: sub-topologies %v stores %v, want %v %v", tc.workload, got, stores, tc.stages, tc.stores)
		}
	}
}
