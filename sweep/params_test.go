package sweep

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"ftbench/engine"
	"ftbench/harness"
	"ftbench/systems"
	_ "ftbench/systems/none"
)

// fakeSystem delegates to none, or fails to compile ("refuse": bad input
// for this system) or panics ("panic": an internal error). It has two
// variants and a system option, test-knob, that none lacks.
type fakeSystem struct{ name, mode string }

func (f fakeSystem) Name() string     { return f.name }
func (fakeSystem) Describe() string   { return "test system" }
func (fakeSystem) Variants() []string { return []string{"a", "b"} }
func (fakeSystem) Claim(string, systems.Options) systems.Claim {
	return systems.Claim{Guarantee: systems.AtMostOnce}
}
func (fakeSystem) Flags() []systems.Flag {
	return []systems.Flag{{Name: "test-knob", Default: "1", Usage: "a test option"}}
}
func (f fakeSystem) Compile(job systems.Job) (*engine.Deployment, error) {
	switch f.mode {
	case "panic":
		panic("boom: a protocol bug")
	case "refuse":
		return nil, errors.New("sweeptest-refuse cannot run this workload")
	}
	none, _ := systems.Lookup("none")
	return none.Compile(job)
}

func init() {
	systems.Register(fakeSystem{name: "sweeptest"})
	systems.Register(fakeSystem{name: "sweeptest-panic", mode: "panic"})
	systems.Register(fakeSystem{name: "sweeptest-refuse", mode: "refuse"})
}

func TestParseParam(t *testing.T) {
	cases := []struct {
		in   string
		want Param
		err  string
	}{
		{in: "rate=1000,2000", want: Param{"rate", []string{"1000", "2000"}}},
		{in: "cost.restart-delay=1s,2s", want: Param{"cost.restart-delay", []string{"1s", "2s"}}},
		{in: "restart-delay=1s", want: Param{"cost.restart-delay", []string{"1s"}}},
		{in: "test-knob=1,2", want: Param{"test-knob", []string{"1", "2"}}},
		{in: "fault=crash@1s:worker=1,restart=200ms;crash@2s", want: Param{"fault", []string{"crash@1s:worker=1,restart=200ms", "crash@2s"}}},
		{in: "topology=ring;random,degree=2", want: Param{"topology", []string{"ring", "random,degree=2"}}},
		{in: "vocabulary=10,100", want: Param{"vocabulary", []string{"10", "100"}}},
		{in: "warp=1", err: "unknown run parameter"},
		{in: "seed=1,2", err: "--seeds"},
		{in: "system=none", err: "--system"},
		{in: "rate", err: "NAME=V1,V2"},
		{in: "rate=1,,2", err: "empty value"},
		{in: "rate=1,1", err: "twice"},
	}
	for _, tc := range cases {
		got, err := ParseParam(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseParam(%q) = %v, %v; want error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseParam(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestApply(t *testing.T) {
	cfg := harness.DefaultConfig()
	cfg.Variant = "default"
	cfg.CostOverride = []string{"restart-delay=5s", "net-latency=1ms"}
	for _, kv := range [][2]string{{"rate", "1234"}, {"duration", "3s"}, {"cost.restart-delay", "2s"}, {"fault", "crash@1s+slow@1s-2s"}, {"vocabulary", "77"}} {
		if ok, err := Apply(&cfg, kv[0], kv[1]); !ok || err != nil {
			t.Fatalf("Apply(%s=%s) = %v, %v", kv[0], kv[1], ok, err)
		}
	}
	if cfg.Rate != 1234 || cfg.Duration != 3*engine.Second || cfg.WorkloadOpts["vocabulary"] != "77" {
		t.Errorf("config not set: %+v", cfg)
	}
	if !reflect.DeepEqual(cfg.CostOverride, []string{"net-latency=1ms", "restart-delay=2s"}) {
		t.Errorf("cost overrides %v: the swept value must replace the base one", cfg.CostOverride)
	}
	if !reflect.DeepEqual(cfg.Faults, []string{"crash@1s", "slow@1s-2s"}) {
		t.Errorf("faults %v", cfg.Faults)
	}
	// none has no test-knob: the point does not apply, without error.
	if ok, err := Apply(&cfg, "test-knob", "3"); ok || err != nil {
		t.Errorf("test-knob on none: applies=%v err=%v; want false, nil", ok, err)
	}
	for _, kv := range [][2]string{{"rate", "fast"}, {"duration", "-1s"}, {"parallelism", "0"}, {"cost.restart-delay", "soon"}, {"workload", "nope"}} {
		if _, err := Apply(&cfg, kv[0], kv[1]); err == nil {
			t.Errorf("Apply(%s=%s): want an error", kv[0], kv[1])
		}
	}
}

func TestParseTargets(t *testing.T) {
	got, err := ParseTargets("none,sweeptest/b,sweeptest/*,none/default")
	want := []Target{{System: "none", Variant: "default"}, {System: "sweeptest", Variant: "b"}, {System: "sweeptest", Variant: "a"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, %v; want %v", got, err, want)
	}
	all, err := ParseTargets("all")
	if err != nil || len(all) != len(systems.Names()) {
		t.Fatalf("all = %v, %v; want one per registered system %v", all, err, systems.Names())
	}
	for _, bad := range []string{"nope", "none/fast", "", "all/a"} {
		if _, err := ParseTargets(bad); err == nil {
			t.Errorf("ParseTargets(%q): want an error", bad)
		}
	}
}

func TestParseSeeds(t *testing.T) {
	got, err := ParseSeeds("7, 1-3,2")
	if err != nil || !reflect.DeepEqual(got, []uint64{1, 2, 3, 7}) {
		t.Fatalf("got %v, %v", got, err)
	}
	if s := FormatSeeds(got); s != "1-3,7" {
		t.Errorf("FormatSeeds = %q", s)
	}
	for _, bad := range []string{"", "x", "3-1", "1-", "0-100000", "-1"} {
		if _, err := ParseSeeds(bad); err == nil {
			t.Errorf("ParseSeeds(%q): want an error", bad)
		}
	}
}

func TestParseShard(t *testing.T) {
	s, err := ParseShard("2/3")
	if err != nil || s != (Shard{2, 3}) {
		t.Fatalf("got %v, %v", s, err)
	}
	var got []int
	for i := range 7 {
		if s.Has(i) {
			got = append(got, i)
		}
	}
	if !reflect.DeepEqual(got, []int{1, 4}) {
		t.Errorf("shard 2/3 of 7 points = %v, want [1 4]", got)
	}
	for _, bad := range []string{"0/2", "3/2", "1", "a/b", "1/0"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q): want an error", bad)
		}
	}
}

func TestExpand(t *testing.T) {
	m := &Manifest{
		Base:    harness.DefaultConfig(),
		Targets: []Target{{System: "none", Variant: "default"}, {System: "sweeptest", Variant: "a"}},
		Params:  []Param{{"rate", []string{"1000", "2000"}}, {"test-knob", []string{"1", "2"}}},
		Seeds:   []uint64{1, 2, 3},
	}
	g, err := m.Expand()
	if err != nil {
		t.Fatal(err)
	}
	// none lacks test-knob: only sweeptest has points (2 rates x 2 knobs).
	if len(g.Points) != 4 || len(g.Runs) != 12 {
		t.Fatalf("%d points, %d runs; want 4, 12", len(g.Points), len(g.Runs))
	}
	if g.Points[1].ID() != "sweeptest/a rate=1000 test-knob=2" {
		t.Errorf("point order: %s", g.Points[1].ID())
	}
	if len(g.Skipped) != 2 || !strings.Contains(g.Skipped[0], "none/default") {
		t.Errorf("skipped = %v", g.Skipped)
	}
	keys := map[string]bool{}
	for _, r := range g.Runs {
		if keys[r.Key] {
			t.Fatalf("duplicate run key %s", r.Key)
		}
		keys[r.Key] = true
	}
	// The key is a pure function of the configuration.
	g2, _ := m.Expand()
	if g2.Runs[5].Key != g.Runs[5].Key {
		t.Error("run keys differ between expansions")
	}
	m.Params = []Param{{"test-knob", []string{"1"}}}
	m.Targets = []Target{{System: "none", Variant: "default"}}
	if _, err := m.Expand(); err == nil || !strings.Contains(err.Error(), "applies to none") {
		t.Errorf("a parameter no system takes: err = %v", err)
	}
}
