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
