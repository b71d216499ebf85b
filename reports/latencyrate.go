package reports

import (
	"cmp"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"ftbench/capacity"
)

// LatencySeries is one system's capacity search, drawn as latency against
// offered rate: each probe is a point.
type LatencySeries struct {
	Name   string
	Probes []capacity.Probe
}

// minLatencyMS is where the log latency axis starts: a probe whose p99
// rounds to zero is drawn there rather than dropped.
const minLatencyMS = 0.1

// LatencyVsRateFile is the name WriteLatencyVsRate gives its PNG and CSV.
const LatencyVsRateFile = "latency-vs-rate"

// WriteLatencyVsRate draws each series' probes as p99 end-to-end latency
// (log scale) against the offered rate, one line per system through its
// probes in rate order, into dir/latency-vs-rate.png with the data as
// CSV: the latency-throughput trade-off of every system in one picture,
// read off the searches already run (bench chapter's capacity searches).
func WriteLatencyVsRate(dir, title string, series []LatencySeries) error {
	p := newPlot(title, "offered rate (records/s)", "p99 latency (ms, log scale)")
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.X.Tick.Marker = countTicks{}
	data := &table{header: []string{"series", "rate_rps", "p99_ms", "sustained"}}
	var legend []legendEntry
	for i, s := range series {
		probes := slices.Clone(s.Probes)
		slices.SortFunc(probes, func(a, b capacity.Probe) int { return cmp.Compare(a.RateRPS, b.RateRPS) })
		xys := make(plotter.XYs, len(probes))
		for k, pr := range probes {
			xys[k] = plotter.XY{X: pr.RateRPS, Y: math.Max(pr.P99MS, minLatencyMS)}
			data.add(s.Name, pr.RateRPS, pr.P99MS, pr.Sustained)
		}
		if len(xys) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		line.LineStyle, points.GlyphStyle = seriesStyle(i)
		p.Add(line, points)
		legend = append(legend, legendEntry{s.Name, markThumb{line.LineStyle, points.GlyphStyle}})
	}
	png, err := render([]*plot.Plot{p}, legend)
	if err != nil {
		return err
	}
	return writePlot(dir, LatencyVsRateFile, png, data)
}
