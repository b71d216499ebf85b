package reports

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"ftbench/sweep"
)

// Image size: 1200x800 pixels at 96 dpi.
const (
	imageDPI    = 96
	imageWidth  = 1200 * vg.Inch / imageDPI
	imageHeight = 800 * vg.Inch / imageDPI
)

// systemColors gives each known system one colour in every plot; variants
// of a system share it and differ by dash pattern.
var systemColors = map[string]color.RGBA{
	"none":     {R: 90, G: 90, B: 90, A: 255},
	"stormack": {R: 230, G: 120, B: 0, A: 255},
	"lineage":  {R: 30, G: 150, B: 60, A: 255},
	"barrier":  {R: 30, G: 90, B: 200, A: 255},
	"snapshot": {R: 150, G: 50, B: 170, A: 255},
}

var extraColors = []color.RGBA{
	{R: 200, G: 30, B: 40, A: 255}, {R: 0, G: 160, B: 170, A: 255}, {R: 140, G: 90, B: 40, A: 255},
	{R: 220, G: 80, B: 160, A: 255}, {R: 120, G: 130, B: 0, A: 255}, {R: 0, G: 0, B: 0, A: 255},
}

var dashes = [][]vg.Length{nil, {vg.Points(10), vg.Points(5)}, {vg.Points(2), vg.Points(4)}, {vg.Points(10), vg.Points(4), vg.Points(2), vg.Points(4)}}

// systemOrder is the order systems are listed and plotted in: the baseline
// first, then the protocols as DESIGN.md introduces them.
var systemOrder = map[string]int{"none": 0, "stormack": 1, "lineage": 2, "barrier": 3, "snapshot": 4}

// styler hands out line styles: one colour per system, one dash pattern
// per distinct series of that system.
type styler struct {
	perSystem map[string]int
	extra     map[string]color.RGBA
}

func newStyler() *styler { return &styler{perSystem: map[string]int{}, extra: map[string]color.RGBA{}} }

func (s *styler) color(system string) color.RGBA {
	if c, ok := systemColors[system]; ok {
		return c
	}
	if c, ok := s.extra[system]; ok {
		return c
	}
	c := extraColors[len(s.extra)%len(extraColors)]
	s.extra[system] = c
	return c
}

func (s *styler) line(system string) draw.LineStyle {
	l, _ := s.lineAndGlyph(system)
	return l
}

var glyphShapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.BoxGlyph{}, draw.RingGlyph{}}

// lineAndGlyph is line's style plus a marker whose shape, like the dash
// pattern, tells a system's series apart where there are no lines.
func (s *styler) lineAndGlyph(system string) (draw.LineStyle, draw.GlyphStyle) {
	i := s.perSystem[system]
	s.perSystem[system]++
	c := s.color(system)
	return draw.LineStyle{Color: c, Width: vg.Points(2), Dashes: dashes[i%len(dashes)]},
		draw.GlyphStyle{Color: c, Radius: vg.Points(4.5), Shape: glyphShapes[i%len(glyphShapes)]}
}

// markThumb is a legend thumbnail of a line with its marker.
type markThumb struct {
	line  draw.LineStyle
	glyph draw.GlyphStyle
}

func (t markThumb) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(t.line, c.Min.X, y, c.Max.X, y)
	c.DrawGlyph(t.glyph, c.Center())
}

// countTicks labels a count or byte axis with plain numbers (no forced
// decimals), in k/M units when large.
type countTicks struct{}

func (countTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = humanCount(ticks[i].Value)
		}
	}
	return ticks
}

// humanCount prints 52000 as 52k and 1.5e6 as 1.5M.
func humanCount(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return strconv.FormatFloat(v/1e9, 'f', -1, 64) + "G"
	case a >= 1e6:
		return strconv.FormatFloat(math.Round(v/1e5)/10, 'f', -1, 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(math.Round(v/1e2)/10, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
}

// newPlot makes a plot with readable fonts for a 1200x800 image.
func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(15)
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = vg.Points(12)
		a.Tick.Label.Font.Size = vg.Points(10)
	}
	p.Add(plotter.NewGrid())
	return p
}

// newBarPlot is newPlot for categories: no vertical grid lines, which
// would run through the bars at the category ticks.
func newBarPlot(title, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(15)
	p.Y.Label.Text = ylabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = vg.Points(12)
		a.Tick.Label.Font.Size = vg.Points(10)
	}
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	p.Add(grid)
	return p
}

// legendEntry is one legend line.
type legendEntry struct {
	name  string
	thumb plot.Thumbnailer
}

// render draws panels stacked vertically with the legend in its own column
// on the right, so the legend never covers data, and returns the PNG.
func render(panels []*plot.Plot, legend []legendEntry) ([]byte, error) {
	c := vgimg.NewWith(vgimg.UseWH(imageWidth, imageHeight), vgimg.UseDPI(imageDPI))
	dc := draw.New(c)
	area := dc
	if len(legend) > 0 {
		l := plot.NewLegend()
		l.TextStyle.Font = font.From(plot.DefaultFont, vg.Points(11))
		l.Top, l.Left = true, true
		l.Padding = vg.Points(4)
		l.ThumbnailWidth = vg.Points(28)
		for _, e := range legend {
			l.Add(e.name, e.thumb)
		}
		width := l.Rectangle(dc).Size().X + vg.Points(16)
		width = min(width, imageWidth*0.4)
		area = draw.Crop(dc, 0, -width, 0, 0)
		lc := draw.Crop(dc, imageWidth-width+vg.Points(8), 0, 0, -vg.Points(36))
		l.Draw(lc)
	}
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(10), PadY: vg.Points(10)}
	for i, p := range panels {
		p.Draw(tiles.At(area, 0, i))
	}
	// Plots are mostly flat colour: the fastest compression is nearly as
	// small as the default and several times quicker.
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, c.Image()); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// lineThumb is a legend thumbnail for a line style.
type lineThumb struct{ style draw.LineStyle }

func (t lineThumb) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(t.style, c.Min.X, y, c.Max.X, y)
}

// boxThumb is a legend thumbnail for a filled area.
type boxThumb struct{ fill color.Color }

func (t boxThumb) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Min.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Min.Y}}
	c.FillPolygon(t.fill, c.ClipPolygonY(pts))
}

// segmentLines splits a series at NaN values into separate lines (gaps
// where there is no data) sharing one style.
func segmentLines(xs, ys []float64, style draw.LineStyle) []plot.Plotter {
	var out []plot.Plotter
	var cur plotter.XYs
	flush := func() {
		if len(cur) > 0 {
			l, err := plotter.NewLine(cur)
			if err == nil {
				l.LineStyle = style
				out = append(out, l)
			}
			cur = nil
		}
	}
	for i := range xs {
		if math.IsNaN(ys[i]) {
			flush()
			continue
		}
		cur = append(cur, plotter.XY{X: xs[i], Y: ys[i]})
	}
	flush()
	return out
}

// table collects the data behind a plot, written as CSV next to the PNG.
type table struct {
	header []string
	rows   [][]string
}

func (t *table) add(cells ...any) {
	rec := make([]string, len(cells))
	for i, c := range cells {
		rec[i] = cell(c)
	}
	t.rows = append(t.rows, rec)
}

func cell(c any) string {
	switch v := c.(type) {
	case string:
		return v
	case float64:
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', 10, 64)
	case *float64:
		if v == nil {
			return ""
		}
		return cell(*v)
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case bool:
		return strconv.FormatBool(v)
	}
	return fmt.Sprint(c)
}

func (t *table) bytes() []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write(t.header)
	_ = w.WriteAll(t.rows)
	return buf.Bytes()
}

// writePlot stores name.png and name.csv in dir (atomically each).
func writePlot(dir, name string, png []byte, data *table) error {
	if err := sweep.WriteFileAtomic(filepath.Join(dir, name+".png"), png); err != nil {
		return err
	}
	return sweep.WriteFileAtomic(filepath.Join(dir, name+".csv"), data.bytes())
}
