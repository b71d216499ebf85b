package reports

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"ftbench/harness"
	"ftbench/sweep"
)

// recordsPerEffect converts the time series' committed effects to input
// records, the unit of --rate and run.json's throughput_rps.
func recordsPerEffect(r *harness.Result) float64 {
	if r.ExpectedEffects > 0 && r.AppendedRecords > 0 {
		return float64(r.AppendedRecords) / float64(r.ExpectedEffects)
	}
	return 1
}

// timeRange is the x range of a group's time plots: from 0 to the last
// bucket with a commit (or the end of the input, if later) plus a margin;
// the quiet rest of a drain that never completes (lost records) is cut.
func timeRange(g *group) float64 {
	end := 0.0
	for _, r := range g.Runs {
		end = math.Max(end, r.Result.Config.DurationS)
		for _, row := range r.Series {
			if row.Committed > 0 {
				end = math.Max(end, row.T+r.Result.Config.BucketS)
			}
		}
	}
	for _, b := range g.Bands {
		end = math.Max(end, b.End)
	}
	return math.Max(end*1.05, 1)
}

// commitPeriod estimates how often a run commits in steady state: the
// median gap between buckets with commits before the first fault (or the
// end of the input). Record-at-a-time systems commit every bucket;
// micro-batches and two-phase-commit sinks commit in bursts, once per
// batch or checkpoint.
func commitPeriod(r *sweep.StoredRun) float64 {
	end := r.Result.Config.DurationS
	for _, rec := range r.Result.Recoveries {
		end = math.Min(end, rec.AtS)
	}
	var gaps []float64
	last := -1.0
	for _, row := range r.Series {
		if row.T >= end {
			break
		}
		if row.Committed > 0 {
			if last >= 0 {
				gaps = append(gaps, row.T-last)
			}
			last = row.T
		}
	}
	if len(gaps) == 0 {
		return r.Result.Config.BucketS
	}
	sort.Float64s(gaps)
	return gaps[len(gaps)/2]
}

// smoothingWindow is the moving-average window of a run's throughput
// line: the smallest whole number of its commit periods that is at least
// 1 s. A system that commits in bursts (micro-batches, a 2PC sink) then has
// the same number of bursts in every window and reads as a rate, not as
// spikes; a record-at-a-time system gets 1 s.
func smoothingWindow(r *sweep.StoredRun) float64 {
	p := math.Max(commitPeriod(r), r.Result.Config.BucketS)
	return math.Round(p*math.Ceil(1/p-1e-9)*1000) / 1000
}

// movingAverage is the mean of per-bucket rates over a window of n
// buckets around each bucket ([i-n/2, i+n-n/2-1], so an even n is exact),
// shrinking at the series' ends.
func movingAverage(ys []float64, n int) []float64 {
	n = max(n, 1)
	out := make([]float64, len(ys))
	for i := range ys {
		lo, hi := max(0, i-n/2), min(len(ys)-1, i+n-n/2-1)
		sum := 0.0
		for j := lo; j <= hi; j++ {
			sum += ys[j]
		}
		out[i] = sum / float64(hi-lo+1)
	}
	return out
}

// throughputPlot draws committed input records/s over time, one line per
// run, as a moving average (the CSV also has each bucket's raw rate), over
// the fault bands.
func throughputPlot(g *group) ([]byte, *table, error) {
	windows := map[float64]bool{}
	for _, r := range g.Runs {
		windows[smoothingWindow(r)] = true
	}
	ylabel := "throughput (input records/s, moving average over each system's commit period, >= 1 s)"
	if len(windows) == 1 {
		for w := range windows {
			ylabel = fmt.Sprintf("throughput (input records/s, %g s moving average)", w)
		}
	}
	p := newPlot("Throughput — "+g.Title, "simulated time (s)", ylabel)
	p.Add(bandPlotter{bands: g.Bands, labels: true})
	data := &table{header: []string{"series", "t_s", "throughput_rps", "window_s", "throughput_rps_smoothed"}}
	st := newStyler()
	var legend []legendEntry
	ymax := 0.0
	for i, r := range g.Runs {
		k := recordsPerEffect(r.Result)
		xs, raw := make([]float64, len(r.Series)), make([]float64, len(r.Series))
		for j, row := range r.Series {
			xs[j], raw[j] = row.T, row.CommittedPerS*k
		}
		window := smoothingWindow(r)
		ys := movingAverage(raw, int(math.Round(window/r.Result.Config.BucketS)))
		for j := range ys {
			ymax = math.Max(ymax, ys[j])
			data.add(g.Labels[i], xs[j], raw[j], window, round6(ys[j]))
		}
		style := st.line(r.Result.System)
		style.Width = overlapWidth(i, len(g.Runs))
		style.Dashes, style.DashOffs = overlapDashes(i)
		p.Add(segmentLines(xs, ys, style)...)
		legend = append(legend, legendEntry{g.Labels[i], lineThumb{style}})
	}
	p.X.Min, p.X.Max = 0, timeRange(g)
	p.Y.Min, p.Y.Max = 0, math.Max(1, ymax)*headroom
	p.Y.Tick.Marker = countTicks{}
	legend = addBandLegend(legend, g.Bands)
	png, err := render([]*plot.Plot{p}, legend)
	return png, data, err
}

// latencyPlot draws end-to-end latency p50 (top) and p99 (bottom) of each
// bucket's commits over time on log axes; buckets without commits are gaps.
func latencyPlot(g *group) ([]byte, *table, error) {
	p50 := newPlot("End-to-end latency p50 — "+g.Title, "simulated time (s)", "latency p50 (ms, log scale)")
	p99 := newPlot("End-to-end latency p99", "simulated time (s)", "latency p99 (ms, log scale)")
	// Only buckets with commits have a latency.
	p50.Add(bandPlotter{bands: g.Bands, labels: true})
	p99.Add(bandPlotter{bands: g.Bands})
	data := &table{header: []string{"series", "t_s", "latency_p50_ms", "latency_p99_ms"}}
	st := newStyler()
	var legend []legendEntry
	lo, hi := math.Inf(1), 0.0
	for i, r := range g.Runs {
		var xs, y50, y99 []float64
		for _, row := range r.Series {
			if row.Committed > 0 && row.P50 > 0 && row.P99 > 0 {
				xs, y50, y99 = append(xs, row.T), append(y50, row.P50), append(y99, row.P99)
				lo, hi = math.Min(lo, row.P50), math.Max(hi, row.P99)
				data.add(g.Labels[i], row.T, row.P50, row.P99)
			}
		}
		// Points are connected from commit to commit, so a system that
		// commits in bursts still draws a line; a pause longer than twice
		// its usual commit period (an outage) is a gap.
		gap := 2*commitPeriod(r) + 1e-9
		line, glyph := st.lineAndGlyph(r.Result.System)
		line.Width = overlapWidth(i, len(g.Runs))
		line.Dashes, line.DashOffs = overlapDashes(i)
		glyph.Radius = vg.Points(1.5)
		p50.Add(gapLines(xs, y50, gap, line, glyph)...)
		p99.Add(gapLines(xs, y99, gap, line, glyph)...)
		legend = append(legend, legendEntry{g.Labels[i], lineThumb{line}})
	}
	if math.IsInf(lo, 1) {
		lo, hi = 0.1, 1
	}
	for _, p := range []*plot.Plot{p50, p99} {
		p.X.Min, p.X.Max = 0, timeRange(g)
		// A log axis from half the lowest value to 4x the highest: the
		// top is headroom for the band labels.
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Y.Min, p.Y.Max = lo/2, hi*4
	}
	legend = addBandLegend(legend, g.Bands)
	png, err := render([]*plot.Plot{p50, p99}, legend)
	return png, data, err
}

// gapLines draws points joined by lines, broken where consecutive points
// are more than gap apart; isolated points still show as markers.
func gapLines(xs, ys []float64, gap float64, line draw.LineStyle, glyph draw.GlyphStyle) []plot.Plotter {
	var out []plot.Plotter
	start := 0
	for i := 1; i <= len(xs); i++ {
		if i < len(xs) && xs[i]-xs[i-1] <= gap {
			continue
		}
		seg := make(plotter.XYs, 0, i-start)
		for j := start; j < i; j++ {
			seg = append(seg, plotter.XY{X: xs[j], Y: ys[j]})
		}
		if len(seg) == 1 {
			if sc, err := plotter.NewScatter(seg); err == nil {
				sc.GlyphStyle = glyph
				out = append(out, sc)
			}
		} else if l, err := plotter.NewLine(seg); err == nil {
			l.LineStyle = line
			out = append(out, l)
		}
		start = i
	}
	return out
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// overlapDashes gives every line after the first three a dash pattern,
// shifted by half a period from one line to the next, so two lines drawn
// exactly on top of each other (barrier and snapshot often commit alike)
// alternate their colours along the line.
func overlapDashes(i int) ([]vg.Length, vg.Length) {
	if i < 3 {
		return nil, 0
	}
	return []vg.Length{vg.Points(6), vg.Points(6)}, vg.Points(6 * float64(i%2))
}

// overlapWidth narrows each later line of a plot, so that lines drawn on
// top of identical ones (two systems at the same rate) leave the earlier
// ones visible as a border.
func overlapWidth(i, n int) vg.Length {
	if n <= 1 {
		return vg.Points(2)
	}
	return vg.Points(4.5 - 3*float64(i)/float64(n-1))
}
