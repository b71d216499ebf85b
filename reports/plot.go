package reports

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
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

// palette is Okabe and Ito's colour-blind-safe palette ("Color Universal
// Design", 2008), ordered so that the first colours are the most distinct
// on white; its yellow is darkened, since the original is hard to see on a
// white background. Series get colours by their position in a plot, so
// every series of a plot has its own colour (and marker) up to 8 series;
// beyond that colours repeat with a dash pattern.
var palette = []color.RGBA{
	{R: 0, G: 114, B: 178, A: 255},   // blue
	{R: 230, G: 159, B: 0, A: 255},   // orange
	{R: 0, G: 158, B: 115, A: 255},   // bluish green
	{R: 213, G: 94, B: 0, A: 255},    // vermillion
	{R: 204, G: 121, B: 167, A: 255}, // reddish purple
	{R: 86, G: 180, B: 233, A: 255},  // sky blue
	{R: 0, G: 0, B: 0, A: 255},       // black
	{R: 180, G: 160, B: 0, A: 255},   // yellow, darkened
}

var dashes = [][]vg.Length{nil, {vg.Points(10), vg.Points(5)}, {vg.Points(2), vg.Points(4)}, {vg.Points(10), vg.Points(4), vg.Points(2), vg.Points(4)}}

// systemOrder is the order systems are listed and plotted in: the baseline
// first, then the protocols in the order docs/architecture.md introduces them.
var systemOrder = map[string]int{"none": 0, "stormack": 1, "lineage": 2, "barrier": 3, "snapshot": 4}

var glyphShapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.BoxGlyph{}, draw.RingGlyph{},
	draw.PyramidGlyph{}, draw.SquareGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}}

// seriesStyle is the line and marker of series i of a plot: its own colour
// and marker shape, so series differ in colour for every reader and in
// shape in greyscale.
func seriesStyle(i int) (draw.LineStyle, draw.GlyphStyle) { return styleOf(i, i, false) }

// styleOf is the line and marker of colour c and marker m. With shared
// colours (seriesKeys' two dimensions) the marker's index also picks a dash
// pattern; otherwise colours beyond the palette repeat dashed.
func styleOf(c, m int, shared bool) (draw.LineStyle, draw.GlyphStyle) {
	col := palette[c%len(palette)]
	dash := dashes[(c/len(palette))%len(dashes)]
	if shared {
		dash = dashes[m%len(dashes)]
	}
	return draw.LineStyle{Color: col, Width: vg.Points(2), Dashes: dash},
		draw.GlyphStyle{Color: col, Radius: vg.Points(4.5), Shape: glyphShapes[m%len(glyphShapes)]}
}

// markThumb is a legend thumbnail of a line with its marker.
type markThumb struct {
	line  draw.LineStyle
	glyph draw.GlyphStyle
}

func (t markThumb) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	if t.line.Color != nil {
		c.StrokeLine2(t.line, c.Min.X, y, c.Max.X, y)
	}
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

// timeTicks labels a time axis every 1, 2 or 5 x 10^k seconds, about ten
// labels across, so a reader can place a fault or a recovery to the
// second (gonum's default gives three or four).
type timeTicks struct{}

func (timeTicks) Ticks(lo, hi float64) []plot.Tick {
	span := hi - lo
	if !(span > 0) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	step := math.Pow(10, math.Floor(math.Log10(span/10)))
	for _, m := range []float64{1, 2, 5, 10} {
		if span/(step*m) <= 12 {
			step *= m
			break
		}
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+1e-9; v += step {
		v = math.Round(v/step) * step
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
		if half := v + step/2; half < hi {
			ticks = append(ticks, plot.Tick{Value: half}) // a minor tick
		}
	}
	return ticks
}

// inRange drops the ticks a ticker puts outside the axis range (LogTicks
// adds the next power of ten): gonum makes room for their labels anyway,
// which left a wide empty band above log-scale plots.
type inRange struct{ plot.Ticker }

func (t inRange) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, tk := range t.Ticker.Ticks(lo, hi) {
		if tk.Value >= lo && tk.Value <= hi {
			out = append(out, tk)
		}
	}
	return out
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

// sayIfAllZero writes, in the middle of a panel whose values are all 0,
// that they are and what that means (meaning: "no duplicates ... in any
// run"), and gives its y axis the range 0 to 1 at least: bars of height 0
// or a line along the axis read as nothing drawn, and a range of 0 to 0
// has no scale. Every plot whose values can all be 0 calls it with the
// values it draws (NaN for one not reported: it does not count). It
// reports whether they were all 0; with no value at all it does nothing.
func sayIfAllZero(p *plot.Plot, values []float64, meaning string) bool {
	n := 0
	for _, v := range values {
		if math.IsNaN(v) {
			continue
		}
		if v != 0 {
			return false
		}
		n++
	}
	if n == 0 {
		return false
	}
	p.Y.Max = math.Max(p.Y.Max, 1)
	p.Add(zeroNote("all values are 0 (" + meaning + ")"))
	return true
}

// zeroNote is sayIfAllZero's note, drawn at the centre of the data area.
type zeroNote string

func (n zeroNote) Plot(c draw.Canvas, _ *plot.Plot) {
	sty := text.Style{Color: color.Gray{Y: 60}, Font: font.From(plot.DefaultFont, vg.Points(16)), Handler: plot.DefaultTextHandler,
		XAlign: draw.XCenter, YAlign: draw.YCenter}
	c.FillText(sty, c.Center(), wrapText(string(n), sty, c.Size().X*0.8))
}

// legendEntry is one legend line.
type legendEntry struct {
	name  string
	thumb plot.Thumbnailer
}

// Layout of every image: nothing is drawn within margin of the canvas edge,
// so no text or line is ever cut by it.
var (
	margin       = vg.Points(10)
	legendFont   = vg.Points(11)
	legendThumb  = vg.Points(30)
	legendGap    = vg.Points(6)  // thumbnail to text
	legendColGap = vg.Points(18) // between columns
	legendRowGap = vg.Points(4)
)

func legendStyle() text.Style {
	return text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, legendFont), Handler: plot.DefaultTextHandler,
		XAlign: draw.XLeft, YAlign: draw.YTop}
}

// legendLayout places legend entries in a grid of equal columns under the
// plot: as many columns as fit the width, each entry's text wrapped (never
// cut) when a single entry is wider than the image.
type legendLayout struct {
	texts      []string
	cols       int
	colW       vg.Length
	rowH       []vg.Length
	height     vg.Length
	totalWidth vg.Length
}

func layoutLegend(entries []legendEntry, width vg.Length) legendLayout {
	sty := legendStyle()
	l := legendLayout{texts: make([]string, len(entries))}
	textW := vg.Length(0)
	for i, e := range entries {
		l.texts[i] = wrapText(e.name, sty, width-legendThumb-legendGap)
		textW = max(textW, sty.Width(l.texts[i]))
	}
	l.colW = legendThumb + legendGap + textW + legendColGap
	l.cols = max(1, min(len(entries), int((width+legendColGap)/l.colW)))
	for i := 0; i < len(entries); i += l.cols {
		h := vg.Length(0)
		for j := i; j < min(i+l.cols, len(entries)); j++ {
			h = max(h, sty.Height(l.texts[j]))
		}
		l.rowH = append(l.rowH, h+legendRowGap)
		l.height += h + legendRowGap
	}
	l.totalWidth = vg.Length(l.cols)*l.colW - legendColGap
	return l
}

// draw draws the legend centred at the top of c.
func (l legendLayout) draw(c draw.Canvas, entries []legendEntry) {
	sty := legendStyle()
	x0 := c.Min.X + max(0, (c.Size().X-l.totalWidth)/2)
	y := c.Max.Y
	for i, e := range entries {
		row, col := i/l.cols, i%l.cols
		if col == 0 && row > 0 {
			y -= l.rowH[row-1]
		}
		x := x0 + vg.Length(col)*l.colW
		// The thumbnail is centred on the entry's first text line.
		lineH := sty.Height("M")
		yc := y - lineH/2
		tc := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x, Y: yc - vg.Points(5)}, Max: vg.Point{X: x + legendThumb, Y: yc + vg.Points(5)}}}
		e.thumb.Thumbnail(&tc)
		c.FillText(sty, vg.Point{X: x + legendThumb + legendGap, Y: y}, l.texts[i])
	}
}

// wrapText breaks s at spaces (and, for a single word wider than width, at
// any character) so that no line of it is wider than width in style sty.
// Text is wrapped, never cut.
func wrapText(s string, sty text.Style, width vg.Length) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		cur := ""
		for _, w := range strings.Fields(line) {
			try := w
			if cur != "" {
				try = cur + " " + w
			}
			if sty.Width(try) <= width || cur == "" && sty.Width(w) <= width {
				cur = try
				continue
			}
			if cur != "" {
				out = append(out, cur)
			}
			// A word wider than the width is broken by characters.
			cur = ""
			for _, r := range w {
				if cur != "" && sty.Width(cur+string(r)) > width {
					out = append(out, cur)
					cur = ""
				}
				cur += string(r)
			}
		}
		out = append(out, cur)
	}
	return strings.Join(out, "\n")
}

// wrapWords is wrapText that breaks at spaces only: a word wider than the
// width stays whole (and too wide), for callers that then choose another
// layout rather than split a word.
func wrapWords(s string, sty text.Style, width vg.Length) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		cur := ""
		for _, w := range strings.Fields(line) {
			if cur != "" && sty.Width(cur+" "+w) > width {
				out = append(out, cur)
				cur = w
				continue
			}
			if cur != "" {
				cur += " "
			}
			cur += w
		}
		out = append(out, cur)
	}
	return strings.Join(out, "\n")
}

// panelWidth is the width of a panel's data area, about: the image less
// the margins and the y axis.
const panelWidth = imageWidth - 2*10 - 90

// fitTitles wraps each panel's title and axis labels to the room they have,
// so that none runs past the image (gonum centres a title on its panel and
// cuts what does not fit).
func fitTitles(p *plot.Plot, width, height vg.Length) {
	p.Title.Text = wrapText(p.Title.Text, p.Title.TextStyle, width-vg.Points(8))
	p.X.Label.Text = wrapText(p.X.Label.Text, p.X.Label.TextStyle, width-vg.Points(80))
	// The y label is drawn rotated along the panel's height.
	p.Y.Label.Text = wrapText(p.Y.Label.Text, p.Y.Label.TextStyle, height-vg.Points(60))
}

// render draws panels stacked vertically with the legend below them (so it
// never covers data and never runs off the right edge) and returns the PNG.
func render(panels []*plot.Plot, legend []legendEntry) ([]byte, error) {
	c := vgimg.NewWith(vgimg.UseWH(imageWidth, imageHeight), vgimg.UseDPI(imageDPI))
	dc := draw.New(c)
	area := draw.Crop(dc, margin, -margin, margin, -margin)
	if len(legend) > 0 {
		l := layoutLegend(legend, area.Size().X)
		lc := area
		lc.Max.Y = lc.Min.Y + l.height
		l.draw(lc, legend)
		area = draw.Crop(area, 0, 0, l.height+vg.Points(8), 0)
	}
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(12), PadY: vg.Points(12)}
	// Stacked panels share their data areas' left and right edges, so
	// their time axes line up: each panel is narrowed by what its axis
	// labels take less than the widest panel's.
	tcs := make([]draw.Canvas, len(panels))
	var left, right vg.Length
	for i, p := range panels {
		tcs[i] = tiles.At(area, 0, i)
		fitTitles(p, tcs[i].Size().X, tcs[i].Size().Y)
		da := p.DataCanvas(tcs[i])
		left, right = max(left, da.Min.X-tcs[i].Min.X), max(right, tcs[i].Max.X-da.Max.X)
	}
	for i, p := range panels {
		da := p.DataCanvas(tcs[i])
		p.Draw(draw.Crop(tcs[i], left-(da.Min.X-tcs[i].Min.X), -(right - (tcs[i].Max.X - da.Max.X)), 0, 0))
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

// categoryLabels sets a bar plot's category names so that they never
// overlap: wrapped at spaces to the width of a category's slot when that
// is enough, else drawn vertically (one line per name, so that neighbours
// stay a line apart), shrinking the font when even that is too tight.
func categoryLabels(p *plot.Plot, names []string) {
	names, keys := factorKeys(names)
	if len(keys) > 0 {
		// The option's name once, on the axis, not under every bar.
		if p.X.Label.Text != "" {
			p.X.Label.Text += "; "
		}
		p.X.Label.Text += strings.Join(keys, ", ") + " (the value under each bar group)"
	}
	n := max(len(names), 1)
	slot := vg.Length(panelWidth) / vg.Length(float64(n)+0.2)
	sty := p.X.Tick.Label
	wrapped := make([]string, len(names))
	fits := true
	for i, s := range names {
		wrapped[i] = wrapWords(s, sty, slot*0.92)
		for _, line := range strings.Split(wrapped[i], "\n") {
			if sty.Width(line) > slot*0.92 || strings.Count(wrapped[i], "\n") > 5 {
				fits = false
			}
		}
	}
	if fits {
		p.NominalX(wrapped...)
		return
	}
	// Vertical: each name's lines stack sideways, so they must fit the
	// slot's width; their length becomes the axis' height.
	lines := 1
	for _, s := range names {
		lines = max(lines, strings.Count(s, "\n")+1)
	}
	for size := p.X.Tick.Label.Font.Size; size > vg.Points(5); size -= vg.Points(0.5) {
		p.X.Tick.Label.Font.Size = size
		if p.X.Tick.Label.Height(strings.Repeat("M\n", lines-1)+"M") <= slot*0.9 {
			break
		}
	}
	p.X.Tick.Label.Rotation = math.Pi / 2
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
	p.NominalX(names...)
}

// factorKeys takes NAME= off every NAME=VALUE word that all names have
// (the option a sweep varies), returning the shortened names and the
// factored names, so that each bar is labelled by its value alone.
func factorKeys(names []string) ([]string, []string) {
	if len(names) < 2 {
		return names, nil
	}
	count := map[string]int{}
	var order []string
	for _, n := range names {
		seen := map[string]bool{}
		for _, w := range strings.Fields(strings.SplitN(n, "\n", 2)[0]) {
			if k, _, ok := strings.Cut(w, "="); ok && !seen[k] {
				seen[k] = true
				if count[k] == 0 {
					order = append(order, k)
				}
				count[k]++
			}
		}
	}
	var keys []string
	for _, k := range order {
		if count[k] == len(names) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return names, nil
	}
	out := make([]string, len(names))
	for i, n := range names {
		first, rest, hasRest := strings.Cut(n, "\n")
		for _, k := range keys {
			first = strings.Replace(first, k+"=", "", 1)
		}
		out[i] = first
		if hasRest {
			out[i] += "\n" + rest
		}
	}
	return out, keys
}

// thinTicks drops the labels (not the marks) of ticks that would overlap
// the previous labelled one on an axis from lo to hi drawn width long.
func thinTicks(ticks []plot.Tick, lo, hi float64, width vg.Length, sty text.Style) []plot.Tick {
	sort.SliceStable(ticks, func(i, j int) bool { return ticks[i].Value < ticks[j].Value })
	scale := float64(width) / math.Max(hi-lo, 1e-12)
	lastRight := math.Inf(-1)
	for i := range ticks {
		if ticks[i].Label == "" {
			continue
		}
		x := (ticks[i].Value - lo) * scale
		w := float64(sty.Width(ticks[i].Label))
		if x-w/2 < lastRight+float64(vg.Points(6)) {
			ticks[i].Label = ""
			continue
		}
		lastRight = x + w/2
	}
	return ticks
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
