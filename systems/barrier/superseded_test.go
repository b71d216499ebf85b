package barrier

import (
	"testing"

	"ftbench/engine"
	"ftbench/harness"
)

// A deploy that waited in a partition's cut reaches the zombie of a task
// already re-placed, after retention discarded the checkpoint it restores
// (torture, barrier seed 2, run 194, shrunk by hand): two checkpoints expire
// before the far worker is declared failed, so the coordinator fails over
// twice into the cut; the re-placed tasks complete newer checkpoints and
// checkpoint 1 is deleted; at the heal the stale deploy asks the zombie
// source for it. The zombie's restore fails as a Flink task's does on
// deleted files, and the run stays exactly-once (it used to panic).
func TestSupersededDeployFailsItsRestore(t *testing.T) {
	cfg := harness.DefaultConfig()
	cfg.System, cfg.Workload, cfg.Seed = "barrier", "wordcount", 14004935567542760673
	cfg.Duration, cfg.Parallelism, cfg.Workers, cfg.Slots, cfg.Rate = 3*engine.Second, 1, 4, 8, 1000
	cfg.Faults = []string{"partition@405ms-2.605s:worker=0"}
	cfg.SystemOpts = map[string]string{"checkpoint-interval": "200ms", "checkpoint-timeout": "200ms", "checkpoints-retained": "1"}
	out := execute(t, cfg)
	r := out.Result
	if r.Duplicates != 0 || r.Lost != 0 || r.WrongKeys != 0 || !r.ClaimHeld || r.ExitCode != 0 {
		t.Errorf("dup=%d lost=%d wrong=%d held=%v exit=%d problems=%v", r.Duplicates, r.Lost, r.WrongKeys, r.ClaimHeld, r.ExitCode, r.Problems)
	}
	superseded := 0
	for _, e := range out.Events {
		if e.Kind == "restore_superseded" {
			superseded++
		}
	}
	if superseded == 0 {
		t.Error("no restore_superseded event: the run no longer reaches the stale deploy it was shrunk to")
	}
}
