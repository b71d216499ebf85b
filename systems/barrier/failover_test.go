package barrier

import (
	"testing"

	"ftbench/harness"
)

// End-to-end runs for issue 16: the sync variant, region failover and the
// checkpoint start delay.

func TestSyncCrashExactlyOnce(t *testing.T) {
	for _, w := range []string{"wordcount", "grep", "bank"} {
		t.Run(w, func(t *testing.T) {
			t.Parallel()
			cfg := e2eConfig(Sync, "crash")
			cfg.Workload = w
			exactlyOnce(t, execute(t, cfg).Result)
		})
	}
}

func failoverRun(t *testing.T, workload, failover string, faults ...string) *harness.Result {
	t.Helper()
	cfg := e2eConfig(Aligned, faults...)
	cfg.Workload = workload
	cfg.SystemOpts["failover"] = failover
	return execute(t, cfg).Result
}

// Region vs full failover. On grep (forward chains: one region per
// partition) a crash restarts one pipeline instead of all four and replays
// only its partition; on wordcount (an all-to-all shuffle: one region) both
// strategies do the same run. Both stay exactly-once.
func TestRegionFailover(t *testing.T) {
	t.Parallel()
	for _, w := range []string{"grep", "wordcount"} {
		region := failoverRun(t, w, FailoverRegion, "crash")
		full := failoverRun(t, w, FailoverFull, "crash")
		exactlyOnce(t, region)
		exactlyOnce(t, full)
		rt, ft := metric[int64](t, region, "tasks_restarted"), metric[int64](t, full, "tasks_restarted")
		rr, fr := metric[int64](t, region, "records_replayed"), metric[int64](t, full, "records_replayed")
		t.Logf("%s: tasks restarted %d / %d, records replayed %d / %d, recovery %v / %v s, lag recovery %v / %v s (region / full)",
			w, rt, ft, rr, fr, *region.RecoveryTimeS, *full.RecoveryTimeS, *region.LagRecoveryTimeS, *full.LagRecoveryTimeS)
		switch w {
		case "grep":
			if rt != 1 || ft != 4 {
				t.Errorf("grep: tasks restarted region %d full %d, want 1 (the chained source→filter→sink of one partition) and 4", rt, ft)
			}
			if rr >= fr {
				t.Errorf("grep: records replayed region %d >= full %d", rr, fr)
			}
			if *region.LagRecoveryTimeS > *full.LagRecoveryTimeS || *region.RecoveryTimeS > *full.RecoveryTimeS {
				t.Errorf("grep: region recovers in %v s (lag %v s), slower than full's %v s (lag %v s)",
					*region.RecoveryTimeS, *region.LagRecoveryTimeS, *full.RecoveryTimeS, *full.LagRecoveryTimeS)
			}
		case "wordcount":
			if rt != ft || rr != fr || *region.RecoveryTimeS != *full.RecoveryTimeS || region.CommittedEffects != full.CommittedEffects {
				t.Errorf("wordcount: region and full differ: tasks %d/%d replayed %d/%d recovery %v/%v committed %d/%d",
					rt, ft, rr, fr, *region.RecoveryTimeS, *full.RecoveryTimeS, region.CommittedEffects, full.CommittedEffects)
			}
		}
	}
}

// A worker that hosts no task (parallelism 4 on 6 workers: workers 4 and
// 5 are empty) triggers no restart under either strategy.
func TestTasklessWorkerCrashRestartsNothing(t *testing.T) {
	t.Parallel()
	for _, f := range []string{FailoverRegion, FailoverFull} {
		cfg := e2eConfig(Aligned, "crash@3s:worker=5")
		cfg.Workload, cfg.Workers = "grep", 6
		cfg.SystemOpts["failover"] = f
		r := execute(t, cfg).Result
		if n := metric[int64](t, r, "restarts"); n != 0 || metric[int64](t, r, "records_replayed") != 0 {
			t.Errorf("%s: %d restarts, %d records replayed after a crash of an empty worker", f, n, metric[int64](t, r, "records_replayed"))
		}
		if r.Verdict != "exactly-once" || r.RecoveryTimeS == nil || *r.RecoveryTimeS != 0 {
			t.Errorf("%s: verdict %s, recovery %v", f, r.Verdict, r.RecoveryTimeS)
		}
	}
}

// Start delay under a straggling count/0 (chained with its sink, behind the
// keyBy): aligned barriers queue behind its
// backlog, so the delay grows with the slow factor; unaligned barriers
// overtake it and the delay stays small.
func TestStartDelayUnderStraggler(t *testing.T) {
	t.Parallel()
	maxDelay := func(variant, factor string) float64 {
		cfg := e2eConfig(variant, "slow@2s-5s:op=count/0,factor="+factor)
		return metric[map[string]float64](t, execute(t, cfg).Result, "checkpoint_start_delay_ms")["max"]
	}
	a1, a50, a200 := maxDelay(Aligned, "1"), maxDelay(Aligned, "50"), maxDelay(Aligned, "200")
	u200 := maxDelay(Unaligned, "200")
	if !(a1 < a50 && a50 < a200) {
		t.Errorf("aligned start delay max %v / %v / %v ms at slow factor 1 / 50 / 200: want growing", a1, a50, a200)
	}
	if u200 > 20 || u200*10 > a200 {
		t.Errorf("unaligned start delay max %v ms at factor 200 (aligned %v ms): want small", u200, a200)
	}
	t.Logf("start delay max: aligned %v / %v / %v ms at factor 1 / 50 / 200; unaligned %v ms at 200", a1, a50, a200, u200)
}
