package reports

import (
	"bytes"
	stdimg "image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"ftbench/capacity"
	"ftbench/sweep"
)

// These tests look at the rendered pixels, as a reader does, not at the
// layout's idea of its boxes: a title, legend or tick label that runs off
// the canvas leaves ink on its edge; series drawn in one colour leave
// only that colour.

// borderPx is how far in from the canvas edge only background may be
// (the layout keeps a 10 pt = 13 px margin).
const borderPx = 8

// decodePNG reads and decodes the PNG written at path.
func decodePNG(t *testing.T, path string) stdimg.Image {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return decodePNGBytes(t, path, b)
}

// decodePNGBytes decodes a rendered PNG; name says which in a failure.
func decodePNGBytes(t *testing.T, name string, b []byte) stdimg.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return img
}

func isBackground(c color.Color) bool {
	r, g, b, _ := c.RGBA()
	return r == 0xffff && g == 0xffff && b == 0xffff
}

// checkBorder fails when any pixel within borderPx of the edge is not
// background: something (text, a legend, a line) touches or was cut by
// the edge.
func checkBorder(t *testing.T, name string, img stdimg.Image) {
	t.Helper()
	bd := img.Bounds()
	bad := 0
	var first stdimg.Point
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			if x >= bd.Min.X+borderPx && x < bd.Max.X-borderPx && y >= bd.Min.Y+borderPx && y < bd.Max.Y-borderPx {
				continue
			}
			if !isBackground(img.At(x, y)) {
				if bad == 0 {
					first = stdimg.Point{X: x, Y: y}
				}
				bad++
			}
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d non-background pixels within %d px of the edge (first at %v): something is cut by the edge", name, bad, borderPx, first)
	}
}

// countColor counts pixels of exactly colour c (line cores are drawn in
// the exact colour; antialiased edges blend).
func countColor(img stdimg.Image, c color.RGBA) int {
	n := 0
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if uint8(r>>8) == c.R && uint8(g>>8) == c.G && uint8(b>>8) == c.B {
				n++
			}
		}
	}
	return n
}

// Every PNG of the compare and sweep fixtures keeps its edges clear, and
// the time plots draw each of the six systems in its own colour.
func TestRenderedPixels(t *testing.T) {
	t.Parallel()
	_, out := generateFixture(t, "compare")
	_, sout := generateFixture(t, "sweep")
	pngs, _ := filepath.Glob(filepath.Join(out, "*.png"))
	spngs, _ := filepath.Glob(filepath.Join(sout, "*.png"))
	if len(pngs) != 4 || len(spngs) != 3 {
		t.Fatalf("plots %v %v", pngs, spngs)
	}
	imgs := map[string]stdimg.Image{}
	for _, p := range append(pngs, spngs...) {
		imgs[filepath.Base(p)] = decodePNG(t, p)
		checkBorder(t, p, imgs[filepath.Base(p)])
	}
	for _, name := range []string{"throughput.png", "latency.png"} {
		for i := 0; i < 6; i++ {
			if n := countColor(imgs[name], palette[i]); n < 100 {
				t.Errorf("%s: series %d's colour %v has %d pixels; each series needs its own visible colour", name, i, palette[i], n)
			}
		}
	}
	for _, name := range []string{"recovery-vs-param.png", "throughput-vs-param.png"} {
		for i := 0; i < 2; i++ {
			if n := countColor(imgs[name], palette[i]); n < 100 {
				t.Errorf("%s: series %d's colour has %d pixels", name, i, n)
			}
		}
	}
}

// Text far too long for the image — a title, legend entries, category
// labels — is wrapped or turned, never cut at the edge, and category
// labels do not run into each other.
func TestRenderLongText(t *testing.T) {
	long := strings.Repeat("checkpoint-interval=500ms sink=2pc aligned-checkpoint-timeout=100ms ", 6)
	p := newBarPlot("Left "+long+"Right", "count")
	names := make([]string, 12)
	vals := make(plotter.Values, 12)
	for i := range names {
		names[i] = "barrier/aligned-timeout checkpoint-interval=500ms sink=plain max-concurrent-checkpoints=1"
		vals[i] = float64(i)
	}
	bars, err := plotter.NewBarChart(vals, 10)
	if err != nil {
		t.Fatal(err)
	}
	p.Add(bars)
	categoryLabels(p, names)
	legend := []legendEntry{{long, lineThumb{}}, {"short", lineThumb{}}, {strings.ReplaceAll(long, " ", "_"), lineThumb{}}}
	b, err := render([]*plot.Plot{p}, legend)
	if err != nil {
		t.Fatal(err)
	}
	img := decodePNGBytes(t, "long text", b)
	checkBorder(t, "long text", img)
	if p.X.Tick.Label.Rotation == 0 {
		t.Errorf("12 long category labels were not turned: they would overlap")
	}
	if !strings.Contains(p.Title.Text, "\n") {
		t.Errorf("a long title was not wrapped")
	}
}

// The overhead plots, when they have something to relate (two runs of a
// variant at different backpressure, two runs reporting acks), and the
// capacity bars keep their edges clear and label their points.
func TestOverheadAndCapacityPixels(t *testing.T) {
	var runs []*sweep.StoredRun
	for i, bp := range []float64{55, 120} {
		for _, f := range []fixtureRun{fixtureRuns()[3], fixtureRuns()[4]} {
			r := storedOf(f.outcome().Result)
			r.Result.Config.SystemOpts = map[string]string{"checkpoint-interval": []string{"1s", "2s"}[i]}
			sm := map[string]any{"backpressure_ms": bp, "alignment_ms": 10.0 + bp/10}
			r.Result.SystemMetrics = sm
			runs = append(runs, r)
		}
	}
	labels := make([]string, len(runs))
	o := alignmentPlot(runs, labels)
	if o.png == nil {
		t.Fatalf("alignment plot not drawn: %s", o.note)
	}
	img := decodePNGBytes(t, "alignment", o.png)
	checkBorder(t, "alignment", img)
	for i := 0; i < 2; i++ {
		if n := countColor(img, palette[i]); n < 50 {
			t.Errorf("alignment: series %d's colour has %d pixels", i, n)
		}
	}

	a, b := storedOf(fixtureRuns()[1].outcome().Result), storedOf(fixtureRuns()[1].outcome().Result)
	b.Result.Config.SystemOpts = map[string]string{"ackers": "1"}
	b.Result.SystemMetrics = map[string]any{"ack_messages": 60000.0}
	g := groupRuns([]*sweep.StoredRun{a, b})[0]
	o = acksPlot(g)
	if o.png == nil {
		t.Fatalf("acks plot not drawn: %s", o.note)
	}
	checkBorder(t, "acks", decodePNGBytes(t, "acks", o.png))

	f := func(x float64) *float64 { return &x }
	var sys []*capacity.Result
	for _, s := range []string{"none", "stormack", "lineage", "barrier", "snapshot"} {
		sys = append(sys, &capacity.Result{System: s, Variant: "a-long-variant-name", Workload: "grep", CapacityRPS: f(1e6), OverloadedAtRPS: 1.1e6})
	}
	pb, _, err := capacityPlot(&capacity.Comparison{Systems: sys})
	if err != nil {
		t.Fatal(err)
	}
	checkBorder(t, "capacity", decodePNGBytes(t, "capacity", pb))
}

// The start-delay plot draws each variant's p50 and max per run, read from
// checkpoint_start_delay_ms, and its CSV holds exactly those values.
func TestStartDelayPlot(t *testing.T) {
	var runs []*sweep.StoredRun
	for i, bp := range []float64{55, 120} {
		r := storedOf(fixtureRuns()[3].outcome().Result)
		r.Result.Config.SystemOpts = map[string]string{"checkpoint-interval": []string{"1s", "2s"}[i]}
		r.Result.SystemMetrics = map[string]any{"backpressure_ms": bp,
			"checkpoint_start_delay_ms": map[string]any{"n": 40.0, "p50": 1 + bp/100, "max": 10 * bp, "mean": 2.0}}
		runs = append(runs, r)
	}
	o := startDelayPlot(runs, []string{"a", "b"})
	if o.png == nil {
		t.Fatalf("start delay plot not drawn: %s", o.note)
	}
	checkBorder(t, "start delay", decodePNGBytes(t, "start delay", o.png))
	got := string(o.data.bytes())
	for _, want := range []string{",a,55,backpressure_ms,1.55,checkpoint_start_delay_ms.p50", ",b,120,backpressure_ms,1200,checkpoint_start_delay_ms.max"} {
		if !strings.Contains(got, want) {
			t.Errorf("CSV lacks %q:\n%s", want, got)
		}
	}
	if o := startDelayPlot(runs[:0], nil); o.png != nil || !strings.Contains(o.note, "no run reports a checkpoint start delay") {
		t.Errorf("no runs: note %q", o.note)
	}
}

// Runs of several scenarios on one plot are told apart by the scenario
// settings that differ, and only those: two 2PC runs at different rates
// must not both read "sink=2pc".
func TestScenarioDiffs(t *testing.T) {
	run := func(rate float64, faults ...string) *sweep.StoredRun {
		r := storedOf(fixtureRuns()[3].outcome().Result)
		r.Result.Config.RateRPS = rate
		r.Result.Faults = faults
		return r
	}
	seed2 := run(1000, "crash")
	seed2.Result.Seed++
	for _, tc := range []struct {
		name   string
		runs   []*sweep.StoredRun
		names  []string
		labels [][]string
	}{
		{"one scenario", []*sweep.StoredRun{run(1000, "crash"), run(1000, "crash")}, nil, [][]string{nil, nil}},
		// Seeds are replicates: their points are labelled alike.
		{"seeds differ", []*sweep.StoredRun{run(1000, "crash"), seed2}, nil, [][]string{nil, nil}},
		{"rates differ", []*sweep.StoredRun{run(1000, "crash"), run(60000, "crash")}, []string{"rate"},
			[][]string{{"rate=1000"}, {"rate=60000"}}},
		{"rates and faults differ", []*sweep.StoredRun{run(1000, "crash"), run(2000), run(1000, "crash")}, []string{"faults", "rate"},
			[][]string{{"faults=crash", "rate=1000"}, {"rate=2000"}, {"faults=crash", "rate=1000"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			names, labels := scenarioDiffs(tc.runs)
			if !slices.Equal(names, tc.names) {
				t.Errorf("names %q, want %q", names, tc.names)
			}
			for i := range tc.labels {
				if !slices.Equal(labels[i], tc.labels[i]) {
					t.Errorf("run %d: label %q, want %q", i, labels[i], tc.labels[i])
				}
			}
		})
	}
}

// A label is drawn once for the points of one label at about the same x,
// above the highest of them, and not again for a later series that has
// it there; the same label elsewhere is drawn again.
func TestLabelHighest(t *testing.T) {
	for _, tc := range []struct {
		name   string
		xys    plotter.XYs
		labels []string
		placed []placedLabel
		want   []string
	}{
		{"replicates at one x: the highest", plotter.XYs{{X: 1, Y: 3.5}, {X: 1, Y: 4.3}}, []string{"1s", "1s"}, nil, []string{"", "1s"}},
		{"all but on top of each other", plotter.XYs{{X: 2, Y: 5.0}, {X: 2.01, Y: 4.9}}, []string{"2s", "2s"}, nil, []string{"2s", ""}},
		{"the same label elsewhere", plotter.XYs{{X: 1, Y: 1}, {X: 3, Y: 1}}, []string{"1s", "1s"}, nil, []string{"1s", "1s"}},
		{"different labels at one x", plotter.XYs{{X: 1, Y: 1}, {X: 1, Y: 2}}, []string{"1s", "2s"}, nil, []string{"1s", "2s"}},
		{"drawn by an earlier series", plotter.XYs{{X: 1, Y: 9}}, []string{"1s"}, []placedLabel{{1.05, "1s"}}, []string{""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			labels := slices.Clone(tc.labels)
			placed := labelHighest(tc.xys, labels, tc.placed, 0.1)
			if !slices.Equal(labels, tc.want) {
				t.Errorf("labels %q, want %q", labels, tc.want)
			}
			drawn := 0
			for _, l := range tc.want {
				if l != "" {
					drawn++
				}
			}
			if len(placed) != len(tc.placed)+drawn {
				t.Errorf("placed %v: want the earlier ones and this series' %d", placed, drawn)
			}
		})
	}
}
