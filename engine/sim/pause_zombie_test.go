package sim_test

import (
	"testing"

	"ftbench/engine"
	"ftbench/harness"
	_ "ftbench/systems/barrier"
)

// A pause longer than detection makes zombies in barrier: the paused
// worker's four tasks are re-placed on spare slots and their paused
// incarnations detached. The commit notice of checkpoint 3 reaches the
// paused sink after it stopped; the new sink restores checkpoint 3 and
// commits its transaction. When the worker wakes, the zombie sink handles
// the stale notice and tries to commit that transaction again — fenced,
// since its record is gone — and a heartbeat round trip later the worker
// learns it was declared lost and its zombies are cancelled. Exactly-once
// holds. (The partition's twin is barrier's TestPartitionZombieSinkFenced;
// this test lives here because it is about the pause's model.)
func TestPauseZombieSinkFenced(t *testing.T) {
	cfg := harness.DefaultConfig()
	cfg.System = "barrier"
	cfg.Variant = "aligned"
	cfg.Rate = 10000
	cfg.Duration = 8 * engine.Second
	cfg.Slots = 6
	cfg.Faults = []string{"pause@3.08s-5.5s:op=sink/0"}
	cfg.CostOverride = []string{"store-latency=50ms"}
	out, err := harness.Execute(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := out.Result
	if !r.ClaimHeld || r.ExitCode != 0 || r.Duplicates != 0 || r.Lost != 0 {
		t.Fatalf("claim held %v, exit %d, %d duplicates, %d lost: %v", r.ClaimHeld, r.ExitCode, r.Duplicates, r.Lost, r.Problems)
	}
	learned := 5500*engine.Millisecond + 2*engine.DefaultCost().NetLatency
	kinds := map[string]int{}
	var fencedAt, cancelledAt []engine.Time
	for _, e := range out.Events {
		kinds[e.Kind]++
		switch e.Kind {
		case "sink_commit_fenced":
			fencedAt = append(fencedAt, e.Time)
			// Fenced by the producer epoch the replacement bumped, as
			// Kafka fences a zombie producer (not only by a missing
			// transaction record).
			if e.Note != "epoch" {
				t.Errorf("zombie commit fenced with note %q, want the producer epoch", e.Note)
			}
		case "zombie_cancelled":
			cancelledAt = append(cancelledAt, e.Time)
		}
	}
	if kinds["worker_declared_failed"] != 1 || kinds["zombie"] != 2 || kinds["task_replaced"] != 2 {
		t.Fatalf("events %v: want one declared failure and worker 0's 2 tasks (source→split/0, count→sink/0) re-placed and detached", kinds)
	}
	if len(fencedAt) == 0 || r.Counters["barrier_sink_fenced_commits"] == 0 {
		t.Fatal("the zombie sink attempted no commit after the wake")
	}
	for _, at := range fencedAt {
		if at < 5500*engine.Millisecond || at >= learned {
			t.Fatalf("fenced commit at %s, want between the wake (5.5s) and the heartbeat answer (%s)", at, learned)
		}
	}
	if len(cancelledAt) != 2 {
		t.Fatalf("%d zombies cancelled, want 2", len(cancelledAt))
	}
	for _, at := range cancelledAt {
		if at != learned {
			t.Fatalf("zombie cancelled at %s, want at the heartbeat answer %s", at, learned)
		}
	}
}
