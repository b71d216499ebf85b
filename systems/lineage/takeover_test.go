package lineage

import (
	"fmt"
	"testing"

	"ftbench/engine"
	"ftbench/harness"
)

func masterConfig(workload, variant string, faults ...string) harness.Config {
	cfg := runConfig(workload, variant, 1000, 8*engine.Second, faults...)
	cfg.SystemOpts[optCkpt] = "3"
	if workload == "grep" {
		cfg.Rate = 6000
	}
	return cfg
}

func exactlyOnceHeld(t *testing.T, r *harness.Result) {
	t.Helper()
	if r.Duplicates != 0 || r.Lost != 0 || r.WrongKeys != 0 || !r.ClaimHeld || r.ExitCode != 0 || r.RecoveryTimeS == nil {
		t.Fatalf("dup=%d lost=%d wrong=%d held=%v exit=%d recovered=%v problems=%v\nreplay: %s",
			r.Duplicates, r.Lost, r.WrongKeys, r.ClaimHeld, r.ExitCode, r.RecoveryTimeS != nil, r.Problems, r.Replay)
	}
}

// A master crash is Spark Streaming's driver failure: the executors go
// with the driver, and a new driver recovers the job from its metadata
// checkpoint and batch log, recomputes the state since the checkpoint
// through lineage and starts new executors. Exactly-once holds.
func TestMasterCrashExactlyOnce(t *testing.T) {
	for _, tc := range []struct{ workload, variant string }{
		{"wordcount", "parallel"}, {"wordcount", "upstream"}, {"bank", "parallel"}, {"grep", "parallel"},
	} {
		t.Run(tc.workload+"/"+tc.variant, func(t *testing.T) {
			t.Parallel()
			out, err := harness.Execute(masterConfig(tc.workload, tc.variant, "crash@5600ms:master"))
			if err != nil {
				t.Fatal(err)
			}
			r := out.Result
			exactlyOnceHeld(t, r)
			takeovers := 0
			for _, e := range out.Events {
				if e.Kind == "leader_takeover" {
					takeovers++
				}
			}
			if takeovers != 1 {
				t.Errorf("%d driver takeovers, want 1", takeovers)
			}
			// The executors die with the driver (the standby of upstream
			// runs on the master node itself).
			want := 1 + 16 + map[string]int{"upstream": 1}[tc.variant]
			if c := r.Recoveries[0].Crashed; c == nil || len(c.Processes) != want {
				t.Errorf("crashed %+v, want the driver and every executor (%d processes)", c, want)
			}
			if ph := r.Recoveries[0].Phases; ph == nil || ph.DetectedS == nil || *ph.DetectedS < 1 {
				t.Errorf("phases %+v: want the new driver's recovery start after the master is back (1s)", ph)
			}
			if tc.workload != "grep" && r.Counters["lineage.partitions_recomputed"] == 0 {
				t.Errorf("no partition recomputed: the state since the checkpoint was not rebuilt")
			}
		})
	}
}

// A master crash at each step of a batch's life and of a checkpoint's:
// just after a cut (its log record in flight), while a job runs, just
// after a batch became visible, and just after a state checkpoint
// completed (its metadata record in flight). Each is exactly-once.
func TestMasterCrashAtEachStep(t *testing.T) {
	base, err := harness.Execute(masterConfig("wordcount", "parallel"))
	if err != nil {
		t.Fatal(err)
	}
	first := map[string]engine.Time{}
	for _, e := range base.Events {
		if _, seen := first[e.Kind]; !seen && e.Time >= 3*engine.Second {
			first[e.Kind] = e.Time
		}
	}
	for _, step := range []string{"batch_cut", "job_start", "job_done", "batch_committed", "checkpoint_done"} {
		t.Run(step, func(t *testing.T) {
			t.Parallel()
			at, ok := first[step]
			if !ok {
				t.Fatalf("no %s after 3s in the fault-free run", step)
			}
			r := execute(t, masterConfig("wordcount", "parallel", fmt.Sprintf("crash@%dns:master,restart=300ms", at+engine.Microsecond)))
			exactlyOnceHeld(t, r)
		})
	}
}
