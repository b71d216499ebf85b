package harness

import (
	"strings"
	"testing"

	"ftbench/engine"
)

// Every master-crash cell of docs/faults.md ("Master crash") (crash@T:master): the claim holds, the
// recovery time is measured, the crash names the master node and what it
// took down, and the systems with a coordinator or driver hand over to a
// new leader that restores the job (leader_takeover); none and stormack run
// nothing on the master node, so nothing happens to them: no effect is late
// (recovery 0 s).
func TestMasterCrashEndToEnd(t *testing.T) {
	tests := []struct {
		system   string
		procs    []string // what the crash takes down
		takeover bool     // a new leader restores the job
		exact    bool     // exactly-once expected
	}{
		{"none", nil, false, false},
		{"stormack", nil, false, true},
		{"lineage", []string{"driver", "executor/0", "executor/1", "executor/2", "executor/3", "executor/4", "executor/5", "executor/6", "executor/7",
			"executor/8", "executor/9", "executor/10", "executor/11", "executor/12", "executor/13", "executor/14", "executor/15"}, true, true},
		{"barrier", []string{"coordinator"}, true, true},
		{"snapshot", []string{"coordinator"}, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.system, func(t *testing.T) {
			t.Parallel()
			cfg := DefaultConfig()
			cfg.System = tc.system
			cfg.Duration = 5 * engine.Second
			cfg.Rate = 10000
			cfg.Faults = []string{"crash@2500ms:master"}
			if tc.system == "stormack" {
				cfg.SystemOpts = map[string]string{"ack-timeout": "1s"}
			}
			out, err := Execute(cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := out.Result
			t.Logf("dup=%d lost=%d verdict=%s exit=%d %v", r.Duplicates, r.Lost, r.Verdict, r.ExitCode, r.Problems)
			if !r.ClaimHeld || r.ExitCode != 0 || r.RecoveryTimeS == nil {
				t.Fatalf("claim held %v, exit %d, recovery %v: %v", r.ClaimHeld, r.ExitCode, r.RecoveryTimeS, r.Problems)
			}
			if tc.exact && (r.Duplicates != 0 || r.Lost != 0 || r.WrongKeys != 0) {
				t.Fatalf("dup %d lost %d wrong %d; want exactly-once", r.Duplicates, r.Lost, r.WrongKeys)
			}
			c := r.Recoveries[0].Crashed
			if c == nil || c.Worker != engine.MasterNode || len(c.Processes) != len(tc.procs) {
				t.Fatalf("crashed = %+v, want the master node with %v", c, tc.procs)
			}
			for i, p := range tc.procs {
				if c.Processes[i] != p {
					t.Errorf("crashed process %d = %s, want %s", i, c.Processes[i], p)
				}
			}
			takeovers := 0
			for _, e := range out.Events {
				if e.Kind == "leader_takeover" {
					takeovers++
				}
			}
			if want := map[bool]int{true: 1}[tc.takeover]; takeovers != want {
				t.Errorf("%d leader takeovers, want %d", takeovers, want)
			}
			if !tc.takeover && *r.RecoveryTimeS != 0 {
				t.Errorf("recovery %gs, want 0: nothing runs on the master node", *r.RecoveryTimeS)
			}
			if r.DetectionDelayS != nil {
				t.Errorf("detection delay %g reported for a master crash, which nobody detects", *r.DetectionDelayS)
			}
		})
	}
}

// The live runtime has no master crash yet: refused before the run.
func TestLiveRefusesMasterCrash(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Runtime = RuntimeLive
	cfg.Faults = []string{"crash@1s:master"}
	_, err := Execute(cfg)
	if !IsInputError(err) || !strings.Contains(err.Error(), "a master crash is not implemented by the live runtime") {
		t.Errorf("err = %v, want an input error naming the master crash", err)
	}
}
