package reports

import (
	"fmt"
	"image/color"
	"sort"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"ftbench/engine"
	"ftbench/faults"
	"ftbench/sweep"
)

// band is a fault window shaded on time plots (Jepsen's nemesis bands).
//
// A window fault (slow, throttle, reorder) is shaded from its start to its
// end. A crash is an instant; its band spans the time the worker is down:
// from the crash until the worker is back up (crash + restart delay, from
// the worker_crash event or the fault spec or the cost model). When a
// system has a failure detector (run.json detection_delay_s), the moment
// the coordinator is notified (crash + detect-delay) is drawn as a dashed
// line labelled "detected". A pause is a window from its start to its end;
// when it outlasts the detection delay, the worker is declared failed at
// start + detect-delay and that moment is drawn the same way. A master
// crash (crash@T:master) spans the time the master node is down and has no
// detected line: nobody detects it, a new leader takes over when it is back.
// A partition is a window from the cut to the heal, with the far side
// declared failed at start + detect-delay when it outlasts it.
type band struct {
	Kind     string
	Master   bool // a crash of the master node, not a worker
	Label    string
	Start    float64 // s
	End      float64 // s
	Detected float64 // s; 0 = no failure detector involved
}

var bandColors = map[string]color.NRGBA{
	"crash":    {R: 220, G: 40, B: 40, A: 50},
	"slow":     {R: 240, G: 150, B: 0, A: 55},
	"throttle": {R: 200, G: 180, B: 0, A: 60},
	"reorder":  {R: 130, G: 60, B: 200, A: 45},
	"pause":    {R: 0, G: 120, B: 200, A: 50},
	// A network cut: the far side runs on (zombies) while the near side
	// recovers without it.
	"partition": {R: 0, G: 160, B: 120, A: 50},
	// Checkpoint-store faults: the whole cluster's storage, not a worker.
	"store-slow": {R: 120, G: 120, B: 120, A: 45},
	"store-down": {R: 60, G: 60, B: 60, A: 60},
	// A source partition that cannot be read: the input, not the cluster.
	"source-down": {R: 150, G: 90, B: 30, A: 50},
}

func bandColor(kind string) color.NRGBA {
	if c, ok := bandColors[kind]; ok {
		return c
	}
	return color.NRGBA{R: 100, G: 100, B: 100, A: 50}
}

// faultBands derives the fault windows of a group of runs sharing one fault
// schedule, from the first run's events (fault_start, fault_end,
// worker_crash) or, without events, from its run.json faults.
func faultBands(runs []*sweep.StoredRun) []band {
	if len(runs) == 0 {
		return nil
	}
	detect := 0.0
	for _, r := range runs {
		if r.Result.DetectionDelayS != nil {
			detect = *r.Result.DetectionDelayS
		}
	}
	r := runs[0]
	var bands []band
	for i, e := range r.Events {
		if e.Kind != "fault_start" {
			continue
		}
		kind, _, _ := strings.Cut(e.Note, "@")
		b := band{Kind: kind, Master: masterCrash(r, e.Note), Start: secs(e.Time), End: -1}
		if kind == "crash" {
			for _, c := range r.Events[i:] {
				if c.Kind == "worker_crash" && c.Time == e.Time {
					b.End = secs(e.Time + engine.Time(c.Value))
					break
				}
			}
		} else {
			for _, c := range r.Events[i:] {
				if c.Kind == "fault_end" && c.Note == e.Note {
					b.End = secs(c.Time)
					break
				}
			}
		}
		if b.End < 0 {
			b.End = specEnd(r, e.Note, b.Start)
		}
		b.Label = bandLabel(e.Note, b)
		bands = append(bands, b)
	}
	if len(bands) == 0 {
		for _, f := range r.Result.Faults {
			sp, err := faults.Parse(f, faults.Defaults{Duration: engine.Time(r.Result.Config.DurationS * 1e9)})
			if err != nil {
				continue
			}
			b := band{Kind: string(sp.Kind), Master: sp.Kind == faults.Crash && sp.Master, Start: secs(sp.At), End: specEnd(r, f, secs(sp.At))}
			b.Label = bandLabel(f, b)
			bands = append(bands, b)
		}
	}
	for i := range bands {
		b := &bands[i]
		switch {
		case detect <= 0:
		case b.Kind == "crash" && !b.Master:
			b.Detected = b.Start + detect
		case (b.Kind == "pause" || b.Kind == "partition") && b.End-b.Start > detect:
			b.Detected = b.Start + detect
		}
	}
	sort.SliceStable(bands, func(i, j int) bool { return bands[i].Start < bands[j].Start })
	return bands
}

// masterCrash reports whether spec is a crash of the master node.
func masterCrash(r *sweep.StoredRun, spec string) bool {
	sp, err := faults.Parse(spec, faults.Defaults{Duration: engine.Time(r.Result.Config.DurationS * 1e9)})
	return err == nil && sp.Kind == faults.Crash && sp.Master
}

// specEnd is a fault's end from its spec: the window's end, or for a crash
// the restart (the spec's restart= or the cost model's restart-delay).
func specEnd(r *sweep.StoredRun, spec string, start float64) float64 {
	sp, err := faults.Parse(spec, faults.Defaults{Duration: engine.Time(r.Result.Config.DurationS * 1e9)})
	if err != nil {
		return start
	}
	if sp.Kind != faults.Crash {
		return secs(sp.End)
	}
	if sp.Restart >= 0 {
		return start + secs(sp.Restart)
	}
	if d, err := time.ParseDuration(r.Result.Config.Cost["restart-delay"]); err == nil {
		return start + d.Seconds()
	}
	return start
}

func bandLabel(spec string, b band) string {
	_, target, _ := strings.Cut(spec, ":")
	switch b.Kind {
	case "crash":
		return fmt.Sprintf("crash %s (down %.3gs)", target, b.End-b.Start)
	case "pause":
		return fmt.Sprintf("pause %s (stopped %.3gs)", target, b.End-b.Start)
	case "partition":
		return fmt.Sprintf("partition %s (cut %.3gs)", target, b.End-b.Start)
	}
	return fmt.Sprintf("%s %s", b.Kind, target)
}

func secs(t engine.Time) float64 { return float64(t) / 1e9 }

// bandPlotter shades bands over the full height of a plot and labels them
// at the top; the top of the y range is kept free of data (see headroom) so
// labels do not hide lines.
type bandPlotter struct {
	bands  []band
	labels bool
}

func (bp bandPlotter) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	sty := text.Style{Color: color.RGBA{R: 60, G: 60, B: 60, A: 255}, Font: font.From(plot.DefaultFont, vg.Points(9)), Handler: plot.DefaultTextHandler}
	for i, b := range bp.bands {
		x0, x1 := trX(b.Start), trX(b.End)
		if x1-x0 < vg.Points(2) {
			x1 = x0 + vg.Points(2) // an instant still shows
		}
		x0, x1 = max(x0, c.Min.X), min(x1, c.Max.X)
		if x1 <= x0 {
			continue
		}
		pts := []vg.Point{{X: x0, Y: c.Min.Y}, {X: x0, Y: c.Max.Y}, {X: x1, Y: c.Max.Y}, {X: x1, Y: c.Min.Y}}
		c.FillPolygon(bandColor(b.Kind), pts)
		if b.Detected > 0 {
			xd := trX(b.Detected)
			if xd > c.Min.X && xd < c.Max.X {
				// Under a labelled band the line stops below the band's
				// label, which it would otherwise strike through.
				top := c.Max.Y
				if bp.labels {
					top = c.Max.Y - vg.Points(14)*vg.Length(i+1) - vg.Points(3)
				}
				c.StrokeLine2(draw.LineStyle{Color: color.RGBA{R: 160, G: 0, B: 0, A: 255}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}},
					xd, c.Min.Y, xd, top)
				if bp.labels {
					c.FillText(sty, vg.Point{X: xd + vg.Points(2), Y: c.Max.Y - vg.Points(14)*vg.Length(i+2)}, "detected")
				}
			}
		}
		if bp.labels {
			// Left-aligned at the band's start, unless that would run
			// past the plot's right edge.
			x := min(x0+vg.Points(2), c.Max.X-sty.Width(b.Label)-vg.Points(2))
			c.FillText(sty, vg.Point{X: max(x, c.Min.X), Y: c.Max.Y - vg.Points(14)*vg.Length(i+1)}, b.Label)
		}
	}
}

// headroom is the fraction of the y range kept above the data for band
// labels.
const headroom = 1.3

// addBandLegend adds one legend entry per fault kind shown.
func addBandLegend(legend []legendEntry, bands []band) []legendEntry {
	// A crash band is a worker's or the master node's downtime; the
	// legend names what the plot shows.
	var anyWorker, anyMaster bool
	for _, b := range bands {
		if b.Kind == "crash" {
			anyMaster = anyMaster || b.Master
			anyWorker = anyWorker || !b.Master
		}
	}
	seen := map[string]bool{}
	for _, b := range bands {
		if seen[b.Kind] {
			continue
		}
		seen[b.Kind] = true
		name := b.Kind + " window"
		switch b.Kind {
		case "crash":
			switch {
			case anyWorker && anyMaster:
				name = "crash: worker or master down"
			case anyMaster:
				name = "crash: master down"
			default:
				name = "crash: worker down"
			}
		case "pause":
			name = "pause: worker stopped"
		case "partition":
			name = "partition: workers cut off"
		}
		legend = append(legend, legendEntry{name, boxThumb{bandColor(b.Kind)}})
	}
	return legend
}

// bandTable is the data behind the bands (faults.csv), with each band's
// fill as the PNGs draw it (a CSS colour), so that report/index.html shades
// its charts' fault windows in the same colours.
func bandTable(bands []band) *table {
	t := &table{header: []string{"kind", "label", "start_s", "end_s", "detected_s", "fill"}}
	for _, b := range bands {
		det := any("")
		if b.Detected > 0 {
			det = b.Detected
		}
		c := bandColor(b.Kind)
		t.add(b.Kind, b.Label, b.Start, b.End, det, fmt.Sprintf("rgba(%d,%d,%d,%.3f)", c.R, c.G, c.B, float64(c.A)/255))
	}
	return t
}
