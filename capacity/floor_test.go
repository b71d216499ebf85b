package capacity

import (
	"strings"
	"testing"
	"time"

	"ftbench/engine"
	"ftbench/harness"
	"ftbench/systems"
	_ "ftbench/systems/all"
)

// small is a cheap fault-free run: grep on 2 workers, 2 s of input.
func small(system string, opts map[string]string) harness.Config {
	return harness.Config{System: system, Workload: "grep", SystemOpts: opts, Duration: 2 * engine.Second, Rate: 2000,
		Parallelism: 2, Workers: 2, Cores: 2, Seed: 1, Drain: 3 * engine.Second}
}

// cycleOption names, for every system with a commit cycle, an option that
// sets it: tripling the option triples systems.CommitCycle.
func TestCycleOptions(t *testing.T) {
	for _, name := range systems.Names() {
		sys, _ := systems.Lookup(name)
		opts := systems.Options{}
		for _, f := range sys.Flags() {
			opts[f.Name] = f.Default
		}
		variant := sys.Variants()[0]
		cycle := systems.CommitCycle(sys, variant, opts)
		o, ok := cycleOption[name]
		if cycle == 0 {
			if ok {
				t.Errorf("%s has no commit cycle but cycleOption names --%s", name, o.option)
			}
			continue
		}
		if !ok {
			t.Errorf("%s has a commit cycle of %v and no entry in cycleOption", name, time.Duration(cycle))
			continue
		}
		opts[o.option] = time.Duration(3 * cycle).String()
		if got := systems.CommitCycle(sys, variant, opts); got != 3*cycle {
			t.Errorf("%s: --%s %v gives a commit cycle of %v, want %v", name, o.option, time.Duration(3*cycle), time.Duration(got), time.Duration(3*cycle))
		}
	}
}

// MinP99 is a floor the runs respect: a run's p99 end-to-end latency is at
// least MinP99 of its commit cycle, for every system with one, and well
// above it would not be a floor worth refusing bounds under (within 15%).
func TestMinP99HoldsInRuns(t *testing.T) {
	for _, tc := range []struct {
		system string
		opts   map[string]string
	}{
		{"barrier/aligned", map[string]string{"checkpoint-interval": "200ms"}},
		{"barrier/unaligned", map[string]string{"checkpoint-interval": "300ms"}},
		{"barrier/sync", map[string]string{"checkpoint-interval": "200ms"}},
		{"lineage", map[string]string{"batch-interval": "200ms"}},
		{"snapshot/cl", map[string]string{"checkpoint-interval": "250ms"}},
	} {
		t.Run(tc.system, func(t *testing.T) {
			system, variant, _ := strings.Cut(tc.system, "/")
			cfg := small(system, tc.opts)
			cfg.Variant = variant
			out, err := harness.Execute(cfg)
			if err != nil {
				t.Fatal(err)
			}
			cycle := engine.Time(out.Result.Config.CommitCycleS * float64(engine.Second))
			p99 := out.Result.LatencyMS.P99
			floor := float64(MinP99(cycle)) / float64(engine.Millisecond)
			if cycle == 0 || p99 < floor || p99 > floor*1.15 {
				t.Fatalf("commit cycle %v, p99 %.1f ms, floor %.1f ms", time.Duration(cycle), p99, floor)
			}
		})
	}
}

// NewPlan refuses exactly the bounds below MinP99, and only where effects
// wait for a commit cycle: not with barrier's plain sink, not on a
// peer-to-peer workload, not for a system without a cycle.
func TestNewPlanLatencyBound(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      harness.Config
		bound    time.Duration
		refused  bool
		mentions string
	}{
		{"barrier 2pc below the floor", small("barrier", nil), 989 * time.Millisecond, true, "--checkpoint-interval 1s"},
		{"barrier 2pc at the floor", small("barrier", nil), 990 * time.Millisecond, false, ""},
		{"barrier plain sink", small("barrier", map[string]string{"sink": "plain"}), 10 * time.Millisecond, false, ""},
		{"lineage below the floor", small("lineage", map[string]string{"batch-interval": "500ms"}), 400 * time.Millisecond, true, "--batch-interval 500ms"},
		{"stormack", small("stormack", nil), time.Millisecond, false, ""},
		{"snapshot on bank-p2p", harness.Config{System: "snapshot", Workload: "bank-p2p", Duration: 2 * engine.Second,
			Parallelism: 4, Workers: 2, Cores: 2, Seed: 1}, 10 * time.Millisecond, false, ""},
		{"snapshot on a dataflow", small("snapshot", nil), 10 * time.Millisecond, true, "at least 990ms"},
		// A huge bound is named as the bound, not as the probe drain it
		// would have made.
		{"a bound of 5000 hours", small("barrier", nil), 5000 * time.Hour, true, "must be at most 10m0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewPlan(Options{Base: tc.cfg, LatencyBound: engine.Time(tc.bound)})
			switch {
			case !tc.refused && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refused && (!harness.IsInputError(err) || !strings.Contains(err.Error(), tc.mentions) ||
				!strings.Contains(err.Error(), "--latency-bound "+tc.bound.String())):
				t.Fatalf("got %v, want an input error naming the bound and %q", err, tc.mentions)
			}
		})
	}
}

// A start rate below what a probe judges is raised to it, with a note.
func TestNewPlanRaisesStart(t *testing.T) {
	cfg := small("none", nil)
	cfg.Rate = 10
	p, err := NewPlan(Options{Base: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if want := MinRate(p.Config.Duration); p.Config.Rate != want || p.MinRate != want || len(p.Notes) == 0 ||
		!strings.Contains(p.Notes[len(p.Notes)-1], "start rate raised from 10") {
		t.Fatalf("start %g, lowest rate %g (want %g), notes %q", p.Config.Rate, p.MinRate, want, p.Notes)
	}
}
