package live_test

import (
	"strings"
	"testing"

	"ftbench/engine"
	"ftbench/harness"
	_ "ftbench/systems/barrier"
	_ "ftbench/systems/lineage"
	_ "ftbench/systems/none"
	_ "ftbench/systems/snapshot"
	_ "ftbench/systems/stormack"
)

// Every system end to end on the live runtime (engine/live), without and
// with a crash: short runs, --work none, short timeouts and delays, and the
// race detector in CI. They assert safety — the claim held, and exactly-once
// systems with no duplicate and no loss — never timing: a live run's timing
// belongs to the machine. Each run is mostly waiting on the wall clock, so
// they run in parallel and cost CI little CPU.
func TestLiveClaimsHold(t *testing.T) {
	if testing.Short() {
		t.Skip("live runs take wall-clock seconds")
	}
	systems := []struct {
		system, variant string
		opts            map[string]string
	}{
		{"none", "", nil},
		{"barrier", "aligned", map[string]string{"checkpoint-interval": "200ms"}},
		{"barrier", "unaligned", map[string]string{"checkpoint-interval": "200ms"}},
		{"stormack", "", map[string]string{"ack-timeout": "1s", "offset-commit-interval": "200ms"}},
		{"lineage", "", map[string]string{"batch-interval": "200ms"}},
		{"snapshot", "cl", map[string]string{"checkpoint-interval": "200ms"}},
	}
	for _, s := range systems {
		for _, fault := range []string{"", "crash"} {
			name := s.system + "/" + s.variant + "/" + fault
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				cfg := harness.DefaultConfig()
				cfg.Runtime, cfg.Work = harness.RuntimeLive, "none"
				cfg.System, cfg.Variant, cfg.SystemOpts = s.system, s.variant, s.opts
				cfg.Duration, cfg.Rate, cfg.Parallelism, cfg.Workers = 1500*engine.Millisecond, 2000, 2, 2
				cfg.CostOverride = []string{"detect-delay=100ms", "restart-delay=200ms", "task-restart=50ms"}
				cfg.StoreDir = t.TempDir()
				if fault != "" {
					cfg.Faults = []string{fault}
				}
				out, err := harness.Execute(cfg)
				if err != nil {
					t.Fatal(err)
				}
				r := out.Result
				if r.Runtime != harness.RuntimeLive || r.Work != "none" || !strings.Contains(r.Replay, "--runtime live --work none") {
					t.Errorf("run.json says runtime %q work %q, replay %q", r.Runtime, r.Work, r.Replay)
				}
				// Not undrained, and drained within the generous default
				// drain unless losses are allowed: otherwise pending effects
				// would not count as losses and the claim would hold
				// vacuously.
				if r.Undrained() || !r.ClaimHeld || r.ExitCode == harness.ExitSafety || r.Unexpected != 0 ||
					(r.ClaimedGuarantee != "at-most-once" && !r.Drained) {
					t.Errorf("drained=%v claim held=%v exit=%d dup=%d lost=%d wrong=%d unexpected=%d problems=%v\nreplay: %s",
						r.Drained, r.ClaimHeld, r.ExitCode, r.Duplicates, r.Lost, r.WrongKeys, r.Unexpected, r.Problems, r.Replay)
				}
				if r.ClaimedGuarantee == "exactly-once" && (r.Duplicates != 0 || r.Lost != 0 || r.WrongKeys != 0) {
					t.Errorf("exactly-once claimed: dup=%d lost=%d wrong=%d", r.Duplicates, r.Lost, r.WrongKeys)
				}
				if fault != "" && !hasEvent(out.Events, "worker_crash") {
					t.Errorf("no worker_crash event: the crash did not happen")
				}
			})
		}
	}
}

func hasEvent(events []engine.Event, kind string) bool {
	for _, e := range events {
		if e.Kind == kind {
			return true
		}
	}
	return false
}
