package barrier

import (
	"strings"
	"testing"

	"ftbench/engine"
	"ftbench/harness"
)

// shrunkRun is a torture run shrunk to its faults, replayed step by step:
// its bench run line as a configuration, and the checks that failed before
// its fix.
type shrunkRun struct {
	name                        string
	variant                     string
	seed                        uint64
	duration                    engine.Time
	parallelism, workers, slots int
	rate                        float64
	faults                      []string
	opts                        map[string]string
	check                       func(t *testing.T, out *harness.Outcome)
}

func (s shrunkRun) config() harness.Config {
	cfg := harness.DefaultConfig()
	cfg.System, cfg.Variant, cfg.Workload, cfg.Seed = "barrier", s.variant, "wordcount", s.seed
	cfg.Duration, cfg.Parallelism, cfg.Workers, cfg.Slots, cfg.Rate = s.duration, s.parallelism, s.workers, s.slots, s.rate
	cfg.Faults = s.faults
	cfg.SystemOpts = s.opts
	return cfg
}

// The seed-7 barrier campaign's broken runs (bench torture --system
// barrier --runs 200 --seed 7), shrunk.
func TestShrunkTortureRuns(t *testing.T) {
	for _, s := range []shrunkRun{
		{
			// A checkpoint trigger that overtakes a source's Deploy (torture, barrier
			// seed 7, run 89, shrunk): worker 0 is paused until it is declared failed
			// and the job fails over with its tasks re-placed elsewhere; the Deploy
			// for worker 3's tasks waits in their input while worker 3 is paused too,
			// and the next trigger, sent ahead of queued input (chaining: the
			// coordinator's mail), reaches source 3 before its Deploy. The source used
			// to drop it, so checkpoint 5 waited for source 3's acknowledgement until
			// --checkpoint-timeout (10 min): no later checkpoint was triggered (one at
			// a time), no 2PC transaction committed after it, and the run lost 49 696
			// effects under an exactly-once claim. The source now keeps the
			// trigger and its deployment declines it, as a Flink task not yet
			// RUNNING does (TASK_NOT_READY); the coordinator aborts the
			// checkpoint without counting it as failed (tolerable 0 would
			// otherwise fail the job over), and the next one completes.
			name: "seed7-run89-trigger-before-deploy", variant: "unaligned", seed: 8613800527608185749,
			duration: 3200 * engine.Millisecond, parallelism: 4, workers: 4, slots: 4, rate: 9700,
			faults: []string{"pause@1.538s-3.2s:worker=0", "pause@2.692s-3.2s:worker=3"},
			opts: map[string]string{"chaining": "true", "checkpoint-interval": "500ms", "checkpoint-timeout": "10m",
				"checkpoints-retained": "64", "failover": "full", "full-checkpoint-every": "2", "incremental": "true",
				"object-reuse": "false", "sink": "2pc", "tolerable-failed-checkpoints": "0"},
			check: triggerBeforeDeployDeclined,
		},
		{
			// A discarded checkpoint's leftover files are not a retained checkpoint
			// with a snapshot missing (torture, barrier seed 7, run 170, shrunk).
			// Checkpoint 3 completes 4 ms before the master crashes, with checkpoint 4
			// pending (two concurrent), so checkpoint 1, discarded beyond the
			// retention of 2, waits for checkpoint 4 to finish before its files go.
			// The crash loses that list, as Flink's JobManager loses its pending
			// discards; the new leader rebuilds its registry from the retained
			// checkpoints (2 and 3) alone, and later deletes checkpoint 1's piece of
			// the incremental chain once no retained checkpoint references it, while
			// the sources' offsets of checkpoint 1 stay in the store. The post-run
			// audit took a checkpoint with its first source's snapshot present for a
			// retained one and reported "checkpoint 1: count/0 has no snapshot" as a
			// safety violation. It now audits the checkpoints the last metadata record
			// retains (what a restore can use), and any other one only when its files
			// are all there.
			name: "seed7-run170-discarded-checkpoint-leftovers", variant: "aligned", seed: 6630824102760882351,
			duration: 2200 * engine.Millisecond, parallelism: 3, workers: 2, rate: 6600,
			faults: []string{"pause@1.066s-1.685s:worker=0", "throttle@1.188s-2.2s:edge=split->count,rate=1000/s",
				"crash@2.092s:master,restart=300ms"},
			opts: map[string]string{"chaining": "true", "checkpoint-interval": "500ms", "checkpoint-timeout": "10m",
				"checkpoints-retained": "2", "failover": "full", "full-checkpoint-every": "10", "incremental": "true",
				"max-concurrent-checkpoints": "2", "object-reuse": "true", "sink": "2pc", "tolerable-failed-checkpoints": "0"},
			check: leftoversNotViolations,
		},
	} {
		t.Run(s.name, func(t *testing.T) { s.check(t, execute(t, s.config())) })
	}
}

func triggerBeforeDeployDeclined(t *testing.T, out *harness.Outcome) {
	r := out.Result
	// Step 1: the run reaches the overtaken Deploy it was shrunk to: a
	// source declines a trigger and the coordinator aborts that checkpoint.
	var declined, aborted int64 = -1, -1
	for _, e := range out.Events {
		switch {
		case e.Kind == "trigger_declined_not_ready" && declined < 0:
			declined = e.ID
		case e.Kind == "checkpoint_aborted" && strings.HasPrefix(e.Note, "declined: task not ready") && aborted < 0:
			aborted = e.ID
		}
	}
	if declined < 0 || aborted != declined {
		t.Errorf("declined trigger %d, aborted %d: no source declined a trigger that overtook its Deploy", declined, aborted)
	}
	// Step 2: the decline does not count as a failed checkpoint, so no
	// failover on checkpoint failures follows despite a tolerance of 0.
	if n := metric[int64](t, r, "failovers_on_checkpoint_failure"); n != 0 {
		t.Errorf("failovers_on_checkpoint_failure = %d, want 0: a not-ready decline is not a failure", n)
	}
	// Step 3: checkpoints complete after the pauses end (3.2 s), so the
	// sinks commit again.
	after := 0
	for _, e := range out.Events {
		if e.Kind == "checkpoint_completed" && e.Time > 3200*engine.Millisecond {
			after++
		}
	}
	if after == 0 {
		t.Error("no checkpoint completed after the pauses: the job stopped committing")
	}
	// Step 4: the claim holds (it used to lose effects).
	exactlyOnce(t, r)
}

func leftoversNotViolations(t *testing.T, out *harness.Outcome) {
	r := out.Result
	// Step 1: the run reaches the shrunk case: checkpoint 3 completes with
	// checkpoint 4 pending, and the master crashes before 4 finishes.
	var completed3, crash engine.Time = -1, -1
	for _, e := range out.Events {
		switch {
		case e.Kind == "checkpoint_completed" && e.ID == 3:
			completed3 = e.Time
		case e.Kind == "leader_takeover" && crash < 0:
			crash = e.Time
		}
	}
	if completed3 < 0 || crash < completed3 {
		t.Fatalf("checkpoint 3 completed at %v, new leader at %v: the run no longer reaches the shrunk case", completed3, crash)
	}
	// Step 2: checkpoint 1 completed and was discarded: every completed
	// checkpoint is either audited or counted as not retained.
	done := metric[int64](t, r, "checkpoints_completed")
	checked := metric[int64](t, r, "snapshots_checked")
	if gone := metric[int64](t, r, "snapshots_not_retained"); gone == 0 || checked+gone != done {
		t.Errorf("%d completed, %d checked, %d not retained: want checkpoint 1 among those not retained", done, checked, gone)
	}
	// Step 3: the audit reports no violation, and the retained checkpoints
	// were checked and found consistent.
	if n := metric[int64](t, r, "safety_violations"); n != 0 {
		t.Errorf("safety_violations = %d (%v), want 0", n, r.SystemMetrics["snapshot_problems"])
	}
	if ok := metric[int64](t, r, "snapshots_consistent"); ok < 2 {
		t.Errorf("snapshots_consistent = %d, want the 2 retained checkpoints", ok)
	}
	if r.ExitCode != 0 || !r.ClaimHeld || r.Lost != 0 || r.Duplicates != 0 {
		t.Errorf("exit=%d held=%v lost=%d dup=%d problems=%v", r.ExitCode, r.ClaimHeld, r.Lost, r.Duplicates, r.Problems)
	}
}
