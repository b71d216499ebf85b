package stormack_test

import (
	"testing"

	"ftbench/engine"
	"ftbench/harness"
)

// A pause longer than detection (and than the ack timeout) makes the
// paused worker's executors zombies: when it wakes, the stale spout/0
// replays the trees that timed out while it was stopped — it emits them
// again — until its supervisor learns the worker was declared lost and
// kills its executors; the fresh spout resumes from the committed offsets.
// What the stale incarnations emitted shows as duplicates, which
// at-least-once allows; nothing is lost.
func TestPauseZombieExecutors(t *testing.T) {
	cfg := harness.DefaultConfig()
	cfg.System = "stormack"
	cfg.Rate = 10000
	cfg.Duration = 8 * engine.Second
	cfg.Faults = []string{"pause@3s-5.5s:op=source/0"}
	cfg.SystemOpts = map[string]string{"ack-timeout": "1s"}
	out, err := harness.Execute(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := out.Result
	if !r.ClaimHeld || r.ExitCode != 0 || r.Lost != 0 || r.Duplicates == 0 {
		t.Fatalf("claim held %v, exit %d, %d lost, %d duplicates: want at-least-once with duplicates", r.ClaimHeld, r.ExitCode, r.Lost, r.Duplicates)
	}
	const wake = 5500 * engine.Millisecond
	killed := wake + 2*engine.DefaultCost().NetLatency
	var staleReplays, freshResumes int
	var up engine.Time
	for _, e := range out.Events {
		switch {
		case e.Kind == "worker_up":
			up = e.Time
		case e.Kind == "timeout_replay" && e.Proc == "source/0" && e.Time >= wake && e.Time < killed:
			staleReplays++
		case e.Kind == "spout_resume" && e.Proc == "source/0" && e.Time >= killed:
			freshResumes++
		}
	}
	if staleReplays == 0 {
		t.Fatal("the stale spout emitted nothing between the wake and its kill")
	}
	if up != killed {
		t.Fatalf("worker back at %s, want when the stale executors are killed (%s)", up, killed)
	}
	if freshResumes != 1 {
		t.Fatalf("%d fresh spout/0 resumes after the kill, want 1", freshResumes)
	}
}
