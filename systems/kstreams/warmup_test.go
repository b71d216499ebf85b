package kstreams

import (
	"fmt"
	"strings"
	"testing"

	"ftbench/engine"
	"ftbench/harness"
)

// warmupRun crashes worker 1 at 5 s; it is back a second later, and its
// instance is the balanced target of partition 1 (and 5 with parallelism
// 8) of both sub-topologies. The run is long enough for probing
// rebalance at 60 s (Kafka's minimum interval), at a low rate to stay
// quick; acceptable.recovery.lag is 1000 records, so that the changelogs
// (some 3 000 offsets a task at the crash) are too long for an instance
// without state.
func warmupRun(t *testing.T, parallelism int, d engine.Time, opts map[string]string) (*harness.Result, []engine.Event) {
	t.Helper()
	opts["acceptable-recovery-lag"] = "1000"
	cfg := e2eConfig("wordcount", opts, "crash@5s:worker=1")
	cfg.Rate = 4000
	cfg.Parallelism = parallelism
	cfg.Duration = d
	out, err := harness.Execute(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out.Result, out.Events
}

// warmupSteps checks a run's events after the crash step by step: the
// returning instance (1) gets warm-ups of the stateful tasks whose target
// it is, placed by the first assignment after its return, at most
// max.warmup.replicas of them; none of those tasks runs there before its
// warm-up is promoted, and then it starts as a handover from that warm-up
// within acceptable.recovery.lag. It returns the warm-ups that first
// assignment placed, the probing rebalances, the tasks promoted, and the
// assignments' times.
func warmupSteps(t *testing.T, r *harness.Result, events []engine.Event, parallelism int) (firstWarm map[int64]bool, probes []engine.Time, promoted map[int64]engine.Time, assigned []engine.Time) {
	t.Helper()
	threads := int(metric[int64](t, r, "threads_per_instance"))
	targets := targetsOf(parallelism)
	firstWarm, promoted = map[int64]bool{}, map[int64]engine.Time{}
	var warmedAt engine.Time
	for _, e := range events {
		if e.Time < 5*engine.Second {
			continue
		}
		switch e.Kind {
		case evAssigned:
			assigned = append(assigned, e.Time)
		case evWarmup:
			if !targets[e.ID] || int(e.Value)/threads != 1 {
				t.Errorf("%v: warm-up of task %d on thread %d: want a task of instance 1 on one of its threads", e.Time, e.ID, e.Value)
			}
			if warmedAt == 0 {
				warmedAt = e.Time
			}
			if e.Time == warmedAt {
				firstWarm[e.ID] = true
			}
		case evProbing:
			probes = append(probes, e.Time)
		case evPromoted:
			promoted[e.ID] = e.Time
		case evHandover, evRestored:
			if !strings.HasPrefix(e.Proc, "thread/1.") || !targets[e.ID] {
				continue
			}
			if _, ok := promoted[e.ID]; !ok || e.Kind != evHandover || e.Note != "from=standby" || e.Bytes > 1000 {
				t.Errorf("%v: %s of task %d on %s (%s, %d records): want a handover from its warm-up after its promotion, within acceptable.recovery.lag",
					e.Time, e.Kind, e.ID, e.Proc, e.Note, e.Bytes)
			}
		}
	}
	return firstWarm, probes, promoted, assigned
}

// targetsOf is the stateful tasks whose balanced target is instance 1 of
// 4: sub-topology 1's partitions p with p mod 4 = 1.
func targetsOf(parallelism int) map[int64]bool {
	targets := map[int64]bool{}
	for part := 1; part < parallelism; part += 4 {
		targets[int64(parallelism+part)] = true
	}
	return targets
}

// The returning instance first gets a warm-up and no stateful active
// task (its changelog is longer than acceptable.recovery.lag, so the
// caught-up owner keeps it); a probing rebalance comes the interval after
// the last assignment, and hands the caught-up warm-up its task, which
// restores only its lag (a handover, which the recovery phases do not
// count).
func TestWarmupsThenProbingHandover(t *testing.T) {
	r, events := warmupRun(t, 4, 70*engine.Second, map[string]string{"probing-rebalance-interval": "60s"})
	exactlyOnce(t, r)
	firstWarm, probes, promoted, assigned := warmupSteps(t, r, events, 4)
	if len(firstWarm) != 1 {
		t.Fatalf("warm-ups %v at the return: want the one task of instance 1", firstWarm)
	}
	if len(probes) != 1 {
		t.Fatalf("probing rebalances at %v, want one", probes)
	}
	var last engine.Time // the last assignment before the probe
	for _, a := range assigned {
		if a < probes[0] {
			last = a
		}
	}
	if d := probes[0] - last; d < 60*engine.Second || d > 60*engine.Second+engine.Millisecond {
		t.Errorf("probing rebalance %v after the last assignment, want the 60 s interval", d)
	}
	for task := range targetsOf(4) {
		if at, ok := promoted[task]; !ok || at < probes[0] {
			t.Errorf("task %d promoted at %v (ok %v), want at the probing rebalance %v", task, at, ok, probes[0])
		}
	}
	if n := metric[int64](t, r, "probing_rebalances"); n != 1 {
		t.Errorf("probing_rebalances = %d, want 1", n)
	}
	if ph := r.Recoveries[0].Phases.RestoredS; ph == nil || *ph > 5 {
		t.Errorf("restored phase %v: the probing handover must not count as the crash's restore", ph)
	}
}

// max.warmup.replicas caps the warm-ups across the group: with two tasks
// whose target is the returning instance, a cap of 1 places one warm-up at
// its return, a cap of 2 both. Every task still starts there only through
// its warm-up (a caught-up warm-up is promoted at any later rebalance,
// the follow-ups of the stateless tasks' handovers included).
func TestMaxWarmupReplicasCaps(t *testing.T) {
	for _, cap := range []int{1, 2} {
		t.Run(fmt.Sprint(cap), func(t *testing.T) {
			r, events := warmupRun(t, 8, 10*engine.Second, map[string]string{"max-warmup-replicas": fmt.Sprint(cap)})
			exactlyOnce(t, r)
			firstWarm, _, _, _ := warmupSteps(t, r, events, 8)
			if len(firstWarm) != cap {
				t.Errorf("warm-ups %v at the return, want %d (max.warmup.replicas)", firstWarm, cap)
			}
		})
	}
}

// Without a returning instance's probing interval in the run (Kafka's 10
// minute default), the warm-ups stay warm-ups: no task of the returning
// instance runs there, and no probing rebalance fires.
func TestNoProbingWithinTheDefaultInterval(t *testing.T) {
	r, events := warmupRun(t, 4, 70*engine.Second, map[string]string{})
	exactlyOnce(t, r)
	if n := metric[int64](t, r, "warmup_replicas_assigned"); n == 0 {
		t.Errorf("no warm-up assigned to the returning instance")
	}
	for _, e := range events {
		if e.Kind == evProbing || e.Kind == evPromoted {
			t.Errorf("%v: %s %d with a 10 min probing interval in a 70 s run", e.Time, e.Kind, e.ID)
		}
	}
	if got := fmt.Sprint(r.SystemMetrics["probing_rebalance_interval_ms"]); got != "600000" {
		t.Errorf("probing_rebalance_interval_ms = %s, want Kafka's default 600000", got)
	}
}
