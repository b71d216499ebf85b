package harness

import (
	"testing"

	"ftbench/engine"
)

// Checkpoint-storage faults end to end. store-down fails every write in
// progress for 3 s (three checkpoint intervals, three batch intervals, three
// offset-commit intervals); store-slow makes it 20 times slower. Each system
// that takes a failed write into account keeps its claim: lineage writes
// again until the store takes it, snapshot declines the checkpoint (it is
// aborted; the job runs on the last completed one) and its sink's
// transactions are rewritten, stormack commits its offset at the next
// interval. barrier declines too, and with Flink's default of 0 tolerable
// failed checkpoints fails over at each failed one. A crash after the
// outage recovers from a checkpoint taken after it.
func TestStoreFaultsEndToEnd(t *testing.T) {
	const (
		down  = "store-down@1s-4s"
		slow  = "store-slow@1s-4s:factor=20"
		crash = "crash@4.5s:worker=1"
	)
	tests := []struct {
		system  string
		faults  []string
		exact   bool   // exactly-once expected
		event   string // an event the outage must cause
		failing bool   // writes must have failed
		ackers  string // stormack's --ackers ("0": acking off, the spout commits before emitting)
	}{
		{"none", []string{down}, false, "", false, ""},
		{"stormack", []string{down}, false, "", true, ""},
		{"stormack", []string{down}, false, "", true, "0"},
		{"lineage", []string{down}, true, "store_write_retry", true, ""},
		{"snapshot", []string{down}, true, "snapshot_declined", true, ""},
		{"lineage", []string{down, crash}, true, "store_write_retry", true, ""},
		{"snapshot", []string{down, crash}, true, "snapshot_declined", true, ""},
		{"barrier", []string{down}, true, "snapshot_declined", true, ""},
		{"barrier", []string{down, crash}, true, "snapshot_declined", true, ""},
		{"stormack", []string{slow}, false, "", false, ""},
		{"lineage", []string{slow}, true, "", false, ""},
		{"snapshot", []string{slow}, true, "", false, ""},
		{"barrier", []string{slow}, true, "", false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.system+tc.ackers+"/"+tc.faults[len(tc.faults)-1], func(t *testing.T) {
			t.Parallel()
			cfg := DefaultConfig()
			cfg.System = tc.system
			cfg.Duration = 5 * engine.Second
			cfg.Rate = 10000
			cfg.Faults = tc.faults
			if tc.system == "stormack" {
				cfg.SystemOpts = map[string]string{"ack-timeout": "1s"}
				if tc.ackers != "" {
					cfg.SystemOpts["ackers"] = tc.ackers
				}
			}
			out, err := Execute(cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := out.Result
			t.Logf("%v: dup=%d lost=%d verdict=%s exit=%d failed writes=%d %v", tc.faults, r.Duplicates, r.Lost, r.Verdict, r.ExitCode, r.Counters["store_writes_failed"], r.Problems)
			if !r.ClaimHeld || r.ExitCode != 0 {
				t.Fatalf("claim held %v, exit %d: %v", r.ClaimHeld, r.ExitCode, r.Problems)
			}
			if tc.exact && (r.Duplicates != 0 || r.Lost != 0) {
				t.Fatalf("duplicates %d, lost %d; want exactly-once", r.Duplicates, r.Lost)
			}
			if got := r.Counters["store_writes_failed"] > 0; got != tc.failing {
				t.Fatalf("store_writes_failed = %d, want failures: %v", r.Counters["store_writes_failed"], tc.failing)
			}
			if tc.event != "" {
				n := 0
				for _, e := range out.Events {
					if e.Kind == tc.event {
						n++
					}
				}
				if n == 0 {
					t.Fatalf("no %s event", tc.event)
				}
			}
		})
	}
}
