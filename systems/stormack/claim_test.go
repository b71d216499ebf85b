package stormack

import (
	"testing"

	"ftbench/systems"
	"ftbench/workloads"
)

// stormack's reader claim follows where the plan's keyed state lives: in
// the external store (fused into the sink: monotonic) or in a bolt's memory,
// which a crash resets (bank's debit stage: not monotonic).
func TestClaimFollowsWhereStateLives(t *testing.T) {
	for _, tc := range []struct {
		workload  string
		monotonic bool
	}{{"wordcount", true}, {"grep", true}, {"bank", false}} {
		w, err := workloads.New(tc.workload, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := systems.Lookup("stormack")
		c := systems.ClaimFor(s, "default", systems.Options{}, w.Plan())
		if c.Guarantee != systems.AtLeastOnce || c.Monotonic != tc.monotonic {
			t.Errorf("%s: claim %s, want at-least-once with monotonic %v", tc.workload, c, tc.monotonic)
		}
	}
}

// The claim follows --ackers: acking off is at most once (nothing is
// replayed, and spouts commit before they emit), the reader half still
// follows where the state lives; a value Compile would refuse keeps the
// default claim (Compile reports it).
func TestClaimFollowsAckers(t *testing.T) {
	s, _ := systems.Lookup("stormack")
	for _, tc := range []struct {
		workload, ackers string
		want             systems.Claim
	}{
		{"grep", "0", systems.Claim{Guarantee: systems.AtMostOnce, Monotonic: true}},
		{"wordcount", "0", systems.Claim{Guarantee: systems.AtMostOnce, Monotonic: true}},
		{"bank", "0", systems.Claim{Guarantee: systems.AtMostOnce, Monotonic: false}},
		{"wordcount", "1", systems.Claim{Guarantee: systems.AtLeastOnce, Monotonic: true}},
		{"wordcount", "workers", systems.Claim{Guarantee: systems.AtLeastOnce, Monotonic: true}},
		{"wordcount", "-1", systems.Claim{Guarantee: systems.AtLeastOnce, Monotonic: true}},
	} {
		w, err := workloads.New(tc.workload, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c := systems.ClaimFor(s, "default", systems.Options{"ackers": tc.ackers}, w.Plan()); c != tc.want {
			t.Errorf("%s --ackers %s: claim %s, want %s", tc.workload, tc.ackers, c, tc.want)
		}
	}
}
