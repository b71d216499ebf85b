package torture

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"ftbench/engine"
	"ftbench/harness"
	"ftbench/sweep"
	"ftbench/systems"
	_ "ftbench/systems/all"
)

// variantsOf is none with two variants, so that a campaign draws them.
type variantsOf struct{ wrapped }

func (variantsOf) Variants() []string { return []string{"a", "b"} }

func init() {
	none, err := systems.Lookup("none")
	if err != nil {
		panic(err)
	}
	systems.Register(variantsOf{wrapped{System: none, name: "test-variants", claim: systems.Claim{Guarantee: systems.AtMostOnce}}})
	variantChoices["test-variants"] = func(bool) []string { return []string{"a", "b"} }
}

// realSystems lists the registered systems, without the tests' own.
func realSystems() []string {
	var names []string
	for _, n := range systems.Names() {
		if !strings.HasPrefix(n, "test-") {
			names = append(names, n)
		}
	}
	return names
}

// Every option of every system is drawn or excused with a reason, and
// every variant of a system that has several: an option or variant a
// system adds fails this test until torture draws it or says why not.
// The tables name only options and variants that exist.
func TestEveryOptionIsDrawnOrExcused(t *testing.T) {
	for _, name := range realSystems() {
		sys, err := systems.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		drawn := map[string]bool{}
		for _, c := range choices[name] {
			drawn[c.name] = true
		}
		declared := map[string]bool{}
		for _, f := range sys.Flags() {
			declared[f.Name] = true
			why, excused := notDrawn[name][f.Name]
			switch {
			case drawn[f.Name] && excused:
				t.Errorf("%s --%s is both drawn and excused", name, f.Name)
			case !drawn[f.Name] && (!excused || why == ""):
				t.Errorf("%s --%s is neither drawn (choices) nor excused with a reason (notDrawn)", name, f.Name)
			}
		}
		for _, c := range choices[name] {
			if !declared[c.name] || len(c.values) == 0 {
				t.Errorf("%s: choice --%s is not an option of the system, or has no values", name, c.name)
			}
		}
		for o := range notDrawn[name] {
			if !declared[o] {
				t.Errorf("%s: excused --%s is not an option of the system", name, o)
			}
		}
		vs := sys.Variants()
		var choosable []string
		if f := variantChoices[name]; f != nil {
			choosable = append(f(false), f(true)...)
		}
		for _, v := range choosable {
			if !slices.Contains(vs, v) {
				t.Errorf("%s: drawn variant %q is not a variant of the system", name, v)
			}
		}
		if len(vs) < 2 {
			continue
		}
		for _, v := range vs {
			why, excused := variantsNotDrawn[name][v]
			if drawnV := slices.Contains(choosable, v); drawnV == (excused && why != "") {
				t.Errorf("%s variant %s: drawn %v, excused %q: want exactly one", name, v, drawnV, why)
			}
		}
	}
}

// workloadsOf are the workloads a system's choices depend on: snapshot's
// options differ on dataflows and on bank-p2p.
func workloadsOf(system string) []string {
	if system == "snapshot" {
		return []string{"wordcount", "bank-p2p"}
	}
	return []string{"wordcount"}
}

// Every row of choices (and every drawable variant) is a coverage row, and
// a campaign's draws reach it: over 150 drawn runs each value is drawn and
// counted as hit in the coverage table when the runs fault. Every drawn
// configuration compiles (draw builds the deployment, so a combination the
// system refuses fails here, not as errored runs).
func TestEveryChoiceIsACoverageRow(t *testing.T) {
	rows := optionRows()
	for _, name := range realSystems() {
		want := map[string]bool{}
		for _, c := range choices[name] {
			for _, v := range c.values {
				want[optionRow(c.name, v)] = true
			}
		}
		if f := variantChoices[name]; f != nil {
			for _, v := range append(f(false), f(true)...) {
				want[optionRow("variant", v)] = true
			}
		}
		var runs []*Run
		for _, wl := range workloadsOf(name) {
			b := base(name)
			b.Workload = wl
			for i := range 150 {
				cfg, err := draw(b, Fixed{}, RunSeed(11, i))
				if err != nil {
					t.Fatalf("%s on %s run %d: %v", name, wl, i, err)
				}
				runs = append(runs, &Run{Paths: optionPaths(b, cfg, true)})
			}
		}
		hit := map[string]int{}
		for _, c := range pathTable(runs) {
			hit[c.Path] = c.Hit
		}
		for q := range want {
			if !slices.Contains(rows, q) {
				t.Errorf("%s: %s is not a coverage row", name, q)
			}
			if hit[q] == 0 {
				t.Errorf("%s: %s drawn in none of 150 runs (table %v)", name, q, hit)
			}
		}
	}
}

// A value is hit only in a run that ran with it and faulted; a value the
// user fixed leaves the option's other values out of the table, and so
// does a value the variant or another option rules out.
func TestOptionRows(t *testing.T) {
	user := base("barrier")
	user.Variant = "unaligned"
	user.SystemOpts = map[string]string{"incremental": "false"}
	cfg, err := draw(user, Fixed{}, RunSeed(5, 0))
	if err != nil {
		t.Fatal(err)
	}
	rows := optionPaths(user, cfg, true)
	for _, q := range []string{"--incremental=true", "--full-checkpoint-every=2", "--variant=aligned", "--max-concurrent-checkpoints=2"} {
		if _, ok := rows[q]; ok {
			t.Errorf("%s is not applicable to %s: %v", q, cfg.ReplayCommand(), rows)
		}
	}
	if !rows["--incremental=false"] || !rows["--variant=unaligned"] {
		t.Fatalf("the user's values must be hit rows: %v", rows)
	}
	interval := optionRow("checkpoint-interval", cfg.SystemOpts["checkpoint-interval"])
	if !rows[interval] {
		t.Fatalf("%s ran and faulted: %v", interval, rows)
	}
	for q, took := range optionPaths(user, cfg, false) {
		if took {
			t.Fatalf("%s counted as hit in a run that did not fault", q)
		}
	}
	// A run that took only fault-free paths did not fault.
	out := &harness.Outcome{Events: []engine.Event{{Kind: "checkpoint_completed", ID: 1}, {Kind: "worker_crash", ID: engine.MasterNode}}}
	if p := runPaths(user, cfg, out); p[interval] || !p[PathCheckpoint] {
		t.Fatalf("a completed checkpoint and a master crash alone count as faulted: %v", p)
	}
	out.Events = append(out.Events, engine.Event{Kind: "checkpoint_aborted", ID: 2, Note: "timeout"})
	if p := runPaths(user, cfg, out); !p[interval] || !p[PathCheckpointExpired] {
		t.Fatalf("an expired checkpoint is a fault path: %v", p)
	}
	if hit := pathsHit(cfg, []engine.Event{{Kind: "checkpoint_aborted", ID: 2, Note: "subsumed"}}, nil); hit[PathCheckpointExpired] {
		t.Fatal("a subsumed checkpoint did not expire")
	}
	// Rows follow the fixed paths, in optionRows' order, and another
	// system's rows are left out rather than listed n/a.
	tab := pathTable([]*Run{{Paths: rows}})
	var got []string
	for _, c := range tab[len(Paths):] {
		got = append(got, c.Path)
	}
	var order []string
	for _, q := range optionRows() {
		if _, ok := rows[q]; ok {
			order = append(order, q)
		}
	}
	if !reflect.DeepEqual(got, order) || slices.Contains(got, "--ackers=0") {
		t.Fatalf("option rows %v, want %v", got, order)
	}
}

// The variant comes from a stream of its own: a run drawn with the
// variant the campaign drew for it, given on the command line, is the same
// run, and so it is without any variant draw (as before variants were
// drawn). Every variant is drawn, and a fixed variant is kept.
func TestDrawnVariantLeavesTheOtherDraws(t *testing.T) {
	seen := map[string]int{}
	barrierVariants := variantChoices["barrier"]
	defer func() { variantChoices["barrier"] = barrierVariants }()
	for i := range 60 {
		variantChoices["barrier"] = barrierVariants
		a, err := draw(base("barrier"), Fixed{}, RunSeed(9, i))
		if err != nil {
			t.Fatal(err)
		}
		seen[a.Variant]++
		fixed := base("barrier")
		fixed.Variant = a.Variant
		b, err := draw(fixed, Fixed{}, RunSeed(9, i))
		if err != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("run %d: drawn variant %s differs from it given (%v):\n%+v\n%+v", i, a.Variant, err, a, b)
		}
		delete(variantChoices, "barrier")
		if c, err := draw(fixed, Fixed{}, RunSeed(9, i)); err != nil || !reflect.DeepEqual(a, c) {
			t.Fatalf("run %d: drawing the variant changed the other draws (%v):\n%+v\n%+v", i, err, a, c)
		}
		if !strings.Contains(a.ReplayCommand(), "--variant "+a.Variant) {
			t.Fatalf("run %d: the replay line must name the drawn variant: %s", i, a.ReplayCommand())
		}
	}
	for _, v := range barrierVariants(false) {
		if seen[v] == 0 {
			t.Fatalf("variant %s never drawn in 60 runs: %v", v, seen)
		}
	}
	fixed := base("snapshot")
	fixed.Variant, fixed.Workload = "naive", "bank-p2p"
	if a, err := draw(fixed, Fixed{}, RunSeed(9, 0)); err != nil || a.Variant != "naive" {
		t.Fatalf("--variant naive: %q, %v", a.Variant, err)
	}
	// A drawn unaligned or sync run never gets two concurrent checkpoints
	// (the system refuses them), and only aligned-timeout an align timeout.
	for _, v := range []string{"unaligned", "sync"} {
		cfg := base("barrier")
		cfg.Variant = v
		cfg.SystemOpts = map[string]string{"max-concurrent-checkpoints": "2"}
		if _, err := draw(cfg, Fixed{}, RunSeed(9, 0)); err == nil {
			t.Fatalf("%s with 2 concurrent checkpoints must be refused, or the draw check above proves nothing", v)
		}
	}
}

// A campaign whose variants are drawn names them all, and its shards
// merge into the same summary (each shard saw only some of them).
func TestDrawnVariantsMerge(t *testing.T) {
	dir := t.TempDir()
	opt := small("test-variants", 6)
	opt.Base.Observe = false
	whole := opt
	whole.Jobs, whole.Out = 2, filepath.Join(dir, "whole")
	wrep, err := Campaign(whole)
	if err != nil {
		t.Fatal(err)
	}
	if wrep.Variant != "a | b" {
		t.Fatalf("campaign variant %q, runs %v", wrep.Variant, wrep.Runs)
	}
	var shards []string
	for i := 1; i <= 3; i++ {
		o := opt
		o.Jobs, o.Shard = 1, sweep.Shard{I: i, N: 3}
		o.Out = sweep.ShardDir(filepath.Join(dir, "shared"), o.Shard)
		if _, err := Campaign(o); err != nil {
			t.Fatal(err)
		}
		shards = append(shards, o.Out)
	}
	merged := filepath.Join(dir, "merged")
	if _, err := Merge(merged, shards); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(whole.Out, SummaryFile))
	b, _ := os.ReadFile(filepath.Join(merged, SummaryFile))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("merged summary differs from the campaign's:\n%s\n---\n%s", a, b)
	}
}

// Fewer retained checkpoints keep the post-run snapshot audit on the
// retained ones: with incremental snapshots and a crash, retention 1 and 2
// check exactly the last 1 and 2 completed checkpoints (their chains'
// older pieces still in the store) and count the others as not retained.
func TestRetainedCheckpointsStayAudited(t *testing.T) {
	for _, retained := range []int64{1, 2} {
		cfg := base("barrier")
		cfg.Duration, cfg.Rate, cfg.Parallelism, cfg.Workers = 2*engine.Second, 3000, 2, 2
		cfg.Faults = []string{"crash@1.1s:worker=0,restart=300ms"}
		cfg.SystemOpts = map[string]string{"checkpoint-interval": "200ms", "incremental": "true",
			"full-checkpoint-every": "10", "checkpoints-retained": strconv.FormatInt(retained, 10)}
		out, err := harness.Execute(cfg)
		if err != nil {
			t.Fatal(err)
		}
		m := out.Result.SystemMetrics
		completed, _ := m["checkpoints_completed"].(int64)
		checked, _ := m["snapshots_checked"].(int64)
		gone, _ := m["snapshots_not_retained"].(int64)
		bad, _ := m["safety_violations"].(int64)
		if completed < 4 || checked != retained || gone != completed-retained || bad != 0 || out.Result.ExitCode != harness.ExitOK {
			t.Fatalf("retained %d: %d completed, %d checked, %d not retained, %d violations, exit %d (%v)",
				retained, completed, checked, gone, bad, out.Result.ExitCode, out.Result.Problems)
		}
	}
}

// ReliesOnFIFO follows the props table, per variant and workload.
func TestReliesOnFIFO(t *testing.T) {
	for _, tc := range []struct {
		system, variant, workload string
		want                      bool
	}{
		{"barrier", "", "wordcount", true},
		{"barrier", "unaligned", "wordcount", true},
		{"lineage", "", "wordcount", true},
		{"stormack", "", "wordcount", false},
		{"none", "", "wordcount", false},
		{"snapshot", "cl", "wordcount", true},
		{"snapshot", "cl", "bank-p2p", false},
		{"snapshot", "lai-yang", "bank-p2p", false},
		{"nope", "", "wordcount", false},
	} {
		cfg := base(tc.system)
		cfg.Variant, cfg.Workload = tc.variant, tc.workload
		if got := ReliesOnFIFO(cfg); got != tc.want {
			t.Errorf("%s/%s on %s: ReliesOnFIFO = %v, want %v", tc.system, tc.variant, tc.workload, got, tc.want)
		}
	}
}
