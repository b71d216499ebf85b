package torture

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"ftbench/engine"
	"ftbench/faults"
	"ftbench/harness"
	"ftbench/systems"
	_ "ftbench/systems/none"
)

// wrapped is none under another name and claim, with extra flags.
type wrapped struct {
	systems.System
	name  string
	claim systems.Claim
	flags []systems.Flag
}

func (w wrapped) Name() string                                { return w.name }
func (w wrapped) Claim(string, systems.Options) systems.Claim { return w.claim }
func (w wrapped) Flags() []systems.Flag {
	return append(slices.Clone(w.System.Flags()), w.flags...) // none's own, then the extra ones
}

func init() {
	none, err := systems.Lookup("none")
	if err != nil {
		panic(err)
	}
	// A liar: none claiming exactly-once, as a broken build would.
	systems.Register(wrapped{System: none, name: "test-liar", claim: systems.ExactlyOnceMonotonic})
	// Not in the properties table (so FIFO), with checkpoints to aim at.
	systems.Register(wrapped{System: none, name: "test-ckpt", claim: systems.Claim{Guarantee: systems.AtMostOnce},
		flags: []systems.Flag{{Name: "checkpoint-interval", Default: "500ms", Usage: "test"}}})
}

func base(system string) harness.Config {
	cfg := harness.DefaultConfig()
	cfg.System = system
	cfg.Observe = true
	return cfg
}

// small keeps campaigns in tests short: 1.5 s of input at 3000 records/s.
func small(system string, runs int) Options {
	cfg := base(system)
	cfg.Duration, cfg.Rate, cfg.Drain = 1500*engine.Millisecond, 3000, 3*engine.Second
	return Options{Base: cfg, Fixed: Fixed{Duration: true, Rate: true}, Runs: runs, ShrinkBudget: 30}
}

func TestDrawIsDeterministicCanonicalAndAimed(t *testing.T) {
	var nearCheckpoint, duringRecovery, reorders, sourceDowns int
	for _, sys := range []string{"none", "test-ckpt"} {
		for i := range 80 {
			seed := RunSeed(7, i)
			a, err := draw(base(sys), Fixed{}, seed)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := draw(base(sys), Fixed{}, seed)
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("%s run %d: two draws differ:\n%+v\n%+v", sys, i, a, b)
			}
			if len(a.Faults) == 0 || a.Duration < minDuration || a.Rate < minRate || a.Workers < 1 {
				t.Fatalf("%s run %d: %+v", sys, i, a)
			}
			var crashes []engine.Time
			for _, f := range a.Faults {
				s, err := faults.Parse(f, faults.Defaults{})
				if err != nil || s.String() != f {
					t.Fatalf("%s run %d: fault %q is not canonical (%v)", sys, i, f, err)
				}
				if s.At >= a.Duration {
					t.Fatalf("%s run %d: fault %q after the input (%v)", sys, i, f, a.Duration)
				}
				switch s.Kind {
				case faults.Reorder:
					reorders++
					if sys != "none" {
						t.Fatalf("reorder drawn for %s, which relies on FIFO: %q", sys, f)
					}
				case faults.SourceDown:
					// A partition the run has, back before 80% of the
					// input so the run shows the catch-up.
					sourceDowns++
					if s.Part >= a.Parallelism || s.End > a.Duration*8/10 || s.End-s.At < 100*engine.Millisecond {
						t.Fatalf("%s run %d: %q with parallelism %d and %v of input", sys, i, f, a.Parallelism, a.Duration)
					}
				case faults.Crash:
					if sys == "test-ckpt" && s.At%(500*engine.Millisecond) < checkpointSkew {
						nearCheckpoint++
					}
					for _, c := range crashes {
						if s.At-c < 2500*engine.Millisecond {
							duringRecovery++
						}
					}
					crashes = append(crashes, s.At)
				}
			}
			if _, err := harness.Deployment(a); err != nil {
				t.Fatalf("%s run %d: drawn config is invalid: %v", sys, i, err)
			}
		}
	}
	if nearCheckpoint < 10 || duringRecovery < 10 || reorders < 10 || sourceDowns < 20 {
		t.Fatalf("crashes at checkpoints %d, during recovery %d, reorders %d, source-downs %d (a third of 160 runs): the schedules miss the interesting times",
			nearCheckpoint, duringRecovery, reorders, sourceDowns)
	}
}

// none loses effects under crashes: expected, not failures. Results do
// not depend on the number of jobs.
func TestCampaignNone(t *testing.T) {
	out := t.TempDir()
	opt := small("none", 4)
	opt.Out, opt.Jobs = out, 1
	rep, err := Campaign(opt)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Counts[Broken] != 0 || rep.Counts[Errored] != 0 || rep.Counts[Expected] == 0 || rep.ExitCode() == harness.ExitSafety {
		t.Fatalf("counts %v exit %d", rep.Counts, rep.ExitCode())
	}
	var onDisk Report
	b, err := os.ReadFile(filepath.Join(out, "torture.json"))
	if err != nil || json.Unmarshal(b, &onDisk) != nil || len(onDisk.Runs) != 4 {
		t.Fatalf("torture.json: %v", err)
	}
	for _, r := range rep.Runs {
		b, err := os.ReadFile(filepath.Join(r.Dir, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		var res harness.Result
		if err := json.Unmarshal(b, &res); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(res.Faults, r.Faults) || res.Replay != r.Replay || !strings.Contains(r.Replay, "--observe") {
			t.Fatalf("run %d: run.json faults %v replay %q, campaign says %v %q", r.Index, res.Faults, res.Replay, r.Faults, r.Replay)
		}
		if res.Observer == nil {
			t.Fatalf("run %d: observer off", r.Index)
		}
	}
	opt.Out, opt.Jobs = "", 3
	again, err := Campaign(opt)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range again.Runs {
		if a := rep.Runs[i]; a.Class != r.Class || a.Replay != r.Replay || a.Problem != r.Problem || a.Lost != r.Lost {
			t.Fatalf("run %d differs with 3 jobs: %+v vs %+v", i, a, r)
		}
	}
}

// A build that breaks its claim is caught, and the shrinker boils the
// schedule down to what breaks it: one crash.
func TestCampaignCatchesAndShrinks(t *testing.T) {
	out := t.TempDir()
	opt := small("test-liar", 3)
	opt.Shrink, opt.ShrinkBudget, opt.Out = 1, 16, out
	opt.Base.Observe = false // the delivery check catches this liar
	rep, err := Campaign(opt)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Counts[Broken] == 0 || rep.ExitCode() != harness.ExitSafety || len(rep.Shrunk) != 1 {
		t.Fatalf("counts %v exit %d shrunk %d", rep.Counts, rep.ExitCode(), len(rep.Shrunk))
	}
	s := rep.Shrunk[0]
	orig := rep.Runs[s.Run]
	if len(s.Faults) > 2 || len(s.Faults) > len(orig.Faults) || s.DurationS > s.DurationBeforeS || s.Tries == 0 {
		t.Fatalf("shrunk %+v from %v", s, orig.Faults)
	}
	if len(orig.Faults) > 1 && len(s.Faults) == len(orig.Faults) && s.DurationS == s.DurationBeforeS {
		t.Fatalf("nothing shrunk: %+v", s)
	}
	b, err := os.ReadFile(filepath.Join(s.Dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res harness.Result
	if err := json.Unmarshal(b, &res); err != nil || res.ExitCode != harness.ExitSafety || res.Replay != s.Replay {
		t.Fatalf("shrunk run.json: exit %d replay %q (want %q) %v", res.ExitCode, res.Replay, s.Replay, err)
	}
	// Stopping at the first broken run finds the same one.
	first := -1
	for _, r := range rep.Runs {
		if r.Class == Broken && first < 0 {
			first = r.Index
		}
	}
	opt.Stop, opt.Shrink, opt.Out, opt.Runs = true, 0, "", 20
	stopped, err := Campaign(opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(stopped.Runs) <= first || len(stopped.Runs) > first+runtime.GOMAXPROCS(0)+1 || stopped.Runs[first].Class != Broken {
		t.Fatalf("--stop ran %d runs; the first broken one is %d", len(stopped.Runs), first)
	}
}

func TestBadInput(t *testing.T) {
	cfg := base("nope")
	if _, err := Campaign(Options{Base: cfg, Runs: 1}); !harness.IsInputError(err) {
		t.Fatalf("unknown system: %v", err)
	}
	if _, err := Campaign(Options{Base: base("none"), Runs: 0}); !harness.IsInputError(err) {
		t.Fatalf("zero runs: %v", err)
	}
}

func TestClassify(t *testing.T) {
	obs := func(result string) *harness.Observation { return &harness.Observation{Result: result} }
	for _, tc := range []struct {
		r    harness.Result
		want Class
	}{
		{harness.Result{}, Passed},
		{harness.Result{Lost: 3}, Expected},
		{harness.Result{Duplicates: 3, Observer: obs("ok")}, Expected},
		{harness.Result{ExitCode: harness.ExitSafety, Observer: obs("unknown")}, Broken},
		{harness.Result{Observer: obs("unknown")}, Unknown},
		{harness.Result{ExitCode: harness.ExitLiveness, Observer: obs("unknown")}, Unknown},
		{harness.Result{ExitCode: harness.ExitLiveness}, Liveness},
	} {
		if got := classify(&tc.r); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.r, got, tc.want)
		}
	}
}
