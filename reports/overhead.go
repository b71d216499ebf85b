package reports

import (
	"encoding/json"
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"ftbench/sweep"
)

// The overhead plots read system_metrics (and counters) whose names the
// system packages choose. The lookup is tolerant: an exact name from the
// preferred list wins; otherwise any key whose words (split at
// non-letters and camelCase) satisfy the rule, preferring mean/avg over
// plain over max over total. Nested objects are flattened with dots.
type lookup struct {
	what      string
	preferred []string
	rule      func(w words) bool
	counters  bool // also search run.json counters
	sized     bool // a size or time: keys naming a count (n, count, num) are not it
	// derive computes the quantity from other keys when no key matches.
	derive func(keys map[string]float64) (float64, string, bool)
}

type words map[string]bool

func (w words) has(any ...string) bool {
	for _, a := range any {
		if w[a] {
			return true
		}
	}
	return false
}

func splitWords(key string) words {
	w := words{}
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			w[strings.ToLower(string(cur))] = true
			cur = cur[:0]
		}
	}
	prev := rune(0)
	for _, r := range key {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return w
}

var (
	lookupState = lookup{
		what: "checkpoint state size",
		preferred: []string{"checkpoint_state_bytes", "state_bytes", "checkpoint_state_size_bytes", "snapshot_state_bytes",
			"mean_checkpoint_state_bytes", "avg_checkpoint_state_bytes", "checkpoint_size_bytes"},
		rule: func(w words) bool {
			return w.has("state") && w.has("bytes", "size") && !w.has("channel", "inflight", "overtaken", "buffered", "acker", "per")
		},
		sized: true,
		// lineage reports totals: checkpoint_bytes over checkpoints.
		derive: func(keys map[string]float64) (float64, string, bool) {
			b, okb := keys["checkpoint_bytes"]
			n, okn := keys["checkpoints"]
			if okb && okn && n > 0 {
				return b / n, "checkpoint_bytes/checkpoints", true
			}
			return 0, "", false
		},
	}
	lookupChannel = lookup{
		what: "checkpoint channel state size",
		preferred: []string{"channel_state_bytes", "checkpoint_channel_state_bytes", "checkpoint_channel_bytes", "channel_bytes",
			"inflight_bytes", "in_flight_bytes", "overtaken_bytes", "mean_channel_state_bytes", "avg_channel_state_bytes"},
		rule: func(w words) bool {
			return w.has("channel", "inflight", "overtaken") && w.has("bytes", "size") && !w.has("buffered")
		},
		sized: true,
	}
	lookupAlignment = lookup{
		what: "alignment time",
		preferred: []string{"alignment_time_ms", "alignment_ms", "align_time_ms", "mean_alignment_ms", "avg_alignment_ms",
			"alignment_time_s", "alignment_s", "alignment_ns", "alignment_time_ns"},
		rule: func(w words) bool {
			return w.has("alignment", "align", "aligning") && !w.has("bytes", "buffered", "count", "records")
		},
		sized: true,
	}
	lookupBackpressure = lookup{
		what: "backpressure",
		preferred: []string{"backpressure_ms", "backpressured_ms", "backpressure_time_ms", "backpressure_s", "backpressure_ratio",
			"backpressured_ratio"},
		rule: func(w words) bool {
			return w.has("backpressure", "backpressured") || (w.has("back") && w.has("pressure", "pressured"))
		},
	}
	lookupAcksPerRecord = lookup{
		what:      "ack messages per record",
		preferred: []string{"acks_per_record", "ack_messages_per_record", "ack_msgs_per_record", "acks_per_tuple"},
		rule: func(w words) bool {
			return w.has("ack", "acks", "acker") && w.has("per") && w.has("record", "records", "tuple", "tuples")
		},
		counters: true,
	}
	lookupAcks = lookup{
		what:      "ack messages",
		preferred: []string{"ack_messages", "acks", "ack_msgs", "acks_sent", "acker_messages", "ack_count"},
		rule: func(w words) bool {
			return w.has("ack", "acks", "acker") && !w.has("per", "timeout", "timeouts", "latency", "ms", "fail", "failed", "fails", "bytes", "pending")
		},
		counters: true,
	}
)

// keyRank orders token-matched candidates: means first, totals last.
func keyRank(k string) int {
	w := splitWords(k)
	switch {
	case w.has("mean", "avg", "average"):
		return 0
	case w.has("max", "p99", "peak"):
		return 2
	case w.has("total", "sum"):
		return 3
	}
	return 1
}

// numericKeys flattens a run's system_metrics (and counters) to numbers.
func numericKeys(r *sweep.StoredRun, counters bool) map[string]float64 {
	out := map[string]float64{}
	var sm map[string]any
	if b, err := json.Marshal(r.Result.SystemMetrics); err == nil {
		_ = json.Unmarshal(b, &sm)
	}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			switch v := v.(type) {
			case float64:
				out[prefix+k] = v
			case map[string]any:
				walk(prefix+k+".", v)
			}
		}
	}
	walk("", sm)
	if counters {
		for k, v := range r.Result.Counters {
			if _, ok := out[k]; !ok {
				out[k] = float64(v)
			}
		}
	}
	return out
}

// find returns the value and key found for l in run r.
func (l lookup) find(r *sweep.StoredRun) (float64, string, bool) {
	keys := numericKeys(r, l.counters)
	norm := map[string]string{}
	for k := range keys {
		norm[strings.ToLower(k)] = k
	}
	for _, p := range l.preferred {
		// A preferred name may hold a distribution object
		// ({"n", "mean", "p50", "max", ...}): take its mean.
		for _, suffix := range []string{"", ".mean", ".avg", ".p50", ".median"} {
			if k, ok := norm[p+suffix]; ok {
				return keys[k], k, true
			}
		}
	}
	var cands []string
	for k := range keys {
		// The count leaf of a distribution object is not the quantity.
		if w := splitWords(k); l.rule(w) && !(l.sized && w.has("n", "count", "num")) {
			cands = append(cands, k)
		}
	}
	if len(cands) == 0 {
		if l.derive != nil {
			return l.derive(keys)
		}
		return 0, "", false
	}
	sort.Slice(cands, func(i, j int) bool {
		if a, b := keyRank(cands[i]), keyRank(cands[j]); a != b {
			return a < b
		}
		return cands[i] < cands[j]
	})
	return keys[cands[0]], cands[0], true
}

// toMillis converts a time metric to ms by its key's unit word (ms, s, ns,
// us); a key without a unit is taken as ms and reported as assumed.
func toMillis(key string, v float64) (float64, bool) {
	w := splitWords(key)
	switch {
	case w.has("ms", "millis"):
		return v, true
	case w.has("ns", "nanos"):
		return v / 1e6, true
	case w.has("us", "micros"):
		return v / 1e3, true
	case w.has("s", "sec", "secs", "seconds"):
		return v * 1e3, true
	}
	return v, false
}

// overheadResult is one overhead plot, or the note why it was skipped.
type overheadResult struct {
	file, title string
	png         []byte
	data        *table
	note        string
}

// checkpointSizePlot: grouped bars of checkpoint state size and channel
// state size per run of the group that reports either.
func checkpointSizePlot(g *group) overheadResult {
	res := overheadResult{file: g.Prefix + "checkpoint-size", title: "Checkpoint size: state vs channel state"}
	data := &table{header: []string{"series", "state_key", "state_bytes", "channel_key", "channel_state_bytes"}}
	var names []string
	var state, channel plotter.Values
	var reported [2][]bool // per bar kind and run: the run reports it
	for i, r := range g.Runs {
		sv, sk, sok := lookupState.find(r)
		cv, ck, cok := lookupChannel.find(r)
		if !sok && !cok {
			continue
		}
		names = append(names, g.Labels[i])
		state, channel = append(state, sv), append(channel, cv)
		reported[0], reported[1] = append(reported[0], sok), append(reported[1], cok)
		data.add(g.Labels[i], sk, nanIf(!sok, sv), ck, nanIf(!cok, cv))
	}
	if len(names) == 0 {
		res.note = "no run reports a checkpoint size (looked for " + lookupState.describe() + "; and " + lookupChannel.preferred[0] + ")"
		return res
	}
	p := newBarPlot(res.title+" per checkpoint", "bytes")
	bars := []struct {
		name string
		v    plotter.Values
		c    color.RGBA
	}{{"operator state", state, palette[0]}, {"channel state (in-flight data)", channel, palette[1]}}
	var legend []legendEntry
	width := min(vg.Points(60), imageWidth*0.75/vg.Length(len(names))*0.8/2)
	ymax, upright := 0.0, false
	for k, b := range bars {
		bc, err := plotter.NewBarChart(b.v, width)
		if err != nil {
			res.note = err.Error()
			return res
		}
		bc.Color, bc.LineStyle.Width, bc.Offset = b.c, 0, width*(vg.Length(k)-0.5)
		p.Add(bc)
		// A size the run does not report is labelled so, not "0" (lineage
		// has no channel state to report; aligned barriers report 0).
		rep := reported[k]
		lab := valueLabels(b.v, bc.Offset, width, func(i int) (string, bool) { return "not reported", !rep[i] })
		if lab != nil {
			p.Add(lab)
			upright = upright || rotatedLabels(lab)
		}
		legend = append(legend, legendEntry{b.name, bc})
		for _, v := range b.v {
			ymax = math.Max(ymax, v)
		}
	}
	categoryLabels(p, names)
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4
	p.Y.Min, p.Y.Max = 0, math.Max(ymax, 1)*labelHeadroom(upright)
	p.Y.Tick.Marker = countTicks{}
	var sizes []float64
	for i := range names {
		sizes = append(sizes, nanIf(!reported[0][i], state[i]), nanIf(!reported[1][i], channel[i]))
	}
	sayIfAllZero(p, sizes, "every checkpoint size reported is 0 bytes")
	res.png, res.data = renderOrNote(&res, []*plot.Plot{p}, legend), data
	return res
}

// alignmentPlot: alignment time against backpressure, one series per
// system/variant reporting alignment, one point per run, a line joining
// only the runs of one configuration along the swept parameter
// (configLines; swept names a sweep's parameters). Backpressure is the
// simulator's measure (backpressureOf), else a system_metrics key, else the
// run's mean source lag while input is appended (records).
func alignmentPlot(runs []*sweep.StoredRun, labels []string, swept ...string) overheadResult {
	return timingPlot(runs, labels, timingSpec{file: "alignment-vs-backpressure", title: "Alignment time vs backpressure",
		what: "alignment time", column: "alignment", measures: []measure{{"", lookupAlignment}}, swept: swept})
}

// startDelayPlot: the checkpoint start delay (trigger to a task's first
// barrier) against backpressure, its p50 and max per run, one pair of
// series per system/variant reporting it.
func startDelayPlot(runs []*sweep.StoredRun, labels []string, swept ...string) overheadResult {
	return timingPlot(runs, labels, timingSpec{file: "start-delay-vs-backpressure", title: "Checkpoint start delay vs backpressure",
		what: "checkpoint start delay", column: "start_delay",
		measures: []measure{{"p50", lookupStartDelay("p50")}, {"max", lookupStartDelay("max")}}, swept: swept})
}

// lookupStartDelay finds one statistic of checkpoint_start_delay_ms.
func lookupStartDelay(stat string) lookup {
	return lookup{what: "checkpoint start delay " + stat, preferred: []string{"checkpoint_start_delay_ms." + stat},
		rule: func(words) bool { return false }, sized: true}
}

// timingSpec is one time-vs-backpressure plot: the file, title, what the
// y axis measures, the CSV column prefix, the measures drawn (each a
// series per system/variant, named by its suffix when there are several)
// and the parameters of the sweep the runs come from (none: not a sweep).
type timingSpec struct {
	file, title, what, column string
	measures                  []measure
	swept                     []string
}

type measure struct {
	suffix string
	lookup lookup
}

// timingPt is one run's point on a timing plot.
type timingPt struct {
	x, y  float64
	label string // the options that tell this run from the others
	run   int    // index in the plot's runs
}

func timingPlot(runs []*sweep.StoredRun, labels []string, spec timingSpec) overheadResult {
	res := overheadResult{file: spec.file, title: spec.title}
	data := &table{header: []string{"series", "run", "backpressure", "backpressure_key", spec.column + "_ms", spec.column + "_key"}}
	keys := differingOptions(runs)
	scenarioKeys, scenarioLabels := scenarioDiffs(runs)
	series := map[string][]timingPt{}
	var order []string
	var bkeys []string
	var bsrcs []bpSource
	assumed := false
	for i, r := range runs {
		bx, bk, src := backpressureOf(r)
		for _, m := range spec.measures {
			av, ak, ok := m.lookup.find(r)
			if !ok {
				continue
			}
			name := r.Result.System + "/" + r.Result.Variant
			if m.suffix != "" {
				name += " " + m.suffix
			}
			if _, ok := series[name]; !ok {
				order = append(order, name)
			}
			ms, known := toMillis(ak, av)
			assumed = assumed || !known
			bkeys, bsrcs = append(bkeys, bk), append(bsrcs, src)
			opts := slices.Clone(scenarioLabels[i])
			for _, k := range keys {
				if v, ok := r.Result.Config.SystemOpts[k]; ok {
					opts = append(opts, k+"="+v)
				}
			}
			series[name] = append(series[name], timingPt{bx, ms, strings.Join(opts, " "), i})
			data.add(name, labels[i], bx, bk, ms, ak)
		}
	}
	xlabel, xshort := backpressureAxis(bkeys, bsrcs)
	if len(order) == 0 {
		var looked []string
		for _, m := range spec.measures {
			looked = append(looked, m.lookup.describe())
		}
		res.note = "no run reports " + an(spec.what) + " (looked for " + strings.Join(looked, "; ") + ")"
		return res
	}
	// One point per series shows no relation between alignment and
	// backpressure (a compare runs each system once): say so, with the
	// values, instead of drawing lone dots.
	related := false
	for _, pts := range series {
		for _, q := range pts[1:] {
			related = related || q.x != pts[0].x
		}
	}
	if !related {
		var vals []string
		for _, name := range order {
			for _, q := range series[name] {
				vals = append(vals, fmt.Sprintf("%s %.3g ms at %s %.4g", name, q.y, xshort, q.x))
			}
		}
		res.note = "every system/variant has a single run (or all its runs have the same backpressure), so there is no relation to draw; " +
			"sweep a parameter that changes backpressure (rate, checkpoint-interval, or a slow or throttle fault) to get one. Values: " + strings.Join(vals, "; ")
		return res
	}
	ylabel := spec.what + " (ms)"
	if assumed {
		ylabel = spec.what + " (ms; unit assumed, key has none)"
	}
	p := newPlot(res.title+" (one point per run)", xlabel, ylabel)
	keys = append(scenarioKeys, keys...)
	if len(keys) > 0 {
		p.Title.Text += "; points labelled by " + strings.Join(keys, ", ")
	}
	var placed []placedLabel
	xr := 0.0 // the data's extent, for what "about the same backpressure" means
	for _, pts := range series {
		for _, q := range pts {
			xr = math.Max(xr, q.x)
		}
	}
	var legend []legendEntry
	var marks plotter.XYLabels // the points' labels, drawn once at the end
	var along []string         // the parameters lines follow
	xlo, xhi, yhi := math.Inf(1), math.Inf(-1), 0.0
	for si, name := range order {
		pts := series[name]
		sort.SliceStable(pts, func(i, j int) bool { return pts[i].x < pts[j].x })
		xys := make(plotter.XYs, len(pts))
		for i, q := range pts {
			xys[i] = plotter.XY{X: q.x, Y: q.y}
			xlo, xhi, yhi = math.Min(xlo, q.x), math.Max(xhi, q.x), math.Max(yhi, q.y)
		}
		line, glyph := seriesStyle(si)
		line.Width, glyph.Radius = overlapWidth(si, len(order)), overlapRadius(si, len(order))
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			res.note = err.Error()
			return res
		}
		sc.GlyphStyle = glyph
		lines, param := timingLines(runs, pts, spec.swept)
		for _, l := range lines {
			pl, err := plotter.NewLine(l)
			if err != nil {
				res.note = err.Error()
				return res
			}
			pl.LineStyle = line
			p.Add(pl)
		}
		p.Add(sc)
		thumb := markThumb{glyph: glyph}
		if len(lines) > 0 {
			thumb.line = line
			if !slices.Contains(along, param) {
				along = append(along, param)
			}
		}
		// Each point says which run it is: the value of the option the
		// runs differ in (named once, in the title), once per place.
		labels := make([]string, len(pts))
		for i, q := range pts {
			labels[i] = q.label
		}
		labels, _ = factorKeys(labels)
		placed = labelHighest(xys, labels, placed, 0.02*xr)
		for i, l := range labels {
			if l != "" {
				marks.XYs = append(marks.XYs, xys[i])
				marks.Labels = append(marks.Labels, l)
			}
		}
		legend = append(legend, legendEntry{name, thumb})
	}
	if len(along) > 0 {
		p.Title.Text += "; a line joins the runs of one configuration along " + strings.Join(along, ", ")
	} else {
		p.Title.Text += "; no line: no two runs differ in one swept setting only"
	}
	pad := (xhi - xlo) * 0.1
	if pad == 0 {
		pad = math.Max(math.Abs(xhi)*0.1, 1)
	}
	p.X.Min, p.X.Max = math.Max(0, xlo-pad), xhi+pad
	p.X.Tick.Marker = countTicks{}
	p.Y.Min, p.Y.Max = 0, math.Max(yhi, 1e-9)*1.15
	var ys []float64
	for _, pts := range series {
		for _, q := range pts {
			ys = append(ys, q.y)
		}
	}
	sayIfAllZero(p, ys, "every run's "+spec.what+" is 0 ms")
	// A label is about 7% of the axis wide and 3% high: closer ones
	// would be drawn over each other.
	marks = stackLabels(marks, 0.07*(p.X.Max-p.X.Min), 0.03*p.Y.Max)
	if lab, ok := pointLabels(marks.XYs, marks.Labels, draw.XCenter, draw.YBottom, vg.Point{Y: vg.Points(9)}); ok && len(keys) > 0 {
		p.Add(lab)
	}
	res.png, res.data = renderOrNote(&res, []*plot.Plot{p}, legend), data
	return res
}

// stackLabels joins the labels of points that lie within dx and dy of
// each other, which would be drawn over each other, into one label above
// the highest of them, a line each (once), the highest point's first; the
// rest stay where they are.
func stackLabels(in plotter.XYLabels, dx, dy float64) plotter.XYLabels {
	order := make([]int, len(in.Labels))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return in.XYs[order[a]].Y > in.XYs[order[b]].Y })
	var out plotter.XYLabels
	lowest := []float64{} // per label out: the lowest point it labels
	for _, i := range order {
		q := in.XYs[i]
		joined := false
		for k, at := range out.XYs {
			if math.Abs(q.X-at.X) <= dx && lowest[k]-q.Y <= dy {
				if !slices.Contains(strings.Split(out.Labels[k], "\n"), in.Labels[i]) {
					out.Labels[k] += "\n" + in.Labels[i]
				}
				lowest[k] = q.Y
				joined = true
				break
			}
		}
		if !joined {
			out.XYs = append(out.XYs, q)
			out.Labels = append(out.Labels, in.Labels[i])
			lowest = append(lowest, q.Y)
		}
	}
	return out
}

// timingLines is the lines of one series of a timing plot: per
// configuration of its runs (configLines), its points in the order of the
// parameter the line follows, and that parameter.
func timingLines(runs []*sweep.StoredRun, pts []timingPt, swept []string) ([]plotter.XYs, string) {
	own := make([]*sweep.StoredRun, len(pts))
	for i, q := range pts {
		own[i] = runs[q.run]
	}
	param, line := configLines(own, swept)
	vals := make([]string, len(own))
	for i, r := range own {
		vals[i] = runSettings(r)[param]
	}
	byLine := map[int][]int{}
	n := 0
	for i, l := range line {
		if l >= 0 {
			byLine[l] = append(byLine[l], i)
			n = max(n, l+1)
		}
	}
	var lines []plotter.XYs
	for l := 0; l < n; l++ {
		members := byLine[l]
		sort.SliceStable(members, func(a, b int) bool { return lessValue(vals[members[a]], vals[members[b]]) })
		xys := make(plotter.XYs, len(members))
		for k, i := range members {
			xys[k] = plotter.XY{X: pts[i].x, Y: pts[i].y}
		}
		lines = append(lines, xys)
	}
	return lines, param
}

// placedLabel is a point label already drawn: where, and what.
type placedLabel struct {
	x     float64
	label string
}

// labelHighest blanks the labels that are drawn already: a label is drawn
// once for the points that carry it at about the same x (within near) —
// replicates over seeds, variants that align alike — above the highest of
// them, since drawn on a lower one it would sit on the marker or the line
// above. placed holds the labels of series drawn before; it returns them
// with this series' own.
func labelHighest(xys plotter.XYs, labels []string, placed []placedLabel, near float64) []placedLabel {
	byHeight := make([]int, len(labels))
	for i := range byHeight {
		byHeight[i] = i
	}
	sort.SliceStable(byHeight, func(a, b int) bool { return xys[byHeight[a]].Y > xys[byHeight[b]].Y })
	for _, i := range byHeight {
		for _, q := range placed {
			if q.label == labels[i] && math.Abs(q.x-xys[i].X) <= near {
				labels[i] = ""
				break
			}
		}
		if labels[i] != "" {
			placed = append(placed, placedLabel{xys[i].X, labels[i]})
		}
	}
	return placed
}

// acksPlot: ack messages per input record, per run of the group that
// reports acks.
func acksPlot(g *group) overheadResult {
	res := overheadResult{file: g.Prefix + "acks-per-record", title: "Ack messages per input record"}
	data := &table{header: []string{"series", "key", "value", "appended_records", "acks_per_record"}}
	var names []string
	var vals plotter.Values
	for i, r := range g.Runs {
		per, key, ok := lookupAcksPerRecord.find(r)
		raw := per
		if !ok {
			var n float64
			if n, key, ok = lookupAcks.find(r); !ok {
				continue
			}
			raw = n
			per = n / math.Max(1, float64(r.Result.AppendedRecords))
		}
		names = append(names, g.Labels[i])
		vals = append(vals, per)
		data.add(g.Labels[i], key, raw, r.Result.AppendedRecords, per)
	}
	if len(names) == 0 {
		res.note = "no run reports ack messages (looked for " + lookupAcksPerRecord.preferred[0] + ", " + lookupAcks.describe() + ")"
		return res
	}
	if len(names) == 1 {
		// One bar is a number, not a comparison: say it.
		res.note = fmt.Sprintf("only %s reports acks: %.4g ack messages per input record (%s = %s); a plot needs two runs to compare",
			names[0], vals[0], data.rows[0][1], data.rows[0][2])
		return res
	}
	p := newBarPlot(res.title, "ack messages per input record")
	width := min(vg.Points(60), imageWidth*0.75/vg.Length(len(names))*0.6)
	bc, err := plotter.NewBarChart(vals, width)
	if err != nil {
		res.note = err.Error()
		return res
	}
	bc.Color, bc.LineStyle.Width = palette[1], 0
	p.Add(bc)
	lab := valueLabels(vals, 0, width, nil)
	if lab != nil {
		p.Add(lab)
	}
	categoryLabels(p, names)
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4
	ymax := 0.0
	for _, v := range vals {
		ymax = math.Max(ymax, v)
	}
	p.Y.Min, p.Y.Max = 0, math.Max(ymax, 1e-9)*labelHeadroom(rotatedLabels(lab))
	sayIfAllZero(p, vals, "no run sent an ack message")
	res.png, res.data = renderOrNote(&res, []*plot.Plot{p}, nil), data
	return res
}

func renderOrNote(res *overheadResult, panels []*plot.Plot, legend []legendEntry) []byte {
	png, err := render(panels, legend)
	if err != nil {
		res.note = "rendering failed: " + err.Error()
		return nil
	}
	return png
}

// valueLabels writes each bar's value above it. A label wider than its bar
// would run into the next bar's, so then every label stands upright, read
// bottom to top (rotatedLabels says whether they did, for the headroom).
func valueLabels(vals plotter.Values, offset, barWidth vg.Length, relabel func(i int) (string, bool)) *plotter.Labels {
	xys := make(plotter.XYs, len(vals))
	labels := make([]string, len(vals))
	for i, v := range vals {
		xys[i] = plotter.XY{X: float64(i), Y: v}
		labels[i] = humanCount(v)
		if relabel != nil {
			if l, ok := relabel(i); ok {
				labels[i] = l
			}
		}
	}
	lab, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
	if err != nil {
		return nil
	}
	upright := false
	for i := range lab.TextStyle {
		lab.TextStyle[i].XAlign = draw.XCenter
		lab.TextStyle[i].Font.Size = vg.Points(9)
		if lab.TextStyle[i].Width(labels[i]) > barWidth {
			upright = true
		}
	}
	lab.Offset = vg.Point{X: offset, Y: vg.Points(3)}
	if upright {
		for i := range lab.TextStyle {
			lab.TextStyle[i].Rotation = math.Pi / 2
			lab.TextStyle[i].XAlign, lab.TextStyle[i].YAlign = draw.XLeft, draw.YCenter
		}
	}
	return lab
}

// labelHeadroom is the y range above the tallest bar, as a factor, that its
// value label needs: more when the labels stand upright.
func labelHeadroom(upright bool) float64 {
	if upright {
		return 1.3
	}
	return 1.15
}

// rotatedLabels reports whether valueLabels stood lab's labels upright.
func rotatedLabels(lab *plotter.Labels) bool {
	return lab != nil && len(lab.TextStyle) > 0 && lab.TextStyle[0].Rotation != 0
}

func nanIf(cond bool, v float64) float64 {
	if cond {
		return math.NaN()
	}
	return v
}

// meanLag is the mean source lag over the buckets while input is appended.
func meanLag(r *sweep.StoredRun) float64 {
	var sum float64
	n := 0
	for _, row := range r.Series {
		if row.T < r.Result.Config.DurationS {
			sum += row.Lag
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

func (l lookup) describe() string {
	src := "system_metrics"
	if l.counters {
		src += " or counters"
	}
	return fmt.Sprintf("%s or a similar key in %s, see docs/reports.md", l.preferred[0], src)
}

// an is s with its indefinite article.
func an(s string) string {
	if s != "" && strings.ContainsRune("aeiou", rune(s[0])) {
		return "an " + s
	}
	return "a " + s
}
