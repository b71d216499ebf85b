package chapter

import (
	"io"
	"testing"

	"ftbench/engine"
	_ "ftbench/systems/all"
)

// A real, short campaign of two jobs (none's grep capacity and the
// latency run at half of it), run twice into one folder: the second run
// reuses both results instead of running again.
func TestRunResumes(t *testing.T) {
	all, err := Jobs(Quick)
	if err != nil {
		t.Fatal(err)
	}
	var jobs []Job
	for _, j := range all {
		if j.Setup.ID == "none" && (j.Measure == Cap100 || j.Measure == Latency) {
			j.Config.Duration = engine.Second
			j.Tolerance = 0.5
			jobs = append(jobs, j)
		}
	}
	out := t.TempDir()
	first, err := Run(out, jobs, 2, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Failed) > 0 || len(first.Caps) != 1 || len(first.Runs) != 1 {
		t.Fatalf("first pass: %d searches, %d runs, failed %v", len(first.Caps), len(first.Runs), first.Failed)
	}
	lat := "none." + string(Latency)
	if c, r := first.Caps["none."+string(Cap100)], first.Runs[lat]; c.CapacityRPS == nil || r.OfferedRPS != *c.CapacityRPS/2 {
		t.Errorf("the latency run offered %g, want half the capacity %v", r.OfferedRPS, c.CapacityRPS)
	}
	again, err := Run(out, jobs, 2, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if again.Dirs[lat] != first.Dirs[lat] || again.Runs[lat].Host.RunID != first.Runs[lat].Host.RunID {
		t.Errorf("the second pass ran the latency job again: %s, first %s", again.Dirs[lat], first.Dirs[lat])
	}
}
