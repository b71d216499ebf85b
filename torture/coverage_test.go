package torture

import (
	"reflect"
	"testing"

	"ftbench/engine"
	"ftbench/harness"
	"ftbench/systems"
	_ "ftbench/systems/barrier"
	_ "ftbench/systems/lineage"
	_ "ftbench/systems/stormack"
	"ftbench/workloads"
)

// A crash counts for a step only while a process on the crashed worker is in
// it; a pending 2PC transaction counts wherever its sink runs.
func TestPathsHitFromEvents(t *testing.T) {
	ms := engine.Millisecond
	cfg := harness.Config{Duration: engine.Second, Faults: []string{"reorder@100ms-200ms:edge=all,p=0.2"}}
	workerOf := map[string]int{"count/0": 0, "count/1": 1, "sink/0": 1}
	ev := []engine.Event{
		{Time: 10 * ms, Proc: "count/0", Kind: "alignment_start", ID: 1},
		{Time: 11 * ms, Proc: "count/1", Kind: "snapshot_write", ID: 1},
		{Time: 12 * ms, Proc: "count/1", Kind: "snapshot_acked", ID: 1},
		{Time: 13 * ms, Proc: "sink/0", Kind: "sink_precommit", ID: 1},
		{Time: 20 * ms, Kind: "worker_crash", ID: 1},
		{Time: 150 * ms, Proc: "coordinator", Kind: "snapshot_completed", ID: 2, Value: int64(10 * ms)},
		{Time: 300 * ms, Proc: "driver", Kind: "recovery_start", Note: "failed_at=1 lost_batches=1 checkpoint=3 tasks=2"},
	}
	hit := pathsHit(cfg, ev, workerOf)
	if hit[PathCrashAlignment] || hit[PathCrashWrite] {
		t.Fatalf("worker 1 held no process aligning or writing at the crash: %v", hit)
	}
	if !hit[PathCrash2PC] || !hit[PathCLReorder] || !hit[PathRecomputeCutoff] || hit[PathRecomputeNoCut] {
		t.Fatalf("%v", hit)
	}
	ev[4].ID = 0 // count/0 is still aligning
	if hit := pathsHit(cfg, ev, workerOf); !hit[PathCrashAlignment] || hit[PathCrashWrite] {
		t.Fatalf("%v", hit)
	}
}

// Pause paths: a timeout replay while a worker is paused and not (yet)
// declared failed; a declaration, which kills like a crash.
func TestPausePathsFromEvents(t *testing.T) {
	ms := engine.Millisecond
	cfg := harness.Config{Duration: engine.Second}
	workerOf := map[string]int{"count/0": 0, "sink/0": 1}
	for _, tc := range []struct {
		name                       string
		ev                         []engine.Event
		declared, replay, crash2pc bool
	}{
		{"replay before resume", []engine.Event{
			{Time: 10 * ms, Kind: "worker_pause", ID: 1},
			{Time: 20 * ms, Proc: "source/0", Kind: "timeout_replay"},
			{Time: 30 * ms, Kind: "worker_resume", ID: 1},
		}, false, true, false},
		{"replay after resume", []engine.Event{
			{Time: 10 * ms, Kind: "worker_pause", ID: 1},
			{Time: 30 * ms, Kind: "worker_resume", ID: 1},
			{Time: 40 * ms, Proc: "source/0", Kind: "timeout_replay"},
		}, false, false, false},
		{"declared", []engine.Event{
			{Time: 5 * ms, Proc: "sink/0", Kind: "sink_precommit", ID: 1},
			{Time: 10 * ms, Kind: "worker_pause", ID: 1},
			{Time: 20 * ms, Kind: "worker_declared_failed", ID: 1},
			{Time: 25 * ms, Proc: "source/0", Kind: "timeout_replay"},
			{Time: 30 * ms, Kind: "worker_resume", ID: 1},
		}, true, false, true},
	} {
		hit := pathsHit(cfg, tc.ev, workerOf)
		if hit[PathPauseDeclared] != tc.declared || hit[PathPauseReplay] != tc.replay || hit[PathCrash2PC] != tc.crash2pc {
			t.Errorf("%s: %v", tc.name, hit)
		}
	}
}

// Options the user set are kept; the others are drawn, and n/a paths follow
// the configuration (a plain sink has no 2PC commit).
func TestDrawnOptionsAndApplicability(t *testing.T) {
	cfg := base("none")
	cfg.System = "none"
	opts := map[string]string{"sink": "plain"}
	declared := map[string]string{"checkpoint-interval": "1s", "sink": "2pc", "max-concurrent-checkpoints": "1"}
	drawOptions(engine.NewRand(1), "barrier", "aligned", false, opts, declared)
	if opts["sink"] != "plain" || opts["checkpoint-interval"] == "" || opts["max-concurrent-checkpoints"] == "" {
		t.Fatalf("%v", opts)
	}
	if _, ok := opts["aligned-checkpoint-timeout"]; ok {
		t.Fatalf("drew an option the system does not declare: %v", opts)
	}
	if p := checkpointPeriod(map[string]string{"batch-interval": "500ms", "checkpoint-every": "3"}, nil); p != 1500*engine.Millisecond {
		t.Fatalf("lineage period %v", p)
	}
	// none recovers from nothing: its one path is a source waiting on a
	// down partition, which needs no fault tolerance.
	if a := applicable(cfg); len(a) != 1 || !a[PathSourceDown] {
		t.Fatalf("none has no protocol paths but %s: %v", PathSourceDown, a)
	}
}

// The table counts applicable and hit runs per path, in the fixed order;
// the campaign's claim lists the runs' distinct claims.
func TestPathTableAndCampaignClaim(t *testing.T) {
	runs := []*Run{
		{Claim: "exactly-once", Paths: map[string]bool{PathCheckpoint: true, PathCrash2PC: false}},
		{Claim: "at-least-once", Paths: map[string]bool{PathCheckpoint: true}},
		{},
	}
	tab := pathTable(runs)
	if len(tab) != len(Paths) || tab[0].Path != PathCheckpoint {
		t.Fatalf("%+v", tab)
	}
	want := map[string]PathCoverage{
		PathCheckpoint:    {Path: PathCheckpoint, Applicable: 2, Hit: 2, Status: "hit"},
		PathCrash2PC:      {Path: PathCrash2PC, Applicable: 1, Hit: 0, Status: "missed"},
		PathTimeoutReplay: {Path: PathTimeoutReplay, Status: "n/a"},
	}
	for _, c := range tab {
		if w, ok := want[c.Path]; ok && c != w {
			t.Errorf("%+v, want %+v", c, w)
		}
	}
	if c := campaignClaim(runs); c != "at-least-once | exactly-once" {
		t.Fatalf("claim %q", c)
	}
}

// Drawn options: run i's are a pure function of (seed, i); each run's
// claim is the system's for its own options (barrier's plain sink claims
// at-least-once, and has no 2PC path); a drawn duration spans three
// checkpoint periods.
func TestDrawnOptionsPerRun(t *testing.T) {
	sinks := map[string]int{}
	for _, sys := range []string{"barrier", "lineage"} {
		s, err := systems.Lookup(sys)
		if err != nil {
			t.Fatal(err)
		}
		declared := map[string]string{}
		for _, f := range s.Flags() {
			declared[f.Name] = f.Default
		}
		for i := range 40 {
			a, err := draw(base(sys), Fixed{}, RunSeed(3, i))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := draw(base(sys), Fixed{}, RunSeed(3, i))
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("%s run %d drawn twice differs", sys, i)
			}
			if p := checkpointPeriod(a.SystemOpts, declared); a.Duration < 3*p {
				t.Fatalf("%s run %d: %v of input for checkpoints every %v", sys, i, a.Duration, p)
			}
			if sys != "barrier" {
				continue
			}
			sink := a.SystemOpts["sink"]
			sinks[sink]++
			want := systems.ExactlyOnce
			if sink == "plain" {
				want = systems.AtLeastOnce
			}
			if c := s.Claim("aligned", a.SystemOpts); string(c.Guarantee) != want {
				t.Fatalf("run %d: sink %s claims %s", i, sink, c)
			}
			if applicable(a)[PathCrash2PC] != (sink == "2pc") {
				t.Fatalf("run %d: sink %s, 2PC path applicable %v", i, sink, applicable(a)[PathCrash2PC])
			}
		}
	}
	if sinks["plain"] == 0 || sinks["2pc"] == 0 {
		t.Fatalf("both sinks must be drawn: %v", sinks)
	}
	// The user's choice is kept.
	cfg := base("barrier")
	cfg.SystemOpts = map[string]string{"sink": "2pc"}
	for i := range 20 {
		if a, _ := draw(cfg, Fixed{}, RunSeed(3, i)); a.SystemOpts["sink"] != "2pc" {
			t.Fatalf("run %d: --sink 2pc overridden: %v", i, a.SystemOpts)
		}
	}
}

// stormack campaigns draw acking off (--ackers 0) in some runs: those runs
// claim at most once and can take the acks-off resume path instead of the
// timeout replay; a spout_resume counts only from an unacked spout.
func TestStormackDrawsAcksOff(t *testing.T) {
	s, err := systems.Lookup("stormack")
	if err != nil {
		t.Fatal(err)
	}
	ackers := map[string]int{}
	for i := range 30 {
		cfg, err := draw(base("stormack"), Fixed{}, RunSeed(3, i))
		if err != nil {
			t.Fatal(err)
		}
		off := cfg.SystemOpts["ackers"] == "0"
		ackers[cfg.SystemOpts["ackers"]]++
		want := systems.AtLeastOnce
		if off {
			want = systems.AtMostOnce
		}
		if c := s.Claim("default", cfg.SystemOpts); string(c.Guarantee) != want {
			t.Fatalf("run %d: --ackers %s claims %s", i, cfg.SystemOpts["ackers"], c)
		}
		a := applicable(cfg)
		if a[PathAcksOffResume] != off || a[PathTimeoutReplay] == off {
			t.Fatalf("run %d: --ackers %s, applicable %v", i, cfg.SystemOpts["ackers"], a)
		}
	}
	if ackers["0"] == 0 || ackers["workers"] == 0 {
		t.Fatalf("both acking on and off must be drawn: %v", ackers)
	}
	resume := func(note string) map[string]bool {
		return pathsHit(harness.Config{}, []engine.Event{{Proc: "source/0", Kind: "spout_resume", Note: note}}, nil)
	}
	if !resume("acking=off")[PathAcksOffResume] || resume("")[PathAcksOffResume] {
		t.Fatal("spout_resume must count for the acks-off path only from an unacked spout")
	}
}

// A small stormack campaign reaches the acks-off path with crashes, and no
// run breaks its claim: acks-off runs lose but never duplicate.
func TestCampaignStormackAcksOff(t *testing.T) {
	opt := small("stormack", 12)
	opt.Jobs = 1
	opt.Base.SystemOpts = map[string]string{"ackers": "0"}
	rep, err := Campaign(opt)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Counts[Broken] != 0 || rep.Counts[Errored] != 0 || rep.Claim != "at-most-once" {
		t.Fatalf("counts %v claim %q", rep.Counts, rep.Claim)
	}
	var cov PathCoverage
	for _, c := range pathTable(rep.Runs) {
		if c.Path == PathAcksOffResume {
			cov = c
		}
	}
	if cov.Applicable != 12 || cov.Hit == 0 {
		t.Fatalf("acks-off resume: %+v", cov)
	}
	for _, r := range rep.Runs {
		if r.Duplicates != 0 {
			t.Fatalf("run %d duplicated %d effects: %s", r.Index, r.Duplicates, r.Replay)
		}
	}
}

// A source that found its partition down hits source-down-wait, whatever
// the system (the event is workloads.SourceDown's).
func TestSourceDownPathFromEvents(t *testing.T) {
	for _, tc := range []struct {
		kind string
		hit  bool
	}{{workloads.EventSourceDown, true}, {"batch_started", false}} {
		hit := pathsHit(harness.Config{}, []engine.Event{{Time: 5, Proc: "source/1", Kind: tc.kind, ID: 1}}, nil)
		if hit[PathSourceDown] != tc.hit {
			t.Errorf("event %q: %s hit %v, want %v", tc.kind, PathSourceDown, hit[PathSourceDown], tc.hit)
		}
	}
}
