package barrier

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"ftbench/engine"
	"ftbench/harness"
)

// End-to-end runs through the harness.
// They use 10k records/s and 6-8 s of input so that `go test -race` stays
// quick; full-size runs are the default `bench run` configuration.

const e2eRate = 10000

func e2eConfig(variant string, faults ...string) harness.Config {
	cfg := harness.DefaultConfig()
	cfg.System = "barrier"
	cfg.Variant = variant
	cfg.Rate = e2eRate
	cfg.Duration = 6 * engine.Second
	cfg.Faults = faults
	// Keep every completed checkpoint, so that the post-run check covers
	// them all (the default keeps one, as Flink).
	cfg.SystemOpts = map[string]string{"checkpoints-retained": "64"}
	return cfg
}

func execute(t *testing.T, cfg harness.Config) *harness.Outcome {
	t.Helper()
	out, err := harness.Execute(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func metric[T any](t *testing.T, r *harness.Result, key string) T {
	t.Helper()
	v, ok := r.SystemMetrics[key].(T)
	if !ok {
		t.Fatalf("system_metrics[%q] = %#v, want a %T", key, r.SystemMetrics[key], v)
	}
	return v
}

// consistent asserts that every completed checkpoint was checked and found
// consistent.
func consistent(t *testing.T, r *harness.Result) {
	t.Helper()
	done := metric[int64](t, r, "checkpoints_completed")
	if ok := metric[int64](t, r, "snapshots_consistent"); ok != done || done == 0 {
		t.Errorf("%d of %d completed checkpoints consistent; problems %v", ok, done, r.SystemMetrics["snapshot_problems"])
	}
	if v := metric[int64](t, r, "safety_violations"); v != 0 {
		t.Errorf("safety_violations = %d", v)
	}
}

// exactlyOnce asserts the crash acceptance line: no duplicate, no loss, no
// wrong key, the claim held, every checkpoint consistent, a recovery time.
func exactlyOnce(t *testing.T, r *harness.Result) {
	t.Helper()
	if r.Duplicates != 0 || r.Lost != 0 || r.WrongKeys != 0 || r.Verdict != "exactly-once" || !r.ClaimHeld || r.ExitCode != 0 {
		t.Errorf("dup=%d lost=%d wrong=%d verdict=%s held=%v exit=%d problems=%v\nreplay: %s",
			r.Duplicates, r.Lost, r.WrongKeys, r.Verdict, r.ClaimHeld, r.ExitCode, r.Problems, r.Replay)
	}
	if r.RecoveryTimeS == nil {
		t.Errorf("no recovery time")
	}
	if metric[int64](t, r, "restarts") < 1 {
		t.Errorf("no restart after a crash")
	}
	consistent(t, r)
}

func TestCrashExactlyOnce(t *testing.T) {
	for _, v := range []string{Aligned, Unaligned, AlignedTimeout} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			r := execute(t, e2eConfig(v, "crash")).Result
			exactlyOnce(t, r)
			if v == Unaligned && metric[int64](t, r, "channel_state_records_restored") == 0 {
				t.Errorf("unaligned recovery restored no channel state")
			}
		})
	}
}

// A crash of each operator's worker in turn (instance i runs on worker i).
func TestCrashEachOperator(t *testing.T) {
	for _, v := range []string{Aligned, Unaligned} {
		for _, op := range []string{"source/0", "split/1", "count/2", "sink/3"} {
			t.Run(v+"/"+op, func(t *testing.T) {
				t.Parallel()
				exactlyOnce(t, execute(t, e2eConfig(v, "crash@2.5s:op="+op)).Result)
			})
		}
	}
}

// Two crashes in one run: the second hits while the job is still catching
// up from the first.
func TestTwoCrashes(t *testing.T) {
	for _, v := range []string{Aligned, Unaligned} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			cfg := e2eConfig(v, "crash@1.5s:op=count/0", "crash@3.2s:op=sink/1,restart=300ms")
			cfg.Duration = 7 * engine.Second
			r := execute(t, cfg).Result
			exactlyOnce(t, r)
			if n := metric[int64](t, r, "global_restarts"); n != 2 {
				t.Errorf("%d global restarts, want 2", n)
			}
		})
	}
}

// slowConfig builds a backlog at a straggling split/0, an input of every
// count instance, so barriers from it reach the counts late. A straggler
// between two shuffles needs split in a task of its own: chained, split
// runs in its source's thread, and a slow source lags in its log instead
// of queueing records ahead of its barriers (TestStartDelayUnderStraggler
// slows the chained count instead).
func slowConfig(variant string) harness.Config {
	cfg := e2eConfig(variant, "slow@2s-6s:op=split/0,factor=200")
	cfg.SystemOpts["chaining"] = "false"
	cfg.Duration = 8 * engine.Second
	return cfg
}

// slowAligned is the aligned backlog run, shared by two tests.
var slowAligned = sync.OnceValues(func() (*harness.Outcome, error) {
	return harness.Execute(slowConfig(Aligned))
})

func slowAlignedRun(t *testing.T) *harness.Outcome {
	t.Helper()
	out, err := slowAligned()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A crash during an alignment: find an alignment of count/1 under a
// backlog, then crash its worker in the middle of it. The checkpoint is
// discarded and recovery uses the previous one.
func TestCrashDuringAlignment(t *testing.T) {
	t.Parallel()
	base := slowAlignedRun(t)
	var id int64
	var at engine.Time
	for _, e := range base.Events {
		if e.Kind == "alignment" && e.Proc == "count/1" && e.Value > int64(50*engine.Millisecond) {
			id, at = e.ID, (e.Time-engine.Time(e.Value/2))/engine.Millisecond*engine.Millisecond
			break
		}
	}
	if id == 0 {
		t.Fatal("no long alignment at count/1 in the backlog run")
	}
	cfg := slowConfig(Aligned)
	cfg.Faults = append(cfg.Faults, fmt.Sprintf("crash@%dms:op=count/1", at/engine.Millisecond))
	out := execute(t, cfg)
	exactlyOnce(t, out.Result)
	aborted := false
	for _, e := range out.Events {
		if e.ID == id && e.Kind == "checkpoint_aborted" && e.Note == "failure" {
			aborted = true
		}
		if e.ID == id && e.Kind == "checkpoint_completed" {
			t.Errorf("checkpoint %d completed although count/1 crashed while aligning it", id)
		}
	}
	if !aborted {
		t.Errorf("checkpoint %d (aligning at count/1 at %v) was not aborted by the failure", id, at)
	}
}

// The plain sink: state stays exact, output does not (lecture 21.7).
func TestPlainSinkDuplicates(t *testing.T) {
	t.Parallel()
	cfg := e2eConfig(Aligned, "crash")
	cfg.SystemOpts["sink"] = SinkPlain
	r := execute(t, cfg).Result
	if r.Duplicates == 0 || r.Lost != 0 || r.WrongKeys != 0 {
		t.Errorf("dup=%d lost=%d wrong=%d: want duplicates, no loss, exact final state", r.Duplicates, r.Lost, r.WrongKeys)
	}
	if r.ClaimedGuarantee != "at-least-once" || r.Verdict != "at-least-once" || !r.ClaimHeld || r.ExitCode != 0 {
		t.Errorf("claim %s verdict %s held %v exit %d", r.ClaimedGuarantee, r.Verdict, r.ClaimHeld, r.ExitCode)
	}
	consistent(t, r)
}

// The trade-off of lecture 21.2.7/21.5: under a growing backlog, aligned
// alignment time and checkpoint duration grow checkpoint by checkpoint;
// unaligned alignment stays near zero and its channel state grows instead.
func TestSlowBacklogTradeoff(t *testing.T) {
	t.Parallel()
	inWindow := func(r *harness.Result) []checkpointRow {
		var rows []checkpointRow
		for _, c := range metric[[]checkpointRow](t, r, "checkpoints") {
			if c.TriggeredS >= 3 && c.TriggeredS < 6 && c.Status == "completed" {
				rows = append(rows, c)
			}
		}
		if len(rows) < 3 {
			t.Fatalf("only %d checkpoints completed in the slow window: %+v", len(rows), rows)
		}
		return rows
	}
	al := slowAlignedRun(t).Result
	un := execute(t, slowConfig(Unaligned)).Result
	for _, r := range []*harness.Result{al, un} {
		consistent(t, r)
		if r.Verdict != "exactly-once" {
			t.Errorf("%s: verdict %s", r.Variant, r.Verdict)
		}
	}
	a, u := inWindow(al), inWindow(un)
	for i := 1; i < len(a); i++ {
		if a[i].AlignmentMaxMS <= a[i-1].AlignmentMaxMS || a[i].DurationMS <= a[i-1].DurationMS {
			t.Errorf("aligned: alignment/duration do not grow with the backlog: %+v", a)
		}
		if u[i].ChannelStateBytes <= u[i-1].ChannelStateBytes {
			t.Errorf("unaligned: channel state does not grow with the backlog: %+v", u)
		}
	}
	last := len(a) - 1
	if a[last].AlignmentMaxMS < 100 || a[last].DurationMS < 100 {
		t.Errorf("aligned under a backlog: alignment %.1f ms, duration %.1f ms; want both > 100 ms", a[last].AlignmentMaxMS, a[last].DurationMS)
	}
	if m := metric[map[string]float64](t, un, "alignment_ms")["max"]; m > 5 {
		t.Errorf("unaligned alignment max %.2f ms, want near zero", m)
	}
	if u[last].DurationMS*5 > a[last].DurationMS {
		t.Errorf("unaligned checkpoint %.1f ms is not far below aligned %.1f ms", u[last].DurationMS, a[last].DurationMS)
	}
	if al.SystemMetrics["alignment_buffered_records"].(map[string]int64)["max"] == 0 {
		t.Errorf("aligned: no records held back during alignment")
	}
}

// Same config and seed: identical run.json (apart from the host block) and
// time series.
func TestDeterministic(t *testing.T) {
	t.Parallel()
	cfg := e2eConfig(AlignedTimeout, "crash@2s:op=split/2", "slow@1s-3s:op=split/0,factor=200")
	cfg.Duration = 4 * engine.Second
	enc := func() []byte {
		out := execute(t, cfg)
		out.Result.Host = harness.Host{}
		b, err := harness.MarshalResult(out.Result)
		if err != nil {
			t.Fatal(err)
		}
		var csv bytes.Buffer
		if err := out.Series.WriteCSV(&csv); err != nil {
			t.Fatal(err)
		}
		return append(b, csv.Bytes()...)
	}
	if a, b := enc(), enc(); !bytes.Equal(a, b) {
		t.Fatal("two runs with the same seed differ")
	}
}

func TestBadOptions(t *testing.T) {
	for _, opts := range []map[string]string{
		{"sink": "exactly"},
		{"checkpoint-interval": "0s"},
		{"max-concurrent-checkpoints": "0"},
		{"checkpoints-retained": "0"},
		{"incremental": "yes"},
		{"full-checkpoint-every": "0"},
	} {
		cfg := e2eConfig(Aligned)
		cfg.SystemOpts = opts
		if _, err := harness.Execute(cfg); !harness.IsInputError(err) {
			t.Errorf("%v: err %v, want an input error", opts, err)
		}
	}
	cfg := e2eConfig(Unaligned)
	cfg.SystemOpts = map[string]string{"max-concurrent-checkpoints": "2"}
	if _, err := harness.Execute(cfg); !harness.IsInputError(err) {
		t.Errorf("unaligned with 2 concurrent checkpoints: err %v, want an input error", err)
	}
}

// A worker that never comes back (its restart lies beyond the run): with
// spare slots the scheduler re-places its tasks on the others' free slots
// and the job recovers exactly-once without it; with too few or none (the
// default), the restarted region waits for the worker, and the run ends
// undrained (exit 4) with nothing lost or duplicated. Chained, a worker
// hosts two tasks ([source→split] and [count→sink]); unchained four, so one
// spare slot on each of the three live workers places only 3 of 4.
func TestWorkerNeverBackNeedsSpareSlots(t *testing.T) {
	for _, tc := range []struct {
		chaining string
		slots    int
		moved    int
		exit     int
		waited   bool
	}{
		{chaining: "true", slots: 0, moved: 0, exit: harness.ExitLiveness, waited: true},
		{chaining: "true", slots: 3, moved: 2, exit: harness.ExitOK},
		{chaining: "false", slots: 0, moved: 0, exit: harness.ExitLiveness, waited: true},
		{chaining: "false", slots: 5, moved: 3, exit: harness.ExitLiveness, waited: true},
		{chaining: "false", slots: 6, moved: 4, exit: harness.ExitOK},
	} {
		t.Run(fmt.Sprintf("chaining=%s,slots=%d", tc.chaining, tc.slots), func(t *testing.T) {
			t.Parallel()
			cfg := e2eConfig("aligned", "crash@2s:worker=1,restart=1h")
			cfg.SystemOpts["chaining"] = tc.chaining
			cfg.Slots = tc.slots
			out := execute(t, cfg)
			r := out.Result
			var moved []engine.Event
			for _, e := range out.Events {
				if e.Kind == "task_replaced" {
					moved = append(moved, e)
				}
			}
			if len(moved) != tc.moved {
				t.Errorf("%d tasks re-placed, want %d: %v", len(moved), tc.moved, moved)
			}
			for _, e := range moved {
				if e.ID == 1 || e.Value != 1 {
					t.Errorf("re-placement %+v: want a move from worker 1 to another", e)
				}
			}
			if r.ExitCode != tc.exit || r.Duplicates != 0 || r.Lost != 0 || r.Drained == tc.waited {
				t.Errorf("exit=%d drained=%v dup=%d lost=%d problems=%v; want exit %d, drained %v\nreplay: %s",
					r.ExitCode, r.Drained, r.Duplicates, r.Lost, r.Problems, tc.exit, !tc.waited, r.Replay)
			}
			if !tc.waited {
				exactlyOnce(t, r)
			}
		})
	}
}

// --slots smaller than what the placement puts on a worker is bad input.
func TestSlotsBelowPlacementRefused(t *testing.T) {
	cfg := e2eConfig("aligned")
	cfg.Slots = 1
	_, err := harness.Execute(cfg)
	if !harness.IsInputError(err) || err.Error() != "--slots 1: worker 0 hosts 2 processes of this deployment; give at least 2" {
		t.Fatalf("err = %v, want the one-line input error", err)
	}
}

// A partition isolating the worker of sink/0 for longer than detection: the
// coordinator declares it failed and fails over; with spare slots the far
// tasks are re-placed and run on as zombies. The partition starts while
// checkpoint 3's metadata is being written (the store is slowed to 50 ms a
// write to widen that moment), so its commit notice to sink/0 is caught in
// the cut and reaches the zombie after the heal — after the new sink/0 restored
// checkpoint 3, committed its transaction and bumped the producer epoch. The
// fence (the broker refuses the zombie's older epoch) stops the zombie's
// commit; the run stays exactly-once.
// Without spare slots the failover's cancel cannot reach the far tasks:
// they run on as zombies, and their new attempts wait for the worker to
// rejoin. Past the connection timeout the zombies' connections reset and
// they fail. Every case is exactly-once.
func TestPartitionZombieSinkFenced(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fault  string
		slots  int
		fenced bool
		reset  bool
	}{
		{"spare slots: zombie fenced", "partition@3.08s-5.5s:op=sink/0", 6, true, false},
		{"no spare slot: in place until rejoin", "partition@3.08s-5.5s:op=sink/0", 0, false, false},
		{"past the connection timeout", "partition@2s-7.5s:workers=1,2,3|0", 6, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := e2eConfig("aligned", tc.fault)
			cfg.Duration = 8 * engine.Second
			cfg.Slots = tc.slots
			cfg.CostOverride = []string{"store-latency=50ms"}
			out := execute(t, cfg)
			r := out.Result
			exactlyOnce(t, r)
			kinds := map[string]int{}
			for _, e := range out.Events {
				kinds[e.Kind]++
			}
			if kinds["worker_declared_failed"] != 1 || kinds["partition_heal"] != 1 {
				t.Errorf("events %v: want one declared failure and one heal", kinds)
			}
			if fenced := r.Counters["barrier_sink_fenced_commits"]; (fenced > 0) != tc.fenced {
				t.Errorf("fenced commits %d, want some: %v", fenced, tc.fenced)
			}
			for _, e := range events(out, "sink_commit_fenced") {
				// The new sink/0 bumped the producer epoch when it
				// restored: the broker refuses the zombie's older one.
				if e.Note != "epoch" {
					t.Errorf("commit of transaction %d fenced by %q, want by the epoch", e.ID, e.Note)
				}
			}
			// Re-placed or restarted by the failover, the far tasks run on:
			// the two of worker 0, source→split/0 and count→sink/0.
			if kinds["zombie"] != 2 {
				t.Errorf("%d zombies, want worker 0's 2 tasks", kinds["zombie"])
			}
			if moved := kinds["task_replaced"]; (moved > 0) != (tc.slots > 0) {
				t.Errorf("%d tasks re-placed with %d slots", moved, tc.slots)
			}
			if n := kinds["partition_conn_reset"]; (n > 0) != tc.reset {
				t.Errorf("%d connection resets, want some: %v", n, tc.reset)
			}
		})
	}
}
