package torture

import (
	"testing"

	"ftbench/harness"
)

// An undrained run is its own class, never a pass or an expected loss, and
// a campaign with one is not clean (exit 4); a claim broken in it still
// counts as broken.
func TestUndrainedIsNotClean(t *testing.T) {
	undrained := harness.Result{ExitCode: harness.ExitLiveness, PendingEffects: 12}
	if got := classify(&undrained); got != Undrained {
		t.Errorf("undrained run: %s, want %s", got, Undrained)
	}
	broken := harness.Result{ExitCode: harness.ExitSafety, PendingEffects: 12, Duplicates: 1}
	if got := classify(&broken); got != Broken {
		t.Errorf("undrained run with a duplicate: %s, want %s", got, Broken)
	}
	rep := &Report{Counts: map[Class]int{Passed: 9, Undrained: 1},
		Runs: []*Run{{Index: 3, Class: Undrained, Problem: "undrained: 12 effects pending"}}}
	if c := rep.ExitCode(); c != harness.ExitLiveness {
		t.Errorf("campaign with an undrained run exits %d, want %d", c, harness.ExitLiveness)
	}
	if s := Summarize(rep); len(s.Failures) != 1 || s.Failures[0].Class != Undrained {
		t.Errorf("summary failures %+v, want the undrained run", s.Failures)
	}
}
