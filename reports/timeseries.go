package reports

import (
	"image/color"
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

// timeRange is the x range of a group's time plots: the input plus the
// longest recovery of any run (a fault's time plus its recovery time), and
// the fault bands, with a small margin. The quiet rest of a drain (nothing
// left to commit, or lost records that never come) is cut, so one system's
// long drain does not squeeze the others' recoveries into a corner.
func timeRange(g *group) float64 {
	end := 0.0
	for _, r := range g.Runs {
		end = math.Max(end, r.Result.Config.DurationS)
		for _, rec := range r.Result.Recoveries {
			if rec.RecoveryTimeS != nil {
				end = math.Max(end, rec.AtS+*rec.RecoveryTimeS)
			}
		}
	}
	for _, b := range g.Bands {
		end = math.Max(end, b.End)
	}
	return math.Max(end*1.03, 1)
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

// bursty reports whether a run's sink commits in bursts, once per commit
// cycle longer than a bucket and a half (run.json commit_cycle_s; for
// results written without it, when the median gap between commits is). A
// shorter cycle (kstreams' 100 ms exactly-once commit interval) commits in
// nearly every bucket, so its bursts run together and steps from one to
// the next would span seconds: it is drawn as continuous output.
func bursty(r *sweep.StoredRun) bool {
	if c := r.Result.Config.CommitCycleS; c > 0 {
		return c > 1.5*r.Result.Config.BucketS
	}
	return commitPeriod(r) > 1.5*r.Result.Config.BucketS
}

// rateSteps is a run's committed rate (input records/s) over time as
// steps: step i spans [starts[i], starts[i]+lens[i]) seconds. A sink that
// commits in bursts (micro-batches, a two-phase-commit sink) gets one step
// per commit period, from the end of one burst (a run of buckets with
// commits) to the end of the next, at the next burst's size over that
// time: a steady system reads as a flat rate, a late commit as a longer,
// lower step, never as a spike of two commits falling into one window or
// a gap of none. A continuous sink gets 1 s steps.
func rateSteps(r *sweep.StoredRun) (starts, lens, rates []float64) {
	b, k := r.Result.Config.BucketS, recordsPerEffect(r.Result)
	if b <= 0 || len(r.Series) == 0 {
		return nil, nil, nil
	}
	step := func(from, to, effects float64) {
		if to > from {
			starts, lens, rates = append(starts, from), append(lens, to-from), append(rates, effects*k/(to-from))
		}
	}
	if !bursty(r) {
		n := max(1, int(math.Round(1/b)))
		for lo := 0; lo < len(r.Series); lo += n {
			hi := min(lo+n, len(r.Series))
			sum := 0.0
			for j := lo; j < hi; j++ {
				sum += r.Series[j].Committed
			}
			step(r.Series[lo].T, r.Series[hi-1].T+b, sum)
		}
		return starts, lens, rates
	}
	prev, sum := 0.0, 0.0
	for j, row := range r.Series {
		sum += row.Committed
		last := j+1 == len(r.Series)
		if row.Committed > 0 && (last || r.Series[j+1].Committed == 0) {
			step(prev, row.T+b, sum) // a burst ends here
			prev, sum = row.T+b, 0
		} else if last {
			step(prev, row.T+b, sum) // nothing after the last burst
		}
	}
	return starts, lens, rates
}

// throughputPlot draws, over the fault bands, what each run committed: on
// top the cumulative committed output (in input records) against the
// appended input, whose vertical distance is the lag — a stall is a flat
// stretch, a recovery the climb back to the input line, a loss a line that
// ends below it, duplicates one that ends above it —; below, the committed
// rate per commit period (rateSteps) drawn as steps. Neither is smoothed.
// The CSV has, per bucket, the raw rate, the cumulative committed records,
// and the window holding the bucket with its rate.
func throughputPlot(g *group) ([]byte, *table, error) {
	top := newPlot("Committed output vs appended input — "+g.Title, "simulated time (s)", "input records (cumulative)")
	bottom := newPlot("Committed rate: per commit period (from one commit to the next), per second for continuous sinks", "simulated time (s)", "committed (input records/s)")
	top.Add(bandPlotter{bands: g.Bands, labels: true})
	bottom.Add(bandPlotter{bands: g.Bands})
	data := &table{header: []string{"series", "t_s", "throughput_rps", "committed_records", "window_start_s", "window_s", "window_rps"}}
	xmax := timeRange(g)
	var legend []legendEntry
	ymax, rmax := 0.0, 0.0
	// The appended input: the rate until the input ends (every run of a
	// group shares workload, rate and duration).
	c0 := g.Runs[0].Result.Config
	appended := float64(g.Runs[0].Result.AppendedRecords)
	if appended <= 0 {
		appended = c0.RateRPS * c0.DurationS
	}
	inStyle := draw.LineStyle{Color: color.RGBA{R: 110, G: 110, B: 110, A: 255}, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(6), vg.Points(4)}}
	if in, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: c0.DurationS, Y: appended}, {X: xmax, Y: appended}}); err == nil {
		in.LineStyle = inStyle
		top.Add(in)
	}
	ymax = appended
	for i, r := range g.Runs {
		k := recordsPerEffect(r.Result)
		line, glyph := styleOf(g.Colors[i], g.Marks[i], g.Shared)
		line.Width = overlapWidth(i, len(g.Runs))
		starts, lens, rates := rateSteps(r)
		w := 0
		cum := plotter.XYs{{X: 0, Y: 0}}
		total := 0.0
		for _, row := range r.Series {
			total += row.Committed * k
			for w+1 < len(starts) && row.T >= starts[w+1]-1e-9 {
				w++
			}
			data.add(g.Labels[i], row.T, row.CommittedPerS*k, round6(total), starts[w], round6(lens[w]), round6(rates[w]))
			if row.T < xmax {
				cum = append(cum, plotter.XY{X: math.Min(row.T+r.Result.Config.BucketS, xmax), Y: total})
			}
		}
		// After its last bucket a run commits nothing more: its total
		// stays where it is.
		if last := cum[len(cum)-1]; last.X < xmax {
			cum = append(cum, plotter.XY{X: xmax, Y: last.Y})
		}
		ymax = math.Max(ymax, total)
		if l, err := plotter.NewLine(cum); err == nil {
			l.LineStyle = line
			top.Add(l)
		}
		top.Add(sparseMarks(cum, i, len(g.Runs), xmax, glyph))
		var steps plotter.XYs
		for j := range starts {
			if starts[j] >= xmax {
				break
			}
			steps = append(steps, plotter.XY{X: starts[j], Y: rates[j]}, plotter.XY{X: math.Min(starts[j]+lens[j], xmax), Y: rates[j]})
			rmax = math.Max(rmax, rates[j])
		}
		if l, err := plotter.NewLine(steps); err == nil && len(steps) > 0 {
			l.LineStyle = line
			bottom.Add(l)
		}
		bottom.Add(sparseMarks(steps, i, len(g.Runs), xmax, glyph))
		legend = append(legend, legendEntry{g.Labels[i], markThumb{line, glyph}})
	}
	legend = append(legend, legendEntry{"appended input", lineThumb{inStyle}})
	for _, p := range []*plot.Plot{top, bottom} {
		p.X.Min, p.X.Max = 0, xmax
		p.X.Tick.Marker = timeTicks{}
		p.Y.Min = 0
		p.Y.Tick.Marker = countTicks{}
	}
	top.Y.Max = math.Max(1, ymax) * headroom
	bottom.Y.Max = math.Max(1, rmax) * headroom
	sayIfAllZero(bottom, []float64{rmax}, "no run committed anything")
	legend = addBandLegend(legend, g.Bands)
	png, err := render([]*plot.Plot{top, bottom}, legend)
	return png, data, err
}

// sparseMarks puts series i's marker (of n series) on its line at a few
// evenly spaced times (on the first data point at or after each), staggered between series so that markers of lines
// drawn on top of each other do not coincide: lines then differ by shape,
// not only by colour.
func sparseMarks(xys plotter.XYs, i, n int, xmax float64, glyph draw.GlyphStyle) plot.Plotter {
	const marks = 8
	var pts plotter.XYs
	for m := 0; m < marks && len(xys) > 0; m++ {
		x := xmax * (float64(m) + (float64(i)+0.5)/float64(max(n, 1))) / marks
		j := sort.Search(len(xys), func(j int) bool { return xys[j].X >= x })
		if j == len(xys) {
			continue
		}
		// On a data point, never between two: a line may have a gap.
		pts = append(pts, xys[j])
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil || len(pts) == 0 {
		return plotter.NewGrid() // nothing to mark
	}
	sc.GlyphStyle = glyph
	return sc
}

// latencyPlot draws end-to-end latency p50 (top) and p99 (bottom) of each
// bucket's commits over time on log axes; buckets without commits are gaps.
func latencyPlot(g *group) ([]byte, *table, error) {
	// The unit goes into the titles, not a y label: gonum places a y
	// label at the arithmetic middle of a log axis, near its top, and
	// pads the plot for it, which left a wide empty band under the title.
	p50 := newPlot("End-to-end latency p50 (ms, log scale) — "+g.Title, "simulated time (s)", "")
	p99 := newPlot("End-to-end latency p99 (ms, log scale)", "simulated time (s)", "")
	// Only buckets with commits have a latency.
	p50.Add(bandPlotter{bands: g.Bands, labels: true})
	p99.Add(bandPlotter{bands: g.Bands})
	data := &table{header: []string{"series", "t_s", "latency_p50_ms", "latency_p99_ms"}}
	var legend []legendEntry
	lo, hi := math.Inf(1), 0.0
	xmax := timeRange(g)
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
		line, glyph := styleOf(g.Colors[i], g.Marks[i], g.Shared)
		line.Width = overlapWidth(i, len(g.Runs))
		dot := glyph
		dot.Radius = vg.Points(1.5)
		p50.Add(gapLines(xs, y50, gap, line, dot)...)
		p99.Add(gapLines(xs, y99, gap, line, dot)...)
		p50.Add(sparseMarks(logXYs(xs, y50), i, len(g.Runs), xmax, glyph))
		p99.Add(sparseMarks(logXYs(xs, y99), i, len(g.Runs), xmax, glyph))
		legend = append(legend, legendEntry{g.Labels[i], markThumb{line, glyph}})
	}
	if math.IsInf(lo, 1) {
		lo, hi = 0.1, 1
	}
	for _, p := range []*plot.Plot{p50, p99} {
		p.X.Min, p.X.Max = 0, xmax
		p.X.Tick.Marker = timeTicks{}
		// A log axis from half the lowest value to 4x the highest: the
		// top is headroom for the band labels.
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = inRange{plot.LogTicks{Prec: -1}}
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

// logXYs pairs xs and ys for sparseMarks.
func logXYs(xs, ys []float64) plotter.XYs {
	out := make(plotter.XYs, len(xs))
	for i := range xs {
		out[i] = plotter.XY{X: xs[i], Y: ys[i]}
	}
	return out
}

// overlapRadius shrinks each later series' markers, like overlapWidth.
func overlapRadius(i, n int) vg.Length {
	if n <= 1 {
		return vg.Points(4.5)
	}
	return vg.Points(7 - 4*float64(i)/float64(n-1))
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
