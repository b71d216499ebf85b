package reports

import (
	"image/color"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot"

	"ftbench/capacity"
	"ftbench/harness"
	"ftbench/sweep"
)

// A panel whose values are all 0 says so, and gets a y axis with a
// scale; one with any other value, or with none reported, is left alone.
func TestSayIfAllZero(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name   string
		values []float64
		said   bool
	}{
		{"all 0", []float64{0, 0, 0}, true},
		{"0 and not reported", []float64{0, nan}, true},
		{"one value", []float64{0, 3}, false},
		{"none reported", []float64{nan}, false},
		{"no values", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := plot.New()
			p.Y.Max = 1e-9
			if got := sayIfAllZero(p, tc.values, "nothing happened"); got != tc.said {
				t.Fatalf("said %v, want %v", got, tc.said)
			}
			if tc.said && p.Y.Max != 1 {
				t.Errorf("y axis up to %g, want 1", p.Y.Max)
			}
			if !tc.said && p.Y.Max != 1e-9 {
				t.Errorf("y axis changed to %g", p.Y.Max)
			}
		})
	}
}

// The delivery plot of runs that lost, duplicated and mis-valued nothing
// writes the note (its grey text is drawn); one with a duplicate does not.
func TestDeliveryAllZeroNote(t *testing.T) {
	noteGrey := color.RGBA{R: 60, G: 60, B: 60, A: 255}
	for _, tc := range []struct {
		name string
		dup  int64
		note bool
	}{
		{"nothing wrong", 0, true},
		{"a duplicate", 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := storedOf(fixtureRuns()[3].outcome().Result), storedOf(fixtureRuns()[4].outcome().Result)
			b.Result.Duplicates = tc.dup
			png, _, err := deliveryPlot(groupRuns([]*sweep.StoredRun{a, b})[0])
			if err != nil {
				t.Fatal(err)
			}
			img := decodePNGBytes(t, "delivery", png)
			checkBorder(t, "delivery", img)
			if n := countColor(img, noteGrey); (n > 100) != tc.note {
				t.Errorf("%d pixels of the note's grey, want the note: %v", n, tc.note)
			}
		})
	}
}

// Capacity bars name what was probed: the workload and its record size,
// in the title when every system had the same input, else under each bar.
func TestCapacityInputs(t *testing.T) {
	sys := func(workload string, opts map[string]string) *capacity.Result {
		return &capacity.Result{System: "barrier", Variant: "aligned", Workload: workload, Config: harness.RunConfig{WorkloadOpts: opts}}
	}
	for _, tc := range []struct {
		name   string
		cmp    []*capacity.Result
		inputs []string
		shared string
	}{
		{"grep at its default size", []*capacity.Result{sys("grep", nil), sys("grep", map[string]string{"record-size": "100"})},
			[]string{"grep (100 B records)", "grep (100 B records)"}, "grep (100 B records)"},
		{"grep at two sizes", []*capacity.Result{sys("grep", map[string]string{"record-size": "1000"}), sys("grep", nil)},
			[]string{"grep (1000 B records)", "grep (100 B records)"}, ""},
		{"wordcount's lines", []*capacity.Result{sys("wordcount", map[string]string{"vocabulary": "10000"})},
			[]string{"wordcount (records of 9–45 B, mean 27 B)"}, "wordcount (records of 9–45 B, mean 27 B)"},
		{"a workload this build lacks", []*capacity.Result{sys("clicks", nil)}, []string{"clicks (record size unknown)"}, "clicks (record size unknown)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inputs, shared := capacityInputs(&capacity.Comparison{Systems: tc.cmp})
			if strings.Join(inputs, "|") != strings.Join(tc.inputs, "|") || shared != tc.shared {
				t.Errorf("got %q %q, want %q %q", inputs, shared, tc.inputs, tc.shared)
			}
		})
	}
}

// A group's title names the system options its runs were given alike —
// a torture run's drawn sink, failover, interval —, read off the replay
// line; options left at their defaults, or that differ between the runs
// (their labels name those), are not.
func TestConfigLabel(t *testing.T) {
	run := func(variant, replayOpts string) *sweep.StoredRun {
		r := storedOf(fixtureRuns()[3].outcome().Result)
		r.Result.Variant = variant
		r.Result.Config.SystemOpts = map[string]string{"sink": "2pc", "failover": "region", "checkpoint-interval": "1s", "checkpoints-retained": "1"}
		for _, kv := range strings.Fields(replayOpts) {
			k, v, _ := strings.Cut(kv, "=")
			r.Result.Config.SystemOpts[k] = v
			r.Result.Replay += " --" + k + " " + v
		}
		return r
	}
	none := storedOf(fixtureRuns()[0].outcome().Result)
	for _, tc := range []struct {
		name string
		runs []*sweep.StoredRun
		want string
	}{
		{"a torture run's drawn options", []*sweep.StoredRun{run("aligned", "sink=plain failover=full checkpoint-interval=200ms")},
			"barrier/aligned (checkpoint-interval=200ms, failover=full, sink=plain)"},
		{"a drawn value equal to the default is named too", []*sweep.StoredRun{run("unaligned", "sink=2pc")},
			"barrier/unaligned (sink=2pc)"},
		{"nothing given", []*sweep.StoredRun{run("aligned", "")}, "barrier/aligned"},
		{"shared and differing options", []*sweep.StoredRun{run("aligned", "sink=plain failover=full"), run("aligned", "sink=plain failover=region")},
			"barrier/aligned (sink=plain)"},
		{"several systems", []*sweep.StoredRun{run("aligned", "sink=plain"), none}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := configLabel(tc.runs); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}

	// A campaign's runs are groups of one: each title names its own.
	a, b := run("aligned", "sink=plain failover=full"), run("aligned", "sink=2pc failover=region")
	b.Result.Seed++
	groups := groupRuns([]*sweep.StoredRun{a, b})
	if len(groups) != 2 || !strings.HasPrefix(groups[0].Title, "barrier/aligned (failover=full, sink=plain), wordcount") ||
		!strings.HasPrefix(groups[1].Title, "barrier/aligned (failover=region, sink=2pc), wordcount") {
		t.Errorf("titles %q", []string{groups[0].Title, groups[len(groups)-1].Title})
	}
}
