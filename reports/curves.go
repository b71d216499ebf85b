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
	"gonum.org/v1/plot/text"
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
	series := curveSeriesOf(c, xp, ax)
	d := &curveDrawing{
		p:      newPlot(fmt.Sprintf("%s vs %s (%s)", title, xp.Name, seedsNote(c.Seeds)), ax.label, unit),
		ax:     ax,
		param:  xp.Name,
		metric: metric,
		data:   &table{header: []string{"series", xp.Name, "x", "n", "null", "median", "min", "max"}},
	}
	for si, s := range series {
		if err := d.addSeries(si, len(series), s); err != nil {
			return nil, nil, false, err
		}
	}
	if !d.hasMedian && len(d.nulls) == 0 {
		return nil, d.data, false, nil
	}
	top := d.markNulls(math.Max(d.ymax, 1e-9) * 1.1)
	ax.span(d.p, xp.Values)
	d.p.Y.Tick.Marker = countTicks{}
	d.p.Y.Min, d.p.Y.Max = 0, top
	if d.hasMedian && len(d.nulls) == 0 {
		// Every seed's value is at most the highest max drawn.
		sayIfAllZero(d.p, []float64{d.ymax}, "every seed's "+strings.ToLower(title[:1])+title[1:]+" is 0")
	}
	png, err := render([]*plot.Plot{d.p}, d.legend)
	return png, d.data, true, err
}

// curveSeries is one line of a curve plot: the points of one
// system/variant (and value of any other swept parameter).
type curveSeries struct {
	name, system string
	points       []*sweep.CurvePoint
}

// curveSeriesOf splits a curve's points into series, ordered by system
// (and within one system as first seen), each with its points in x order.
func curveSeriesOf(c *sweep.Curve, xp sweep.Param, ax xAxis) []*curveSeries {
	var series []*curveSeries
	byName := map[string]*curveSeries{}
	for _, pt := range c.Points {
		name := curveSeriesName(c, xp, pt)
		s, ok := byName[name]
		if !ok {
			s = &curveSeries{name: name, system: pt.System}
			byName[name] = s
			series = append(series, s)
		}
		s.points = append(s.points, pt)
	}
	sort.SliceStable(series, func(i, j int) bool { return systemRank(series[i].system) < systemRank(series[j].system) })
	for _, s := range series {
		pts := s.points
		sort.SliceStable(pts, func(i, j int) bool { return ax.pos[pts[i].Params[xp.Name]] < ax.pos[pts[j].Params[xp.Name]] })
	}
	return series
}

// curveSeriesName names a point's series: system/variant, then the value
// of every other parameter the sweep varies.
func curveSeriesName(c *sweep.Curve, xp sweep.Param, pt *sweep.CurvePoint) string {
	name := pt.System + "/" + pt.Variant
	for _, q := range c.Params {
		if q.Name != xp.Name && len(q.Values) > 1 {
			name += " " + q.Name + "=" + pt.Params[q.Name]
		}
	}
	return name
}

// seedsNote says what a curve's values are: one seed's, or medians over
// several.
func seedsNote(seeds []uint64) string {
	if len(seeds) == 1 {
		return fmt.Sprintf("seed %d", seeds[0])
	}
	return fmt.Sprintf("median over seeds %s; bars: min–max", sweep.FormatSeeds(seeds))
}

// curveDrawing is one curve plot being drawn: its series add to the plot,
// its legend and its data table in turn.
type curveDrawing struct {
	p         *plot.Plot
	ax        xAxis
	param     string // the swept parameter, the x axis
	metric    string
	data      *table
	legend    []legendEntry
	nulls     []nullMark // points where some seeds have no value
	hasMedian bool       // some point has a median to draw
	ymax      float64    // the highest max over seeds drawn
}

// addSeries tabulates series si of n and draws its medians with min..max
// bars.
func (d *curveDrawing) addSeries(si, n int, s *curveSeries) error {
	ep := d.tabulate(si, s)
	if len(ep.XYs) == 0 {
		return nil
	}
	style, glyph := seriesStyle(si)
	// Later series are drawn thinner and with smaller markers, so
	// one on top of an identical one (variants that recover alike)
	// leaves the earlier visible around it.
	style.Width = overlapWidth(si, n)
	glyph.Radius = overlapRadius(si, n)
	l, sc, err := plotter.NewLinePoints(ep.XYs)
	if err != nil {
		return err
	}
	l.LineStyle = style
	sc.GlyphStyle = glyph
	eb, err := plotter.NewYErrorBars(ep)
	if err != nil {
		return err
	}
	eb.LineStyle = draw.LineStyle{Color: style.Color, Width: vg.Points(1.5)}
	eb.CapWidth = vg.Points(8)
	if d.ax.nomina != nil {
		// Categories (sink=2pc, plain) have no order: a line between
		// them would suggest a trend. Markers, and the value of each.
		d.p.Add(sc, eb)
		if lab, ok := pointLabels(ep.XYs, valueTexts(ep.XYs), draw.XLeft, draw.YCenter, vg.Point{X: vg.Points(10)}); ok {
			d.p.Add(lab)
		}
		d.legend = append(d.legend, legendEntry{s.name, markThumb{draw.LineStyle{}, glyph}})
		return nil
	}
	d.p.Add(l, sc, eb)
	d.legend = append(d.legend, legendEntry{s.name, markThumb{style, glyph}})
	return nil
}

// tabulate adds series si's points to the data table, notes those where
// some seeds have no value, and returns the medians with their min..max.
func (d *curveDrawing) tabulate(si int, s *curveSeries) errPoints {
	var ep errPoints
	for _, pt := range s.points {
		v := pt.Params[d.param]
		x := d.ax.pos[v]
		m := pt.Metrics[d.metric]
		if m == nil {
			d.data.add(s.name, v, x, 0, 0, "", "", "")
			continue
		}
		d.data.add(s.name, v, x, m.N, m.Null, m.Median, m.Min, m.Max)
		if m.Null > 0 {
			d.nulls = append(d.nulls, nullMark{x: x, y: m.Median, color: palette[si%len(palette)],
				label: fmt.Sprintf("%d/%d %s", m.Null, m.N+m.Null, nullWord(d.metric))})
		}
		if m.Median == nil {
			continue
		}
		d.hasMedian = true
		ep.XYs = append(ep.XYs, plotter.XY{X: x, Y: *m.Median})
		ep.lo = append(ep.lo, *m.Median-*m.Min)
		ep.hi = append(ep.hi, *m.Max-*m.Median)
		d.ymax = math.Max(d.ymax, *m.Max)
	}
	return ep
}

// markNulls marks the points where seeds have no value (never recovered):
// a cross at top when no seed has one, a note beside the median otherwise.
// It returns the y axis' top, raised to make room for the notes.
func (d *curveDrawing) markNulls(top float64) float64 {
	if len(d.nulls) == 0 {
		return top
	}
	var xys plotter.XYs
	var labels []string
	for _, n := range d.nulls {
		y := top
		if n.y != nil {
			y = *n.y
		} else {
			d.addCross(n.x, top, n.color)
		}
		xys = append(xys, plotter.XY{X: n.x, Y: y})
		labels = append(labels, n.label)
	}
	// YBottom is the labels' default alignment: they stand above the point.
	if lab, ok := pointLabels(xys, labels, draw.XCenter, draw.YBottom, vg.Point{Y: vg.Points(8)}); ok {
		d.p.Add(lab)
	}
	d.legend = append(d.legend, legendEntry{"no seed has a value", crossThumb{}})
	return top * 1.1
}

// addCross marks a point where no seed has a value.
func (d *curveDrawing) addCross(x, y float64, c color.RGBA) {
	sc, err := plotter.NewScatter(plotter.XYs{{X: x, Y: y}})
	if err == nil {
		sc.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(6), Shape: draw.CrossGlyph{}}
		d.p.Add(sc)
	}
}

// pointLabels sets texts beside points in 9 pt, aligned and offset as
// given; false when they cannot be made.
func pointLabels(xys plotter.XYs, texts []string, x text.XAlignment, y text.YAlignment, offset vg.Point) (*plotter.Labels, bool) {
	lab, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: texts})
	if err != nil {
		return nil, false
	}
	for i := range lab.TextStyle {
		lab.TextStyle[i].Font.Size = vg.Points(9)
		lab.TextStyle[i].XAlign = x
		lab.TextStyle[i].YAlign = y
	}
	lab.Offset = offset
	return lab, true
}

// span sets p's x range over the swept values: categories one apart and
// labelled, numbers padded by 5% with a tick at each value given.
func (ax xAxis) span(p *plot.Plot, values []string) {
	if ax.nomina != nil {
		categoryLabels(p, ax.nomina)
		p.X.Min, p.X.Max = -0.5, float64(len(ax.nomina))-0.5
		return
	}
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
	if len(values) <= 12 {
		var ticks []plot.Tick
		for _, v := range values {
			ticks = append(ticks, plot.Tick{Value: ax.pos[v], Label: v})
		}
		p.X.Tick.Marker = plot.ConstantTicks(thinTicks(ticks, p.X.Min, p.X.Max, panelWidth, p.X.Tick.Label))
	}
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
