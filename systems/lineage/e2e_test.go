package lineage

import (
	"bytes"
	"fmt"
	"testing"

	"ftbench/engine"
	"ftbench/harness"
)

// heavy is the default cost model with every per-record CPU cost scaled by
// 100: the same load with a hundredth of the records, so runs are quick.
// Task overheads, network and storage keep their defaults.
var heavy = []string{"source-record=100us", "record-cpu=200us", "state-cpu=400us", "sink-cpu=200us", "scan-per-byte=500ns"}

func execute(t testing.TB, cfg harness.Config) *harness.Result {
	t.Helper()
	out, err := harness.Execute(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out.Result
}

func runConfig(workload, variant string, rate float64, dur engine.Time, faults ...string) harness.Config {
	cfg := harness.DefaultConfig()
	cfg.System, cfg.Variant, cfg.Workload = "lineage", variant, workload
	cfg.Rate, cfg.Duration, cfg.Faults = rate, dur, faults
	cfg.CostOverride = heavy
	cfg.SystemOpts = map[string]string{}
	cfg.WorkloadOpts = map[string]string{}
	return cfg
}

// A crash loses nothing and duplicates nothing: recomputed batches commit
// once. At the default-like load (λ≈0.75) the median latency is at least the
// batch interval: a record waits for its batch to be cut and computed.
func TestCrashExactlyOnce(t *testing.T) {
	for _, tc := range []struct {
		workload, variant string
		rate              float64
		faults            []string
		opts              map[string]string
		cost              []string
	}{
		{workload: "wordcount", variant: "parallel", rate: 1400, faults: []string{"crash"}},
		{workload: "wordcount", variant: "upstream", rate: 1000, faults: []string{"crash"}},
		{workload: "wordcount", variant: "parallel", rate: 1000, faults: []string{"crash@3s:worker=1", "crash@4.5s:worker=2,restart=100ms"}},
		{workload: "bank", variant: "parallel", rate: 1000, faults: []string{"crash"}},
		{workload: "grep", variant: "parallel", rate: 6000, faults: []string{"crash"}},
		// Regression: both workers restart before the failure is detected,
		// with pushes to the first in flight and speculation racing a
		// straggler; the driver must not wait for pushes that died.
		{workload: "bank", variant: "parallel", rate: 16000,
			faults: []string{"crash@2032ms:worker=3,restart=2ms", "crash@2116ms:worker=0,restart=673ms", "slow@1s-5s:op=debit/2,factor=5"},
			opts:   map[string]string{optShuffle: "8", optCkpt: "3", optSpeculate: "true"}, cost: []string{"detect-delay=716ms"}},
	} {
		t.Run(tc.workload+"/"+tc.variant, func(t *testing.T) {
			t.Parallel()
			cfg := runConfig(tc.workload, tc.variant, tc.rate, 10*engine.Second, tc.faults...)
			cfg.Drain = 30 * engine.Second
			if tc.cost != nil {
				cfg.CostOverride, cfg.Duration = tc.cost, 7*engine.Second
			}
			for k, v := range tc.opts {
				cfg.SystemOpts[k] = v
			}
			r := execute(t, cfg)
			if r.Duplicates != 0 || r.Lost != 0 || r.WrongKeys != 0 || r.Verdict != "exactly-once" || !r.ClaimHeld || r.ExitCode != 0 {
				t.Fatalf("dup=%d lost=%d wrong=%d verdict=%s held=%v exit=%d problems=%v\nreplay: %s",
					r.Duplicates, r.Lost, r.WrongKeys, r.Verdict, r.ClaimHeld, r.ExitCode, r.Problems, r.Replay)
			}
			t.Logf("p50 %.0f ms, recovery %v s, recomputed %v partitions, %v records, load %v", r.LatencyMS.P50,
				deref(r.RecoveryTimeS), r.SystemMetrics["partitions_recomputed"], r.SystemMetrics["records_recomputed"], r.SystemMetrics["executor_load"])
			if tc.workload == "wordcount" && r.SystemMetrics["partitions_recomputed"].(int64) == 0 {
				t.Errorf("nothing was recomputed after the crash")
			}
			if tc.variant == "parallel" && tc.rate == 1400 && r.LatencyMS.P50 < 1000 {
				t.Errorf("median latency %.0f ms is below the 1 s batch interval", r.LatencyMS.P50)
			}
		})
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}

// Same configuration and seed: the same run.json (apart from the host).
func TestDeterministic(t *testing.T) {
	cfg := runConfig("wordcount", "", 1000, 6*engine.Second, "crash@3s:worker=1", "slow@1s-4s:op=count/2,factor=4")
	cfg.SystemOpts[optSpeculate] = "true"
	enc := func() []byte {
		r := execute(t, cfg)
		r.Host = harness.Host{}
		b, err := harness.MarshalResult(r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if a, b := enc(), enc(); !bytes.Equal(a, b) {
		t.Fatal("two runs with the same seed differ")
	}
}

// A straggler (slow executor) stretches every batch; speculative copies of
// its tasks on idle executors bring the batch processing time back down.
func TestSpeculationMitigatesStraggler(t *testing.T) {
	run := func(speculate string) (p99 float64, copies int64) {
		cfg := runConfig("wordcount", "", 1000, 8*engine.Second, "slow@2s-6s:op=count/1,factor=8")
		cfg.SystemOpts[optSpeculate] = speculate
		r := execute(t, cfg)
		if r.Verdict != "exactly-once" || !r.ClaimHeld {
			t.Fatalf("speculation=%s: verdict %s", speculate, r.Verdict)
		}
		return r.SystemMetrics["processing_time_s"].(distStat).P99, r.SystemMetrics["speculative_tasks"].(int64)
	}
	slow, none := run("false")
	fast, copies := run("true")
	t.Logf("p99 batch processing: %.3f s without speculation, %.3f s with %d copies", slow, fast, copies)
	if none != 0 || copies == 0 {
		t.Fatalf("speculative tasks: %d without speculation, %d with", none, copies)
	}
	if fast >= 0.8*slow {
		t.Fatalf("p99 batch processing %.3f s with speculation, %.3f s without: want a clear cut", fast, slow)
	}
}

// Bad options are input errors naming the flag.
func TestBadOptions(t *testing.T) {
	for _, kv := range [][2]string{{optInterval, "0s"}, {optCkpt, "0"}, {optShuffle, "-1"}, {optOverhead, "x"}, {optSpeculate, "maybe"}} {
		cfg := runConfig("wordcount", "", 1000, engine.Second)
		cfg.SystemOpts[kv[0]] = kv[1]
		if _, err := harness.Execute(cfg); err == nil || !harness.IsInputError(err) {
			t.Errorf("--%s=%s: got %v, want an input error", kv[0], kv[1], err)
		}
	}
}

// A worker that never comes back (its restart lies beyond the run): Spark
// reschedules the lost executors' tasks on the other executors and
// recomputes their lost partitions there, so the job recovers exactly-once
// without it, with or without spare slots — an executor is pinned to its
// worker (nothing is re-placed), and its tasks need no slot of their own.
func TestWorkerNeverBackRecoversOnOtherExecutors(t *testing.T) {
	for _, slots := range []int{0, 6} {
		t.Run(fmt.Sprintf("slots=%d", slots), func(t *testing.T) {
			t.Parallel()
			cfg := runConfig("wordcount", "parallel", 1000, 8*engine.Second, "crash@3s:worker=1,restart=1h")
			cfg.Slots = slots
			out, err := harness.Execute(cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := out.Result
			if r.ExitCode != 0 || !r.Drained || r.Duplicates != 0 || r.Lost != 0 || r.WrongKeys != 0 || !r.ClaimHeld {
				t.Fatalf("exit=%d drained=%v dup=%d lost=%d wrong=%d problems=%v\nreplay: %s",
					r.ExitCode, r.Drained, r.Duplicates, r.Lost, r.WrongKeys, r.Problems, r.Replay)
			}
			for _, e := range out.Events {
				if e.Kind == "task_replaced" {
					t.Errorf("an executor was re-placed: %+v", e)
				}
				if e.Kind == "worker_up" {
					t.Errorf("worker came back: %+v", e)
				}
			}
			if r.RecoveryTimeS == nil {
				t.Errorf("no recovery time")
			}
		})
	}
}

// A partition cutting a worker off for longer than detection: the driver
// loses its executors and recomputes their partitions on the others, while
// the cut-off executors run on (they are pinned, so nothing is re-placed).
// Their late results reach the driver after the heal and are ignored: the
// driver accepts one attempt per task and drops the attempts of executors
// it lost, as Spark's OutputCommitCoordinator authorises one attempt per
// partition. Past the connection timeout their connections reset and they
// fail. The worker rejoins after the heal. Exactly-once throughout.
func TestPartitionExactlyOnce(t *testing.T) {
	// The first cut comes 20 ms after a batch's tasks were sent, so an
	// executor on the far side is running one; the second outlasts the
	// connection timeout, which drops what its executors send.
	for _, tc := range []struct {
		fault string
		stale bool
	}{{"partition@3.02s-5.5s:worker=1", true}, {"partition@2s-8s:workers=0,2,3|1", false}} {
		fault := tc.fault
		t.Run(fault, func(t *testing.T) {
			t.Parallel()
			cfg := runConfig("wordcount", "parallel", 1000, 10*engine.Second, fault)
			cfg.Slots = 8 // spare slots: executors are pinned all the same
			out, err := harness.Execute(cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := out.Result
			if r.ExitCode != 0 || r.Duplicates != 0 || r.Lost != 0 || r.WrongKeys != 0 || !r.ClaimHeld {
				t.Fatalf("exit=%d dup=%d lost=%d wrong=%d problems=%v\nreplay: %s",
					r.ExitCode, r.Duplicates, r.Lost, r.WrongKeys, r.Problems, r.Replay)
			}
			kinds := map[string]int{}
			for _, e := range out.Events {
				kinds[e.Kind]++
			}
			if kinds["worker_declared_failed"] != 1 || kinds["recovery_start"] == 0 || kinds["worker_up"] != 1 {
				t.Errorf("events %v: want the worker declared failed, recovered from and back", kinds)
			}
			if stale := r.Counters["lineage.stale_results"]; (stale > 0) != tc.stale {
				t.Errorf("%d stale results ignored, want some: %v", stale, tc.stale)
			}
		})
	}
}
