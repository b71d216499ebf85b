package harness

import (
	"testing"

	"ftbench/engine"
	_ "ftbench/systems/barrier"
	_ "ftbench/systems/lineage"
	_ "ftbench/systems/none"
	_ "ftbench/systems/snapshot"
	_ "ftbench/systems/stormack"
)

// A process pause (pause@T1-T2) end to end, per system, at the default
// detect-delay of 1 s. The paused worker hosts count/0 (and, with 4 workers,
// an instance of every operator).
//
//   - short: 300 ms, shorter than the detection delay and than stormack's
//     ack timeout (1 s here): nothing times out, nothing is declared failed,
//     and the worker resumes where it stopped — no duplicate, no loss, for
//     every system, none included.
//   - ack: 800 ms with a 500 ms ack timeout (stormack only): the spouts
//     replay the trees stuck behind the stopped worker while their first
//     copies are still queued there, so both are processed — duplicates,
//     and nothing lost.
//   - long: 1.5 s, longer than detection: the worker is declared failed at
//     3 s, its paused tasks are killed and the coordinator recovers as from
//     a crash; lineage, barrier and snapshot stay exactly-once, stormack
//     at-least-once, and none loses what the killed tasks held.
func TestPauseEndToEnd(t *testing.T) {
	const (
		short = "pause@2s-2.3s:op=count/0"
		ack   = "pause@2s-2.8s:op=count/0"
		long  = "pause@2s-3.5s:op=count/0"
	)
	tests := []struct {
		system, fault, ackTimeout string
		declared                  bool
		dups, lost                bool   // whether duplicates / losses are expected
		recovery                  string // the coordinator's recovery event, when declared
	}{
		{"none", short, "", false, false, false, ""},
		{"stormack", short, "1s", false, false, false, ""},
		{"lineage", short, "", false, false, false, ""},
		{"barrier", short, "", false, false, false, ""},
		{"snapshot", short, "", false, false, false, ""},
		{"stormack", ack, "500ms", false, true, false, ""},
		{"none", long, "", true, false, true, ""},
		{"stormack", long, "1s", true, true, false, ""},
		{"lineage", long, "", true, false, false, "recovery_start"},
		{"barrier", long, "", true, false, false, "failure_detected"},
		{"snapshot", long, "", true, false, false, "failure_detected"},
	}
	for _, tc := range tests {
		t.Run(tc.system+"/"+tc.fault, func(t *testing.T) {
			t.Parallel()
			cfg := DefaultConfig()
			cfg.System = tc.system
			cfg.Duration = 5 * engine.Second
			cfg.Rate = 10000
			cfg.Faults = []string{tc.fault}
			if tc.ackTimeout != "" {
				cfg.SystemOpts = map[string]string{"ack-timeout": tc.ackTimeout}
			}
			out, err := Execute(cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := out.Result
			t.Logf("dup=%d lost=%d verdict=%s held=%v exit=%d %v", r.Duplicates, r.Lost, r.Verdict, r.ClaimHeld, r.ExitCode, r.Problems)
			if !r.ClaimHeld || r.ExitCode != 0 {
				t.Fatalf("claim held %v, exit %d: %v", r.ClaimHeld, r.ExitCode, r.Problems)
			}
			if (r.Duplicates > 0) != tc.dups || (r.Lost > 0) != tc.lost {
				t.Fatalf("duplicates %d, lost %d; want duplicates: %v, losses: %v", r.Duplicates, r.Lost, tc.dups, tc.lost)
			}
			seen := map[string]int{}
			for _, e := range out.Events {
				seen[e.Kind]++
			}
			if seen["worker_pause"] != 1 || seen["worker_resume"] != 1 {
				t.Fatalf("want one worker_pause and one worker_resume event, got %d and %d", seen["worker_pause"], seen["worker_resume"])
			}
			if got := seen["worker_declared_failed"] == 1; got != tc.declared {
				t.Fatalf("worker declared failed: %v, want %v", got, tc.declared)
			}
			if tc.recovery != "" && seen[tc.recovery] == 0 {
				t.Fatalf("the coordinator recorded no %s after the worker was declared failed", tc.recovery)
			}
			// Recovery phases count from the pause's start: detected after
			// detect-delay (1 s), the worker back when the pause ends (1.5 s).
			if tc.recovery != "" {
				ph := r.Recoveries[0].Phases
				if ph == nil || ph.DetectedS == nil || *ph.DetectedS != 1 || ph.WorkerUpS == nil || *ph.WorkerUpS != 1.5 {
					t.Fatalf("phases %+v, want detected at 1s and the worker up at 1.5s", ph)
				}
			}
		})
	}
}
