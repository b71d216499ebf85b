package sweep

import (
	"strings"
	"testing"

	"ftbench/harness"
)

func TestParseConfig(t *testing.T) {
	cases := []struct {
		in, want, err string
	}{
		{in: "sweeptest", want: "sweeptest/a"},
		{in: "  sweeptest/b  ", want: "sweeptest/b"},
		{in: "sweeptest --test-knob 2", want: "sweeptest/a test-knob=2"},
		{in: "sweeptest --test-knob=2 --duration 2s", want: "sweeptest/a test-knob=2 duration=2s"},
		{in: "none --rate 5000 --cost restart-delay=2s", want: "none/default rate=5000 cost.restart-delay=2s"},
		// Fault specs hold commas and may be quoted; two join with +.
		{in: "none --fault 'crash@1s:worker=1,restart=2s' --fault \"slow@1s-2s:op=split/0\"",
			want: "none/default fault=crash@1s:worker=1,restart=2s+slow@1s-2s:op=split/0"},
		{in: "none --record-size 100 --workload grep", want: "none/default workload=grep record-size=100"},
		{in: "", err: "empty"},
		{in: "--sink plain", err: "system comes first"},
		{in: "sweeptest,none", err: "names 2 systems"},
		{in: "sweeptest/*", err: "names 2 systems"},
		{in: "all", err: "systems"},
		{in: "nope", err: `unknown system "nope"`},
		{in: "sweeptest --test-knob", err: "--test-knob needs a value"},
		{in: "sweeptest plain", err: `"plain" is not a flag`},
		{in: "none --seed 3", err: "--seed applies to the whole command"},
		{in: "none --system none", err: "first word"},
		{in: "sweeptest --variant b", err: "first word"},
		{in: "none --frobnicate 1", err: "unknown flag --frobnicate"},
		{in: "sweeptest --test-knob 1 --test-knob 2", err: "--test-knob given twice"},
		{in: "none --cost warp=1", err: "--cost warp=1"},
		{in: "none --fault 'crash", err: "unterminated single quote"},
	}
	for _, tc := range cases {
		got, err := ParseConfig(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want one naming %q", tc.in, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v", tc.in, err)
		case tc.err == "" && got.String() != tc.want:
			t.Errorf("%q: %q, want %q", tc.in, got.String(), tc.want)
		}
	}
}

// Each configuration's settings apply to its runs only, over the shared
// base; a setting its system or workload lacks is an error, not a skip.
func TestExpandConfigs(t *testing.T) {
	cfgs := []string{"sweeptest --test-knob 2", "sweeptest/b --test-knob 3 --rate 500", "none --fault crash@1s:worker=1", "none"}
	m := &Manifest{Base: harness.DefaultConfig(), Seeds: []uint64{1}}
	m.Base.System, m.Base.Faults = "", []string{"crash"}
	m.Base.Rate = 1000
	m.Base.SystemOpts = map[string]string{"test-knob": "5"}
	for _, c := range cfgs {
		tg, err := ParseConfig(c)
		if err != nil {
			t.Fatal(err)
		}
		m.Targets = append(m.Targets, tg)
	}
	g, err := m.Expand()
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id, knob string
		rate     float64
		faults   string
	}{
		{"sweeptest/a test-knob=2", "2", 1000, "crash"},
		{"sweeptest/b test-knob=3 rate=500", "3", 500, "crash"},
		{"none/default fault=crash@1s:worker=1", "", 1000, "crash@1s:worker=1"},
		{"none/default", "", 1000, "crash"},
	}
	if len(g.Runs) != len(want) {
		t.Fatalf("%d runs, want %d", len(g.Runs), len(want))
	}
	keys := map[string]bool{}
	for i, r := range g.Runs {
		w, c := want[i], r.Config
		if r.Point.ID() != w.id || c.SystemOpts["test-knob"] != w.knob || c.Rate != w.rate || strings.Join(c.Faults, " ") != w.faults {
			t.Errorf("run %d: %s knob=%q rate=%v faults=%v, want %+v", i, r.Point.ID(), c.SystemOpts["test-knob"], c.Rate, c.Faults, w)
		}
		keys[r.Key] = true
	}
	if len(keys) != len(want) {
		t.Errorf("run keys collide: %v", keys)
	}
	for _, bad := range []struct{ config, err string }{
		{"none --test-knob 2", "--test-knob does not apply to system none"},
		{"none --record-size 100", "--record-size does not apply to workload wordcount"},
		{"none --rate fast", "--param rate=fast"},
	} {
		tg, err := ParseConfig(bad.config)
		if err != nil {
			t.Fatal(err)
		}
		m.Targets = []Target{tg}
		if _, err := m.Expand(); err == nil || !strings.Contains(err.Error(), bad.err) {
			t.Errorf("%q: error %v, want one naming %q", bad.config, err, bad.err)
		}
	}
}
