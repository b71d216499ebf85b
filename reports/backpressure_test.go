package reports

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"

	"ftbench/sweep"
)

// barrierRun is a stored barrier/aligned run at a rate and checkpoint
// interval, with the simulator's backpressure counters (nil: results
// written before them) and an alignment time.
func barrierRun(rate float64, interval string, counters map[string]int64, alignment float64) *sweep.StoredRun {
	r := storedOf(fixtureRuns()[3].outcome().Result)
	r.Result.Config.RateRPS = rate
	r.Result.Config.SystemOpts = map[string]string{"checkpoint-interval": interval, "sink": "2pc"}
	r.Result.Counters = maps.Clone(counters)
	r.Result.SystemMetrics = map[string]any{"alignment_ms": dist(alignment)}
	return r
}

// The x axis takes the simulator's measure (its most backpressured
// operator), else a system's own key, else the source lag, and its label
// says which.
func TestBackpressureOf(t *testing.T) {
	bp := func(kv ...any) map[string]int64 {
		m := map[string]int64{"barrier_sink_commits": 9}
		for i := 0; i < len(kv); i += 2 {
			m[runtimeBackpressure+kv[i].(string)] = int64(kv[i+1].(int))
			m["backpressured_time_ms_per_s_max/"+kv[i].(string)] = 1000 // never the mean's
		}
		return m
	}
	withSystemKey := barrierRun(1000, "1s", nil, 5)
	withSystemKey.Result.SystemMetrics["backpressure_ms"] = 55.0
	for _, tc := range []struct {
		name string
		run  *sweep.StoredRun
		x    float64
		key  string
		src  bpSource
	}{
		{"the most backpressured operator", barrierRun(1000, "1s", bp("source", 700, "split", 740, "count", 0, "sink", 0), 5),
			740, runtimeBackpressure + "split", bpRuntime},
		{"a tie goes to the first name", barrierRun(1000, "1s", bp("split", 300, "source", 300), 5), 300, runtimeBackpressure + "source", bpRuntime},
		{"none backpressured", barrierRun(1000, "1s", bp("source", 0, "split", 0), 5), 0, allOperators, bpRuntime},
		{"a system's own key", withSystemKey, 55, "backpressure_ms", bpSystem},
		{"older results: the source lag", barrierRun(1000, "1s", nil, 5), 0, lagKey, bpLag},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, key, src := backpressureOf(tc.run)
			if key != tc.key || src != tc.src || (src != bpLag && x != tc.x) {
				t.Errorf("got %g from %q (%d), want %g from %q (%d)", x, key, src, tc.x, tc.key, tc.src)
			}
		})
	}

	for _, tc := range []struct {
		name  string
		keys  []string
		srcs  []bpSource
		wants []string
	}{
		{"one operator", []string{runtimeBackpressure + "split", allOperators, runtimeBackpressure + "split"}, []bpSource{bpRuntime, bpRuntime, bpRuntime},
			[]string{"backpressure of split, the most backpressured operator", "ms/s", "backPressuredTimeMsPerSecond"}},
		{"several operators", []string{runtimeBackpressure + "split", runtimeBackpressure + "source"}, []bpSource{bpRuntime, bpRuntime},
			[]string{"each run's most backpressured operator (named in the CSV)"}},
		{"source lag", []string{lagKey, lagKey}, []bpSource{bpLag, bpLag},
			[]string{"mean source lag", "lack the simulator's backpressure measure"}},
		{"a system's key", []string{"backpressure_ms"}, []bpSource{bpSystem}, []string{"backpressure_ms"}},
		{"mixed", []string{runtimeBackpressure + "split", lagKey}, []bpSource{bpRuntime, bpLag}, []string{"mixed measures"}},
	} {
		t.Run("axis/"+tc.name, func(t *testing.T) {
			label, _ := backpressureAxis(tc.keys, tc.srcs)
			for _, w := range tc.wants {
				if !strings.Contains(label, w) {
					t.Errorf("label %q lacks %q", label, w)
				}
			}
		})
	}
}

// A line joins only the runs of one configuration, along the swept
// parameter: runs that differ in anything else are points only.
func TestConfigLines(t *testing.T) {
	run := func(rate float64, interval string, seed uint64) *sweep.StoredRun {
		r := barrierRun(rate, interval, nil, 5)
		r.Result.Seed = seed
		return r
	}
	for _, tc := range []struct {
		name  string
		runs  []*sweep.StoredRun
		swept []string
		param string
		lines []int
	}{
		{"one setting varies: a line along it",
			[]*sweep.StoredRun{run(1000, "1s", 1), run(2000, "1s", 1), run(3000, "1s", 1)}, nil,
			"rate", []int{0, 0, 0}},
		{"a sweep of rate over two intervals: a line per interval",
			[]*sweep.StoredRun{run(1000, "500ms", 1), run(1000, "2s", 1), run(2000, "500ms", 1), run(2000, "2s", 1)}, []string{"rate", "checkpoint-interval"},
			"rate", []int{0, 1, 0, 1}},
		{"the first swept parameter the runs differ in",
			[]*sweep.StoredRun{run(1000, "500ms", 1), run(1000, "2s", 1), run(2000, "500ms", 1), run(2000, "2s", 1)}, []string{"duration", "checkpoint-interval"},
			"checkpoint-interval", []int{0, 0, 1, 1}},
		{"two settings vary outside a sweep: points only",
			[]*sweep.StoredRun{run(1000, "500ms", 1), run(1000, "2s", 1), run(2000, "500ms", 1), run(2000, "2s", 1)}, nil,
			"", []int{-1, -1, -1, -1}},
		{"only the seed varies: replicates, points only",
			[]*sweep.StoredRun{run(1000, "1s", 1), run(1000, "1s", 2)}, nil,
			"", []int{-1, -1}},
		{"seeds are configurations of their own",
			[]*sweep.StoredRun{run(1000, "1s", 1), run(2000, "1s", 1), run(1000, "1s", 2), run(2000, "1s", 2)}, nil,
			"rate", []int{0, 0, 1, 1}},
		{"a configuration of one run is a point",
			[]*sweep.StoredRun{run(1000, "500ms", 1), run(2000, "500ms", 1), run(1000, "2s", 1)}, []string{"rate"},
			"rate", []int{0, 0, -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			param, lines := configLines(tc.runs, tc.swept)
			if param != tc.param || !slices.Equal(lines, tc.lines) {
				t.Errorf("got %q %v, want %q %v", param, lines, tc.param, tc.lines)
			}
		})
	}
}

// A line visits its runs in the order of the parameter it follows (500ms
// before 2s, 9000 before 10000), not in the order of backpressure.
func TestTimingLinesFollowTheParameter(t *testing.T) {
	runs := []*sweep.StoredRun{
		barrierRun(10000, "1s", map[string]int64{runtimeBackpressure + "split": 100}, 3),
		barrierRun(9000, "1s", map[string]int64{runtimeBackpressure + "split": 400}, 2),
		barrierRun(20000, "1s", map[string]int64{runtimeBackpressure + "split": 200}, 4),
	}
	var pts []timingPt
	for i, r := range runs {
		x, _, _ := backpressureOf(r)
		pts = append(pts, timingPt{x: x, y: float64(i), run: i})
	}
	lines, param := timingLines(runs, pts, nil)
	want := plotter.XYs{{X: 400, Y: 1}, {X: 100, Y: 0}, {X: 200, Y: 2}}
	if param != "rate" || len(lines) != 1 || !slices.Equal(lines[0], want) {
		t.Errorf("got %q %v, want rate %v", param, lines, want)
	}
}

// The alignment plot of a sweep reads the simulator's measure, and its
// title says which parameter the lines follow; older results fall back to
// the lag and say so.
func TestAlignmentPlotMeasuredBackpressure(t *testing.T) {
	var runs []*sweep.StoredRun
	for _, interval := range []string{"500ms", "2s"} {
		for i, rate := range []float64{1000, 2000, 3000} {
			bp := map[string]int64{runtimeBackpressure + "split": int64(300 * i), runtimeBackpressure + "source": int64(250 * i)}
			runs = append(runs, barrierRun(rate, interval, bp, float64(2+i)))
		}
	}
	labels := make([]string, len(runs))
	o := alignmentPlot(runs, labels, "rate", "checkpoint-interval")
	if o.png == nil {
		t.Fatalf("not drawn: %s", o.note)
	}
	checkBorder(t, "alignment", decodePNGBytes(t, "alignment", o.png))
	got := string(o.data.bytes())
	for _, want := range []string{",600," + runtimeBackpressure + "split,4,alignment_ms.mean", ",0," + allOperators + ",2,"} {
		if !strings.Contains(got, want) {
			t.Errorf("CSV lacks %q:\n%s", want, got)
		}
	}

	for i, r := range runs {
		r.Result.Counters = map[string]int64{}
		r.Series = []sweep.SeriesRow{{T: 0, Lag: float64(100 * (i + 1))}}
	}
	o = alignmentPlot(runs, labels)
	if o.png == nil || !strings.Contains(string(o.data.bytes()), lagKey) {
		t.Errorf("older results: not drawn on the source lag (%s)", o.note)
	}
}

// Labels of points close together stand one above the other, each once,
// the highest point's first; labels apart stay apart.
func TestStackLabels(t *testing.T) {
	in := plotter.XYLabels{
		XYs:    plotter.XYs{{X: 0, Y: 5}, {X: 0, Y: 5.5}, {X: 0.1, Y: 5.2}, {X: 0, Y: 1}, {X: 50, Y: 5}, {X: 0, Y: 4.9}},
		Labels: []string{"a", "b", "c", "d", "e", "b"},
	}
	out := stackLabels(in, 1, 1)
	want := plotter.XYLabels{XYs: plotter.XYs{{X: 0, Y: 5.5}, {X: 50, Y: 5}, {X: 0, Y: 1}}, Labels: []string{"b\nc\na", "e", "d"}}
	if !slices.Equal(out.XYs, want.XYs) || !slices.Equal(out.Labels, want.Labels) {
		t.Errorf("got %v %q, want %v %q", out.XYs, out.Labels, want.XYs, want.Labels)
	}
}

// A sweep's parameters are named as the runs' settings name them.
func TestSweptSettings(t *testing.T) {
	dir := t.TempDir()
	m := sweep.Manifest{Format: sweep.ManifestFormat, Params: []sweep.Param{
		{Name: "rate", Values: []string{"1", "2"}}, {Name: "sink", Values: []string{"2pc"}},
		{Name: "fault", Values: []string{"none", "crash"}}, {Name: "cost.net-latency", Values: []string{"1ms", "2ms"}},
		{Name: "cores", Values: []string{"2", "4"}},
	}}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, sweep.ManifestFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := sweptSettings(dir), []string{"rate", "faults", "cost net-latency", "cost cores"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := sweptSettings(t.TempDir()); got != nil {
		t.Errorf("no sweep: %q", got)
	}
}
