package barrier

import (
	"fmt"
	"testing"

	"ftbench/engine"
)

// A master crash (crash@T:master): the coordinator dies and a new leader
// restarts every task from the latest completed checkpoint in the store.
func TestMasterCrashExactlyOnce(t *testing.T) {
	for _, variant := range []string{"aligned", "unaligned", "sync"} {
		t.Run(variant, func(t *testing.T) {
			r := execute(t, e2eConfig(variant, "crash@3s:master")).Result
			exactlyOnce(t, r)
			if len(r.Recoveries) != 1 || r.Recoveries[0].Crashed == nil || r.Recoveries[0].Crashed.Worker != engine.MasterNode {
				t.Fatalf("recoveries = %+v, want the master crash", r.Recoveries)
			}
			if ph := r.Recoveries[0].Phases; ph == nil || ph.RedeployedS == nil || ph.RestoredS == nil || *ph.RedeployedS < 1 {
				t.Errorf("phases = %+v, want a redeploy and restore after the master is back (1s)", ph)
			}
			if n := metric[int64](t, r, "leader_takeovers"); n != 1 {
				t.Errorf("leader_takeovers = %d, want 1", n)
			}
		})
	}
}

// The required case: the master dies after checkpoint k's metadata is
// durable (k is complete) but before any sink got its commit notice. The
// new leader restores k and the restored sinks commit k's pre-committed
// transactions (Flink's recoverAndCommit), so k's output appears exactly
// once; aborting them instead would lose it (the sources rewind to k's
// offsets, after those records).
func TestMasterCrashBetweenCompletionAndCommitNotice(t *testing.T) {
	base := execute(t, e2eConfig("aligned"))
	var k int64
	var completed engine.Time
	for _, e := range base.Events {
		if e.Kind == "checkpoint_completed" && e.Time >= 3*engine.Second {
			k, completed = e.ID, e.Time
			break
		}
	}
	if k == 0 {
		t.Fatal("no checkpoint completed after 3s in the fault-free run")
	}
	// The commit notices leave with the completion and take a network
	// latency (100µs) to arrive: crash 10µs after the completion.
	crash := completed + 10*engine.Microsecond
	out := execute(t, e2eConfig("aligned", fmt.Sprintf("crash@%dns:master", crash)))
	r := out.Result
	exactlyOnce(t, r)

	precommitted, committedBefore, committedAfter := 0, 0, 0
	var restoredFrom int64 = -1
	for _, e := range out.Events {
		switch {
		case e.Kind == "sink_precommit" && e.ID == k && e.Time < crash:
			precommitted++
		case e.Kind == "sink_commit" && e.ID == k && e.Time < crash:
			committedBefore++
		case e.Kind == "sink_commit" && e.ID == k:
			committedAfter++
		case e.Kind == "leader_takeover":
			restoredFrom = e.ID
		}
	}
	if precommitted == 0 {
		t.Fatalf("no sink pre-committed a transaction for checkpoint %d before the crash", k)
	}
	if committedBefore != 0 {
		t.Fatalf("%d sinks committed checkpoint %d before the crash at %s: the crash missed the window", committedBefore, k, crash)
	}
	if restoredFrom != k {
		t.Errorf("the new leader restored checkpoint %d, want %d (completed before the crash)", restoredFrom, k)
	}
	if committedAfter != precommitted {
		t.Errorf("%d of %d pre-committed transactions of checkpoint %d committed after the takeover", committedAfter, precommitted, k)
	}
	if n := r.Counters["barrier_sink_recovered_commits"]; n < int64(precommitted) {
		t.Errorf("barrier_sink_recovered_commits = %d, want >= %d", n, precommitted)
	}
}

// A master crash with a worker down: the new leader hears of the worker
// from the runtime and deploys only once it is back.
func TestMasterCrashWhileWorkerDown(t *testing.T) {
	r := execute(t, e2eConfig("aligned", "crash@2500ms:worker=1,restart=2s", "crash@3s:master,restart=500ms")).Result
	exactlyOnce(t, r)
}
