package stormack_test

import (
	"testing"

	"ftbench/engine"
	"ftbench/harness"
	"ftbench/systems/stormack"
)

// run executes a short stormack run (5 s of input at a modest rate, so the
// race-enabled tests stay fast) and fails the test on an internal error.
func run(t *testing.T, workload string, rate float64, opts map[string]string, faults ...string) *harness.Result {
	t.Helper()
	cfg := harness.DefaultConfig()
	cfg.System = "stormack"
	cfg.Workload = workload
	cfg.Duration = 5 * engine.Second
	cfg.Rate = rate
	cfg.Faults = faults
	cfg.SystemOpts = opts
	out, err := harness.Execute(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := out.Result
	t.Logf("%s %v: dup=%d lost=%d wrong=%d verdict=%s held=%v recovery=%v exit=%d problems=%v",
		workload, faults, r.Duplicates, r.Lost, r.WrongKeys, r.Verdict, r.ClaimHeld, fmtRec(r.RecoveryTimeS), r.ExitCode, r.Problems)
	t.Logf("system_metrics: %v", r.SystemMetrics)
	return r
}

func fmtRec(p *float64) any {
	if p == nil {
		return "never"
	}
	return *p
}

func metric(t *testing.T, r *harness.Result, name string) int64 {
	t.Helper()
	v, ok := r.SystemMetrics[name].(int64)
	if !ok {
		t.Fatalf("system_metrics has no int64 %q: %v", name, r.SystemMetrics)
	}
	return v
}

// A short ack timeout keeps the runs short: trees lost in a crash are only
// replayed once it expires (Storm's default, 30 s, works the same way; the
// harness then drains 30 s longer, see DrainExtra).
var shortTimeout = map[string]string{"ack-timeout": "1s"}

func TestNoFaultGrepIsExact(t *testing.T) {
	t.Parallel()
	r := run(t, "grep", 20000, nil)
	if r.Duplicates != 0 || r.Lost != 0 || !r.ClaimHeld || r.ExitCode != 0 {
		t.Fatalf("no faults: dup=%d lost=%d held=%v exit=%d", r.Duplicates, r.Lost, r.ClaimHeld, r.ExitCode)
	}
	if r.ThroughputRPS == nil || *r.ThroughputRPS < 0.95*r.Config.RateRPS {
		t.Fatalf("throughput %s below the offered %.0f", harness.FormatRPS(r.ThroughputRPS, "null"), r.Config.RateRPS)
	}
	if metric(t, r, "trees_completed") != r.AppendedRecords || metric(t, r, "ack_messages") == 0 {
		t.Fatalf("every record is one completed tree; ack traffic must be counted")
	}
	if metric(t, r, "trees_failed_timeout") != 0 || metric(t, r, "acker_pending_trees_peak") == 0 {
		t.Fatalf("unexpected timeouts or no acker state recorded")
	}
}

// Acceptance: crash on wordcount => lost 0, duplicates > 0, at-least-once,
// claim held, a recovery time.
func TestCrashWordcountAtLeastOnce(t *testing.T) {
	t.Parallel()
	r := run(t, "wordcount", 10000, shortTimeout, "crash")
	if r.Lost != 0 || r.Duplicates == 0 || r.Verdict != "at-least-once" || !r.ClaimHeld {
		t.Fatalf("crash: lost=%d dup=%d verdict=%s held=%v", r.Lost, r.Duplicates, r.Verdict, r.ClaimHeld)
	}
	if r.RecoveryTimeS == nil || *r.RecoveryTimeS <= 0 || r.ExitCode != 0 {
		t.Fatalf("want a recovery time and exit 0, got %v exit %d %v", fmtRec(r.RecoveryTimeS), r.ExitCode, r.Problems)
	}
	// Worker 0 held source/0, split/0, count/0 and acker/0: the spout
	// resumed from its stored offset and lost trees timed out.
	if metric(t, r, "spout_restarts") != 1 || metric(t, r, "trees_failed_timeout") == 0 ||
		metric(t, r, "tuples_replayed") != metric(t, r, "trees_failed_timeout") {
		t.Fatalf("want a spout restart and timed-out trees replayed")
	}
}

// Acceptance: XOR checksums do not care about arrival order, so non-FIFO
// channels everywhere lose nothing, with and without a crash.
func TestReorderAllEdges(t *testing.T) {
	t.Parallel()
	for _, faults := range [][]string{
		{"reorder@1s-4s:edge=all,p=0.5"},
		{"reorder@1s-4s:edge=all,p=0.5", "crash"},
	} {
		r := run(t, "wordcount", 10000, shortTimeout, faults...)
		if r.Lost != 0 || !r.ClaimHeld || r.ExitCode != 0 {
			t.Fatalf("%v: lost=%d held=%v exit=%d %v", faults, r.Lost, r.ClaimHeld, r.ExitCode, r.Problems)
		}
		if len(faults) == 1 && (r.Duplicates != 0 || metric(t, r, "trees_failed_timeout") != 0) {
			t.Fatalf("reordering alone must not fail trees: dup=%d", r.Duplicates)
		}
	}
}

// Acceptance: a straggler whose backlog delays trees longer than the ack
// timeout makes the spouts replay trees that were only slow: spurious
// replays and duplicates without any crash.
func TestSlowWithShortTimeoutReplaysSpuriously(t *testing.T) {
	t.Parallel()
	r := run(t, "wordcount", 10000, map[string]string{"ack-timeout": "300ms"}, "slow@1.5s-3s:op=count/0,factor=40")
	if metric(t, r, "spurious_replays") == 0 || r.Duplicates == 0 || r.Lost != 0 || !r.ClaimHeld {
		t.Fatalf("slow: spurious=%d dup=%d lost=%d held=%v", metric(t, r, "spurious_replays"), r.Duplicates, r.Lost, r.ClaimHeld)
	}
	// The same straggler with Storm's default timeout: no replays at all.
	r = run(t, "wordcount", 10000, nil, "slow@1.5s-3s:op=count/0,factor=40")
	if metric(t, r, "trees_failed_timeout") != 0 || r.Duplicates != 0 || r.Lost != 0 {
		t.Fatalf("slow, 30s timeout: timeouts=%d dup=%d lost=%d", metric(t, r, "trees_failed_timeout"), r.Duplicates, r.Lost)
	}
}

// The explicit fail path end to end: a sink that fails some writes fails
// their trees at once; the spout replays them and nothing is lost.
func TestExplicitFailReplays(t *testing.T) {
	t.Parallel()
	cfg := harness.DefaultConfig()
	cfg.System = stormack.FailTestSystem
	cfg.Duration = 3 * engine.Second
	cfg.Rate = 10000
	out, err := harness.Execute(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := out.Result
	failed := metric(t, r, "trees_failed_explicit")
	if failed == 0 || metric(t, r, "trees_failed_timeout") != 0 || metric(t, r, "tuples_replayed") < failed {
		t.Fatalf("explicit fails: %v", r.SystemMetrics)
	}
	if r.Lost != 0 || !r.ClaimHeld || !r.Drained {
		t.Fatalf("lost=%d held=%v drained=%v", r.Lost, r.ClaimHeld, r.Drained)
	}
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	a := run(t, "wordcount", 5000, shortTimeout, "crash", "reorder@1s-4s:edge=all,p=0.3")
	b := run(t, "wordcount", 5000, shortTimeout, "crash", "reorder@1s-4s:edge=all,p=0.3")
	a.Host, b.Host = harness.Host{}, harness.Host{}
	ja, _ := harness.MarshalResult(a)
	jb, _ := harness.MarshalResult(b)
	if a.Duplicates == 0 || string(ja) != string(jb) {
		t.Fatalf("same seed, different runs: dup %d/%d events %d/%d", a.Duplicates, b.Duplicates, a.SimEvents, b.SimEvents)
	}
}

var acksOff = map[string]string{"ackers": "0"}

// Acking off (--ackers 0): no trees, no ack traffic, and with no fault
// every record arrives exactly once.
func TestAcksOffNoFaultIsExact(t *testing.T) {
	t.Parallel()
	r := run(t, "grep", 20000, acksOff)
	if r.ClaimedGuarantee != "at-most-once" || r.Duplicates != 0 || r.Lost != 0 || !r.ClaimHeld || r.ExitCode != 0 {
		t.Fatalf("acks off, no faults: claimed %s dup=%d lost=%d held=%v exit=%d", r.ClaimedGuarantee, r.Duplicates, r.Lost, r.ClaimHeld, r.ExitCode)
	}
	if r.ThroughputRPS == nil || *r.ThroughputRPS < 0.95*r.Config.RateRPS {
		t.Fatalf("throughput %s below the offered %.0f", harness.FormatRPS(r.ThroughputRPS, "null"), r.Config.RateRPS)
	}
	if metric(t, r, "ack_messages") != 0 || metric(t, r, "trees_completed") != 0 || metric(t, r, "offset_commits") == 0 {
		t.Fatalf("acking off must send no ack stream and commit offsets: %v", r.SystemMetrics)
	}
}

// Acceptance: with acking off a crash loses records (in flight, and the
// committed batch not yet emitted) but duplicates none, because every
// spout commits a batch's offsets before emitting it: at most once, and
// the external aggregate still only grows.
func TestAcksOffCrashAtMostOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		workload string
		faults   []string
	}{
		{"wordcount", []string{"crash"}},
		{"grep", []string{"crash@2s:worker=1"}},
		{"wordcount", []string{"crash@1.5s:worker=2,restart=100ms", "crash@3s:worker=0", "reorder@1s-4s:edge=all,p=0.3"}},
	} {
		r := run(t, tc.workload, 10000, acksOff, tc.faults...)
		if r.Duplicates != 0 || r.Lost == 0 || r.Verdict != "at-most-once" || !r.ClaimHeld || r.ExitCode != 0 {
			t.Fatalf("%s %v: dup=%d lost=%d verdict=%s held=%v exit=%d %v", tc.workload, tc.faults,
				r.Duplicates, r.Lost, r.Verdict, r.ClaimHeld, r.ExitCode, r.Problems)
		}
		if r.ClaimedReader != "monotonic" || r.ReaderRegressions != 0 {
			t.Fatalf("%s: reader %s, %d regressions", tc.workload, r.ClaimedReader, r.ReaderRegressions)
		}
		if metric(t, r, "spout_restarts") == 0 || metric(t, r, "tuples_replayed") != 0 || metric(t, r, "ack_messages") != 0 {
			t.Fatalf("%s: want a spout resumed from its committed offset and nothing replayed: %v", tc.workload, r.SystemMetrics)
		}
	}
}

// The same crash with a spout that commits periodically instead re-emits,
// after the restart, what it had sent since its last commit: committing
// each batch before emitting it is what keeps the claim.
func TestAcksOffPeriodicCommitDuplicates(t *testing.T) {
	t.Parallel()
	cfg := harness.DefaultConfig()
	cfg.System = stormack.PeriodicCommitTestSystem
	cfg.Workload = "wordcount"
	cfg.Duration = 5 * engine.Second
	cfg.Rate = 10000
	cfg.Faults = []string{"crash"}
	cfg.SystemOpts = acksOff
	out, err := harness.Execute(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := out.Result
	t.Logf("periodic commits: dup=%d lost=%d held=%v exit=%d", r.Duplicates, r.Lost, r.ClaimHeld, r.ExitCode)
	if r.Duplicates == 0 || r.ClaimHeld || r.ExitCode != 3 {
		t.Fatalf("periodic commits: dup=%d held=%v exit=%d, want duplicates and a broken claim", r.Duplicates, r.ClaimHeld, r.ExitCode)
	}
}

// Storm's nimbus is not on the data path: its loss stops no worker, so a
// master crash changes nothing — no tree times out, nothing is replayed,
// and the run delivers every effect once (stormack runs no process on the
// master node). Compared with the same run without the fault, the commits
// are identical.
func TestMasterCrashDoesNotDisturbTheTopology(t *testing.T) {
	t.Parallel()
	base := run(t, "wordcount", 20000, shortTimeout)
	r := run(t, "wordcount", 20000, shortTimeout, "crash@2s:master")
	if r.Duplicates != 0 || r.Lost != 0 || r.WrongKeys != 0 || !r.ClaimHeld || r.ExitCode != 0 {
		t.Fatalf("master crash: dup=%d lost=%d wrong=%d held=%v exit=%d", r.Duplicates, r.Lost, r.WrongKeys, r.ClaimHeld, r.ExitCode)
	}
	if n, f := metric(t, r, "tuples_replayed"), metric(t, r, "trees_failed_timeout"); n != 0 || f != 0 {
		t.Errorf("after a master crash %d tuples replayed, %d trees timed out", n, f)
	}
	if r.RecoveryTimeS == nil || *r.RecoveryTimeS != 0 {
		t.Errorf("recovery %v, want 0: output staleness never moved", fmtRec(r.RecoveryTimeS))
	}
	if r.CommittedEffects != base.CommittedEffects || r.LatencyMS != base.LatencyMS {
		t.Errorf("committed %d effects, latency %+v; without the crash %d, %+v", r.CommittedEffects, r.LatencyMS, base.CommittedEffects, base.LatencyMS)
	}
	if c := r.Recoveries[0].Crashed; c == nil || c.Worker != engine.MasterNode || len(c.Processes) != 0 {
		t.Errorf("crashed = %+v, want the master node with no process", c)
	}
}
