package reports

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"ftbench/sweep"
)

// curveMetrics are drawn against the swept parameter, when a sweep has one.
var curveMetrics = []struct {
	key, file, title, unit string
}{
	{"recovery_time_s", "recovery-vs-param", "Recovery time", "recovery time (s)"},
	{"throughput_rps", "throughput-vs-param", "Steady-state throughput", "throughput (input records/s)"},
	{"latency_p99_ms", "latency-p99-vs-param", "End-to-end latency p99", "latency p99 (ms)"},
}

// xAxis maps a parameter's values to plot positions: seconds for
// durations, the number for numbers, else evenly spaced categories.
type xAxis struct {
	name   string
	label  string
	pos    map[string]float64
	nomina []string // category labels, when categorical
}

func newXAxis(p sweep.Param) xAxis {
	ax := xAxis{name: p.Name, pos: map[string]float64{}}
	durations, numbers := true, true
	for _, v := range p.Values {
		if d, err := time.ParseDuration(v); err != nil {
			durations = false
		} else {
			ax.pos[v] = d.Seconds()
		}
	}
	if durations {
		ax.label = p.Name + " (s)"
		return ax
	}
	for _, v := range p.Values {
		f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
		if err != nil {
			numbers = false
			break
		}
		ax.pos[v] = f
	}
	if numbers {
		ax.label = p.Name
		if p.Name == "rate" {
			ax.label = "rate (input records/s)"
		}
		return ax
	}
	ax.label = p.Name
	for i, v := range p.Values {
		ax.pos[v] = float64(i)
		ax.nomina = append(ax.nomina, v)
	}
	return ax
}

// sweptParam picks the x-axis parameter: the first with several values.
func sweptParam(c *sweep.Curve) (sweep.Param, bool) {
	for _, p := range c.Params {
		if len(p.Values) > 1 {
			return p, true
		}
	}
	return sweep.Param{}, false
}

// errPoints are medians with min..max error bars.
type errPoints struct {
	plotter.XYs
	lo, hi []float64
}

func (e errPoints) YError(i int) (float64, float64) { return e.lo[i], e.hi[i] }

// curvePlot draws one metric against the swept parameter: one line per
// system (and per value of any other swept parameter) through the medians
// over seeds, with bars spanning min..max.
func curvePlot(c *sweep.Curve, metric, title, unit string) ([]byte, *table, bool, error) {
	xp, ok := sweptParam(c)
	if !ok {
		return nil, nil, false, nil
	}
	ax := newXAxis(xp)
	series := map[string][]*sweep.CurvePoint{}
	var order []string
	system := map[string]string{}
	for _, pt := range c.Points {
		name := pt.System + "/" + pt.Variant
		for _, q := range c.Params {
			if q.Name != xp.Name && len(q.Values) > 1 {
				name += " " + q.Name + "=" + pt.Params[q.Name]
			}
		}
		if _, ok := series[name]; !ok {
			order = append(order, name)
			system[name] = pt.System
		}
		series[name] = append(series[name], pt)
	}
	sort.SliceStable(order, func(i, j int) bool { return systemRank(system[order[i]]) < systemRank(system[order[j]]) })
	sub := fmt.Sprintf("median over seeds %s; bars: min–max", sweep.FormatSeeds(c.Seeds))
	if len(c.Seeds) == 1 {
		sub = fmt.Sprintf("seed %d", c.Seeds[0])
	}
	p := newPlot(fmt.Sprintf("%s vs %s (%s)", title, xp.Name, sub), ax.label, unit)
	data := &table{header: []string{"series", xp.Name, "x", "n", "null", "median", "min", "max"}}
	var legend []legendEntry
	any := false
	ymax := 0.0
	var nulls []nullMark
	for si, name := range order {
		style, glyph := seriesStyle(si)
		pts := series[name]
		sort.SliceStable(pts, func(i, j int) bool { return ax.pos[pts[i].Params[xp.Name]] < ax.pos[pts[j].Params[xp.Name]] })
		var ep errPoints
		for _, pt := range pts {
			v := pt.Params[xp.Name]
			s := pt.Metrics[metric]
			if s == nil {
				data.add(name, v, ax.pos[v], 0, 0, "", "", "")
				continue
			}
			data.add(name, v, ax.pos[v], s.N, s.Null, s.Median, s.Min, s.Max)
			if s.Null > 0 {
				nulls = append(nulls, nullMark{x: ax.pos[v], y: s.Median, color: palette[si%len(palette)],
					label: fmt.Sprintf("%d/%d %s", s.Null, s.N+s.Null, nullWord(metric))})
			}
			if s.Median == nil {
				continue
			}
			any = true
			ep.XYs = append(ep.XYs, plotter.XY{X: ax.pos[v], Y: *s.Median})
			ep.lo = append(ep.lo, *s.Median-*s.Min)
			ep.hi = append(ep.hi, *s.Max-*s.Median)
			ymax = math.Max(ymax, *s.Max)
		}
		if len(ep.XYs) == 0 {
			continue
		}
		l, sc, err := plotter.NewLinePoints(ep.XYs)
		if err != nil {
			return nil, nil, false, err
		}
		// Later series are drawn thinner and with smaller markers, so
		// one on top of an identical one (variants that recover alike)
		// leaves the earlier visible around it.
		style.Width = overlapWidth(si, len(order))
		glyph.Radius = overlapRadius(si, len(order))
		l.LineStyle = style
		sc.GlyphStyle = glyph
		eb, err := plotter.NewYErrorBars(ep)
		if err != nil {
			return nil, nil, false, err
		}
		eb.LineStyle = draw.LineStyle{Color: style.Color, Width: vg.Points(1.5)}
		eb.CapWidth = vg.Points(8)
		if ax.nomina != nil {
			// Categories (sink=2pc, plain) have no order: a line between
			// them would suggest a trend. Markers, and the value of each.
			p.Add(sc, eb)
			if lab, err := plotter.NewLabels(plotter.XYLabels{XYs: ep.XYs, Labels: valueTexts(ep.XYs)}); err == nil {
				for i := range lab.TextStyle {
					lab.TextStyle[i].Font.Size = vg.Points(9)
					lab.TextStyle[i].XAlign = draw.XLeft
					lab.TextStyle[i].YAlign = draw.YCenter
				}
				lab.Offset = vg.Point{X: vg.Points(10)}
				p.Add(lab)
			}
			legend = append(legend, legendEntry{name, markThumb{draw.LineStyle{}, glyph}})
			continue
		}
		p.Add(l, sc, eb)
		legend = append(legend, legendEntry{name, markThumb{style, glyph}})
	}
	if !any && len(nulls) == 0 {
		return nil, data, false, nil
	}
	// Seeds without a value (never recovered) are marked: a cross at the
	// top when no seed has one, a note beside the median otherwise.
	top := math.Max(ymax, 1e-9) * 1.1
	if len(nulls) > 0 {
		var xys plotter.XYs
		var labels []string
		for _, n := range nulls {
			y := top
			if n.y != nil {
				y = *n.y
			} else {
				sc, err := plotter.NewScatter(plotter.XYs{{X: n.x, Y: top}})
				if err == nil {
					sc.GlyphStyle = draw.GlyphStyle{Color: n.color, Radius: vg.Points(6), Shape: draw.CrossGlyph{}}
					p.Add(sc)
				}
			}
			xys = append(xys, plotter.XY{X: n.x, Y: y})
			labels = append(labels, n.label)
		}
		if lab, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels}); err == nil {
			for i := range lab.TextStyle {
				lab.TextStyle[i].Font.Size = vg.Points(9)
				lab.TextStyle[i].XAlign = draw.XCenter
			}
			lab.Offset = vg.Point{Y: vg.Points(8)}
			p.Add(lab)
		}
		legend = append(legend, legendEntry{"no seed has a value", crossThumb{}})
		top *= 1.1
	}
	if ax.nomina != nil {
		categoryLabels(p, ax.nomina)
		p.X.Min, p.X.Max = -0.5, float64(len(ax.nomina))-0.5
	} else {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range ax.pos {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		pad := (hi - lo) * 0.05
		if pad == 0 {
			pad = 0.5
		}
		p.X.Min, p.X.Max = lo-pad, hi+pad
		// Ticks at the swept values, labelled as given (1s, 2s, ...).
		if len(xp.Values) <= 12 {
			var ticks []plot.Tick
			for _, v := range xp.Values {
				ticks = append(ticks, plot.Tick{Value: ax.pos[v], Label: v})
			}
			p.X.Tick.Marker = plot.ConstantTicks(thinTicks(ticks, p.X.Min, p.X.Max, panelWidth, p.X.Tick.Label))
		}
	}
	p.Y.Tick.Marker = countTicks{}
	p.Y.Min, p.Y.Max = 0, top
	png, err := render([]*plot.Plot{p}, legend)
	return png, data, true, err
}

// valueTexts labels points with their y values, to four digits.
func valueTexts(xys plotter.XYs) []string {
	out := make([]string, len(xys))
	for i, p := range xys {
		switch a := math.Abs(p.Y); {
		case a >= 1e4:
			out[i] = humanCount(p.Y) // 146k
		case a >= 100:
			out[i] = strconv.FormatFloat(p.Y, 'f', 0, 64) // 3053 ms, not 3053.453
		default:
			out[i] = strconv.FormatFloat(p.Y, 'g', 4, 64) // 4.1 s, 0.0123
		}
	}
	return out
}

func systemRank(s string) int {
	if r, ok := systemOrder[s]; ok {
		return r
	}
	return len(systemOrder)
}

// nullMark is a point where some seeds have no value.
type nullMark struct {
	x     float64
	y     *float64
	color color.RGBA
	label string
}

func nullWord(metric string) string {
	if metric == "recovery_time_s" {
		return "never recovered"
	}
	return "no value"
}

type crossThumb struct{}

func (crossThumb) Thumbnail(c *draw.Canvas) {
	c.DrawGlyph(draw.GlyphStyle{Color: color.Black, Radius: vg.Points(5), Shape: draw.CrossGlyph{}}, c.Center())
}
