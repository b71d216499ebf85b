package reports

import (
	"bytes"
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"ftbench/capacity"
	"ftbench/workloads"
)

// CapacityFile is the capacity.json of bench capacity or bench compare
// --capacity, drawn as bars when a reported folder holds one.
const CapacityFile = "capacity.json"

// capacityPlot draws one bar per system: the highest offered rate it
// sustains (records/s), labelled with the rate and, when none was searched
// too, the ratio to none's (what fault tolerance costs in capacity). A
// system overloaded at every probed rate has no bar and says so.
func capacityPlot(c *capacity.Comparison) ([]byte, *table, error) {
	title := "Capacity: highest sustained offered rate (lag growth < 1% of the rate"
	if len(c.Systems) > 0 && c.Systems[0].Criterion.LatencyBoundMS != nil {
		title += fmt.Sprintf(", p99 <= %g ms", *c.Systems[0].Criterion.LatencyBoundMS)
	}
	title += ")"
	inputs, shared := capacityInputs(c)
	if shared != "" {
		title += " on " + shared
	}
	p := newBarPlot(title, "records/s")
	data := &table{header: []string{"series", "workload", "capacity_rps", "overloaded_at_rps", "ratio_to_none", "probes", "probe_duration_s", "latency_bound_ms"}}
	n := len(c.Systems)
	names := make([]string, n)
	vals := make(plotter.Values, n)
	labels := make([]string, n)
	xys := make(plotter.XYs, n)
	ymax := 0.0
	for i, r := range c.Systems {
		series := r.System + "/" + r.Variant
		ratio := c.Ratio(r)
		names[i] = series
		if shared == "" {
			names[i] += "\n" + inputs[i]
		}
		labels[i] = "overloaded at every probe"
		if r.CapacityRPS != nil {
			vals[i] = *r.CapacityRPS
			labels[i] = fmt.Sprintf("%.0f", *r.CapacityRPS)
			if ratio != nil {
				labels[i] += fmt.Sprintf("\n%.3f x none", *ratio)
			}
		}
		ymax = math.Max(ymax, vals[i])
		xys[i] = plotter.XY{X: float64(i), Y: vals[i]}
		data.add(series, r.Workload, r.CapacityRPS, r.OverloadedAtRPS, ratio, len(r.Probes), r.ProbeDurationS, r.Criterion.LatencyBoundMS)
	}
	slot := (imageWidth * 0.9) / vg.Length(max(n, 1))
	bars, err := plotter.NewBarChart(vals, min(vg.Points(80), slot*0.6))
	if err != nil {
		return nil, nil, err
	}
	bars.Color = palette[0]
	bars.LineStyle.Width = 0
	p.Add(bars)
	lab, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
	if err != nil {
		return nil, nil, err
	}
	for i := range lab.TextStyle {
		lab.TextStyle[i].XAlign = draw.XCenter
		lab.TextStyle[i].Font.Size = vg.Points(10)
	}
	lab.Offset = vg.Point{Y: vg.Points(4)}
	p.Add(lab)
	categoryLabels(p, names)
	p.X.Min, p.X.Max = -0.6, float64(n)-0.4
	p.Y.Min, p.Y.Max = 0, math.Max(1, ymax)*1.2
	p.Y.Tick.Marker = countTicks{}
	png, err := render([]*plot.Plot{p}, nil)
	return png, data, err
}

// capacityTable is summary.md's capacity section.
func capacityTable(b *bytes.Buffer, c *capacity.Comparison) {
	fmt.Fprintf(b, "| system | workload | capacity (records/s) | overloaded at (records/s) | vs none | probes | probe duration (s) |\n|---|---|---:|---:|---:|---:|---:|\n")
	for _, r := range c.Systems {
		capStr, ratio := "none (overloaded at every probe)", "—"
		if r.CapacityRPS != nil {
			capStr = fmt.Sprintf("%.0f", *r.CapacityRPS)
		}
		if x := c.Ratio(r); x != nil {
			ratio = fmt.Sprintf("%.3f", *x)
		}
		fmt.Fprintf(b, "| %s/%s | %s | %s | %.0f | %s | %d | %g |\n", r.System, r.Variant, r.Workload, capStr, r.OverloadedAtRPS, ratio, len(r.Probes), r.ProbeDurationS)
	}
	fmt.Fprintf(b, "\nCapacity is the highest probed rate whose source lag grew by less than 1%% of the rate per second"+
		" (and, with a latency bound, whose p99 was within it); the next probe above, `overloaded at`, was not: the capacity lies between, within 2%%. ")
	if c.Command != "" {
		fmt.Fprintf(b, "From `%s`.", c.Command)
	}
	fmt.Fprintf(b, "\n\n")
}

// capacityInputs names the input each system was probed on, its workload
// and record size: a rate in records/s means little without the records.
// shared is the one input of every system, for the title ("" when they
// differ: each bar then names its own).
func capacityInputs(c *capacity.Comparison) (inputs []string, shared string) {
	for _, r := range c.Systems {
		inputs = append(inputs, r.Workload+" ("+recordSizes(r.Workload, r.Config.WorkloadOpts)+")")
	}
	for _, in := range inputs {
		if in != inputs[0] {
			return inputs, ""
		}
	}
	if len(inputs) > 0 {
		shared = inputs[0]
	}
	return inputs, shared
}

// recordSamples is how many records of a workload's log recordSizes reads:
// enough that the mean of sizes drawn per record is within a tenth of a
// byte.
const recordSamples = 1 << 16

// recordSizes describes the size of a workload's input records in words:
// "100 B records" when every record has one size (grep's --record-size,
// bank's transfers), else their range and mean ("records of 9-45 B, mean
// 27 B": wordcount's lines of 1-5 words). Sizes are a pure function of the
// log, read from the first records of its first partition (seed 0: the
// distribution of sizes does not depend on the seed); "record size
// unknown" for a workload this build does not have.
func recordSizes(workload string, opts map[string]string) string {
	w, err := workloads.New(workload, 0, opts)
	if err != nil {
		return "record size unknown"
	}
	lo, hi, sum := int32(math.MaxInt32), int32(0), 0.0
	for off := int64(0); off < recordSamples; off++ {
		size := w.Record(0, off).Size
		lo, hi, sum = min(lo, size), max(hi, size), sum+float64(size)
	}
	if lo == hi {
		return fmt.Sprintf("%d B records", lo)
	}
	return fmt.Sprintf("records of %d–%d B, mean %.0f B", lo, hi, sum/recordSamples)
}
