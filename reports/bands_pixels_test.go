package reports

import (
	"testing"

	"gonum.org/v1/plot"
)

// The failure detector's dashed line stops below the crash band's label
// instead of striking through it. On a 47 s axis (a compare with
// stormack's long drain) a 1 s crash band's label reaches well past the
// line at its end; no pixel of the line's (antialiased) red may lie in the
// rows of that label's text.
func TestDetectionLineSparesBandLabel(t *testing.T) {
	p := newPlot("t", "simulated time (s)", "y")
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 47, 0, 1
	p.Add(bandPlotter{bands: []band{{Kind: "crash", Label: "crash op=count/0 (down 1s)", Start: 8, End: 9, Detected: 9}}, labels: true})
	b, err := render([]*plot.Plot{p}, nil)
	if err != nil {
		t.Fatal(err)
	}
	img := decodePNGBytes(t, "detection line", b)
	rgb := func(x, y int) (int, int, int) {
		r, g, b, _ := img.At(x, y).RGBA()
		return int(r >> 8), int(g >> 8), int(b >> 8)
	}
	// The 1 pt line is antialiased into dark reds; the label's text is
	// grey, blended with the band's pink where it lies on the band.
	reddish := func(x, y int) bool {
		r, g, b := rgb(x, y)
		return r > 110 && g < 90 && b < 90 && r > 2*g
	}
	greyText := func(x, y int) bool {
		r, g, b := rgb(x, y)
		return r < 130 && g < 130 && b < 130 && r-g < 15 && g-b < 15 && b-g < 15
	}
	bd := img.Bounds()
	cols := map[int]int{}
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			if reddish(x, y) {
				cols[x]++
			}
		}
	}
	xr, most := -1, 0
	for x, n := range cols {
		if n > most {
			xr, most = x, n
		}
	}
	if xr < 0 || most < 100 {
		t.Fatalf("no detection line drawn (columns %v)", cols)
	}
	// The crash label is the topmost grey text around the line.
	top := -1
	for y := bd.Min.Y; y < bd.Max.Y/2 && top < 0; y++ {
		for x := xr - 30; x < xr+60; x++ {
			if greyText(x, y) {
				top = y
				break
			}
		}
	}
	if top < 0 {
		t.Fatal("no band label drawn near the line")
	}
	for y := top; y <= top+10; y++ {
		for x := xr - 2; x <= xr+2; x++ {
			if reddish(x, y) {
				t.Fatalf("the detection line crosses the band label (text from row %d) at (%d, %d)", top, x, y)
			}
		}
	}
}
