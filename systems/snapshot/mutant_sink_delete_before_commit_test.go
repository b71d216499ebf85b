//go:build ftbench_mutant_sink_delete_before_commit

package snapshot_test

import (
	"testing"

	"ftbench/engine"
	"ftbench/harness"
)

// This test runs only in the mutant build (go test -tags
// ftbench_mutant_sink_delete_before_commit ./systems/snapshot -run Mutant),
// whose 2PC sink deletes a transaction's record 0.2 ms after sending its
// commit, which lands 1.5 ms after (mutant_sink_delete_before_commit_off.go).
// In this run (torture's seed 5, run 4, shrunk) sink/3, on worker 3,
// records sink_commit 3 at 611.318 ms: a crash of worker 3 at 612 ms,
// between the deletion and the commit, loses transaction 3's effects; at
// 611 ms (before the commit notice) and at 613 ms (after the commit
// landed) the run is exactly-once.
func TestMutantSinkDeleteBeforeCommitCaughtInItsWindow(t *testing.T) {
	for _, c := range []struct {
		at   string
		lost bool
	}{{"611ms", false}, {"612ms", true}, {"613ms", false}} {
		cfg := harness.DefaultConfig()
		cfg.System, cfg.Variant, cfg.Workload = "snapshot", "cl", "wordcount"
		cfg.Seed = 6691608647826748915
		cfg.Duration = 800 * engine.Millisecond
		cfg.Parallelism, cfg.Workers, cfg.Rate = 4, 4, 8100
		cfg.SystemOpts = map[string]string{"checkpoint-interval": "200ms"}
		cfg.Faults = []string{"crash@" + c.at + ":worker=3,restart=300ms"}
		r := execute(t, cfg)
		if c.lost && (r.ExitCode != 3 || r.Lost == 0 || r.ClaimHeld) {
			t.Fatalf("crash at %s, in the window: exit %d, lost %d, claim held %v: the mutant must lose transaction 3", c.at, r.ExitCode, r.Lost, r.ClaimHeld)
		}
		if !c.lost && (r.ExitCode != 0 || r.Lost != 0 || r.Duplicates != 0) {
			t.Fatalf("crash at %s, outside the window: exit %d, lost %d, duplicates %d %v", c.at, r.ExitCode, r.Lost, r.Duplicates, r.Problems)
		}
	}
}
