package reports

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"ftbench/harness"
)

var deliveryBars = []struct {
	name  string
	color color.RGBA
}{
	{"duplicates", palette[1]},
	{"lost", palette[0]},
	{"wrong keys", palette[4]},
}

// deliveryPlot draws grouped bars of duplicates, lost effects and wrong
// keys per run; each group's label names the claimed and the observed
// guarantee.
func deliveryPlot(g *group) ([]byte, *table, error) {
	title := "Delivery semantics"
	if common := configLabel(g.Runs); common != "" && (len(g.Runs) > 1 || common != commonLabel(g.Runs)) {
		// A single run's name is under its bars; the options it was
		// given (a torture run's drawn ones) are not.
		title += " of " + common
	}
	if f := g.Runs[0].Result.Faults; len(f) > 0 {
		title += " under " + strings.Join(f, " ")
	}
	// The guarantee claimed and observed goes under each run's name, or
	// into the title when every run has the same (a sweep of one system).
	claim := func(r *harness.Result) string {
		held := "held"
		if !r.ClaimHeld {
			held = "BROKEN"
		}
		return fmt.Sprintf("claimed %s\nobserved %s\n(claim %s)", r.ClaimedGuarantee, r.Verdict, held)
	}
	sameClaim := true
	for _, r := range g.Runs {
		sameClaim = sameClaim && claim(r.Result) == claim(g.Runs[0].Result)
	}
	if sameClaim {
		title += ": every run " + strings.Replace(strings.ReplaceAll(claim(g.Runs[0].Result), "\n(", " ("), "\n", ", ", 1)
	} else {
		title += ": claimed vs observed guarantee per run"
	}
	p := newBarPlot(title, "count (effects; keys for wrong keys)")
	data := &table{header: []string{"series", "claimed", "observed", "claim_held", "duplicates", "lost", "wrong_keys", "expected_effects"}}
	n := len(g.Runs)
	names := make([]string, n)
	vals := make([]plotter.Values, len(deliveryBars))
	ymax := 0.0
	for i, r := range g.Runs {
		res := r.Result
		names[i] = g.Labels[i]
		if !sameClaim {
			names[i] += "\n" + claim(res)
		}
		v := []float64{float64(res.Duplicates), float64(res.Lost), float64(res.WrongKeys)}
		for k := range deliveryBars {
			vals[k] = append(vals[k], v[k])
			ymax = math.Max(ymax, v[k])
		}
		data.add(g.Labels[i], res.ClaimedGuarantee, res.Verdict, res.ClaimHeld, res.Duplicates, res.Lost, res.WrongKeys, res.ExpectedEffects)
	}
	// Bar width from the space each system gets in a 1200 px image.
	slot := (imageWidth * 0.75) / vg.Length(max(n, 1))
	width := min(vg.Points(48), slot*0.8/vg.Length(len(deliveryBars)))
	var legend []legendEntry
	for k, b := range deliveryBars {
		bars, err := plotter.NewBarChart(vals[k], width)
		if err != nil {
			return nil, nil, err
		}
		bars.Color = b.color
		bars.LineStyle.Width = 0
		bars.Offset = width * vg.Length(k-1)
		p.Add(bars)
		// The exact count above each bar, so zero bars still read "0".
		xys := make(plotter.XYs, n)
		labels := make([]string, n)
		for i := range xys {
			xys[i] = plotter.XY{X: float64(i), Y: vals[k][i]}
			labels[i] = strconv.FormatFloat(vals[k][i], 'f', -1, 64) // exact, not rounded
		}
		lab, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
		if err != nil {
			return nil, nil, err
		}
		for i := range lab.TextStyle {
			lab.TextStyle[i].XAlign = draw.XCenter
			lab.TextStyle[i].Font.Size = vg.Points(9)
		}
		lab.Offset = vg.Point{X: bars.Offset, Y: vg.Points(3)}
		p.Add(lab)
		legend = append(legend, legendEntry{b.name, bars})
	}
	p.X.Tick.Label.Font.Size = vg.Points(9)
	categoryLabels(p, names)
	p.X.Min, p.X.Max = -0.6, float64(n)-0.4
	p.Y.Min, p.Y.Max = 0, math.Max(1, ymax)*1.15
	p.Y.Tick.Marker = countTicks{}
	sayIfAllZero(p, slices.Concat(vals...), "no duplicates, losses or wrong keys in any run")
	png, err := render([]*plot.Plot{p}, legend)
	return png, data, err
}
