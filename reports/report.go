// Package reports renders stored results as PNG plots (gonum/plot) and a
// summary.md. It reads results folders only (run.json, timeseries.csv,
// events.jsonl, and a sweep's curve.json), never the engine, so any stored
// run can be re-reported. Next to every PNG it writes the plotted data as
// CSV, which is what the tests check.
package reports

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"ftbench/capacity"
	"ftbench/sweep"
)

// Options for Generate.
type Options struct {
	Out string // output folder; default DIR/report
	// MaxGroups bounds how many scenario groups get time-series plots
	// (a sweep has one per point and seed); default 12.
	MaxGroups int
}

// Report is what Generate wrote.
type Report struct {
	Dir, Out string
	Files    []string // written, relative to Out
	Notes    []string // plots skipped and why, corrupt results skipped
	Problems []sweep.Problem
	Runs     int
	// Stored are the runs reported, in report order (bench report renders
	// each traced one's run.html and links it from index.html).
	Stored []*sweep.StoredRun
}

// ErrNoResults means the folder holds nothing to report.
var ErrNoResults = errors.New("no results")

// Generate reads the results in dir (a run folder, a folder of run folders
// such as a compare or sweep, or a results root) and writes the plots,
// their CSV data and summary.md into opts.Out.
func Generate(dir string, opts Options) (*Report, error) {
	opts = opts.withDefaults(dir)
	in, err := loadResults(dir)
	if err != nil {
		return nil, err
	}
	rep := &Report{Dir: dir, Out: opts.Out, Notes: in.notes, Problems: in.store.Problems, Runs: len(in.store.Runs)}
	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return nil, err
	}
	out := output{dir: opts.Out, rep: rep}
	s := &summary{rep: rep, failed: in.store.Failed, curve: in.curve, caps: in.caps}
	if s.capacity, err = writeCapacity(out, in.caps); err != nil {
		return nil, err
	}
	runs := in.store.Runs
	sortRuns(runs)
	rep.Stored = runs
	for _, g := range drawnGroups(dir, runs, opts.MaxGroups, rep) {
		sg, err := writeGroup(out, g)
		if err != nil {
			return nil, err
		}
		s.groups = append(s.groups, sg)
	}
	if s.overhead, s.overheadNotes, err = writeRunOverheads(out, runs, sweptSettings(dir)); err != nil {
		return nil, err
	}
	if s.curves, s.curveNotes, err = writeCurves(out, dir, in.curve); err != nil {
		return nil, err
	}
	if err := out.file("summary.md", s.markdown()); err != nil {
		return nil, err
	}
	sort.Strings(rep.Files)
	return rep, nil
}

// withDefaults fills in the defaults Options documents.
func (o Options) withDefaults(dir string) Options {
	if o.Out == "" {
		o.Out = filepath.Join(dir, "report")
	}
	if o.MaxGroups <= 0 {
		o.MaxGroups = 12
	}
	return o
}

// results is what a folder holds to report on.
type results struct {
	store *sweep.Store
	curve *sweep.Curve         // a sweep's curve.json, if readable
	caps  *capacity.Comparison // a capacity.json, if readable
	notes []string             // what was unreadable and skipped
}

// loadResults reads dir's runs, curve and capacity comparison. Unreadable
// ones are skipped with a note, so one corrupt run does not cost the
// report; only a folder with nothing readable at all is an error.
func loadResults(dir string) (*results, error) {
	if err := requireFolder(dir); err != nil {
		return nil, err
	}
	st, err := sweep.Scan(dir)
	if err != nil {
		return nil, err
	}
	in := &results{store: st}
	for _, p := range st.Problems {
		in.notes = append(in.notes, "skipped unreadable results "+p.String())
	}
	in.curve = readIfPresent(filepath.Join(dir, sweep.CurveJSON), sweep.ReadCurve, &in.notes)
	in.caps = readIfPresent(filepath.Join(dir, CapacityFile), capacity.ReadFile, &in.notes)
	if len(st.Runs) == 0 && in.curve == nil && in.caps == nil {
		if len(st.Problems) > 0 {
			return nil, fmt.Errorf("%w in %s: every run is unreadable (first: %s)", ErrNoResults, dir, st.Problems[0])
		}
		return nil, fmt.Errorf("%w in %s (want run folders with run.json, a sweep's curve.json or a capacity.json)", ErrNoResults, dir)
	}
	return in, nil
}

func requireFolder(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder", dir)
	}
	return nil
}

// readIfPresent reads an optional file with read. One that is absent is
// nil; one that is there but unreadable is nil and noted.
func readIfPresent[T any](path string, read func(string) (*T, error), notes *[]string) *T {
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	v, err := read(path)
	if err != nil {
		*notes = append(*notes, "skipped "+err.Error())
		return nil
	}
	return v
}

// output writes the report's files into its folder and lists each in the
// Report, so Files is exactly what was written.
type output struct {
	dir string
	rep *Report
}

// plot writes name.png and its data as name.csv, and returns the image
// summary.md shows under title.
func (o output) plot(name, title string, png []byte, data *table) (image, error) {
	if err := writePlot(o.dir, name, png, data); err != nil {
		return image{}, fmt.Errorf("writing %s: %w", name, err)
	}
	o.rep.Files = append(o.rep.Files, name+".png", name+".csv")
	return image{title, name + ".png"}, nil
}

// file writes a file that is no plot (a CSV alone, summary.md).
func (o output) file(name string, b []byte) error {
	if err := sweep.WriteFileAtomic(filepath.Join(o.dir, name), b); err != nil {
		return err
	}
	o.rep.Files = append(o.rep.Files, name)
	return nil
}

// overheads writes the overhead plots that were drawn and returns the
// images, and a note for each that was skipped, in the order given.
func (o output) overheads(results ...overheadResult) (images []image, notes []string, err error) {
	for _, r := range results {
		if r.png == nil {
			notes = append(notes, r.title+": skipped — "+r.note)
			continue
		}
		im, err := o.plot(r.file, r.title, r.png, r.data)
		if err != nil {
			return nil, nil, err
		}
		images = append(images, im)
	}
	return images, notes, nil
}

// writeCapacity draws a capacity comparison, when there is one.
func writeCapacity(out output, caps *capacity.Comparison) ([]image, error) {
	if caps == nil || len(caps.Systems) == 0 {
		return nil, nil
	}
	png, data, err := capacityPlot(caps)
	if err != nil {
		return nil, fmt.Errorf("capacity plot: %w", err)
	}
	im, err := out.plot("capacity", "Capacity per system", png, data)
	if err != nil {
		return nil, err
	}
	return []image{im}, nil
}

// drawnGroups groups the runs whose time series are drawn, and notes on
// rep which runs and groups are left out.
func drawnGroups(dir string, runs []*sweep.StoredRun, maxGroups int, rep *Report) []*group {
	groups := groupRuns(firstSeedRuns(dir, runs, rep))
	if len(groups) > maxGroups {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d scenario groups; time-series, delivery and per-group overhead plots drawn for the first %d (by seed)", len(groups), maxGroups))
		groups = groups[:maxGroups]
	}
	return groups
}

// firstSeedRuns keeps, of a sweep over several seeds, the runs of its first
// seed: all of them would draw every point once per seed.
func firstSeedRuns(dir string, runs []*sweep.StoredRun, rep *Report) []*sweep.StoredRun {
	m, ok, _ := sweep.ReadManifest(dir)
	if !ok || len(m.Seeds) <= 1 {
		return runs
	}
	var first []*sweep.StoredRun
	for _, r := range runs {
		if r.Result.Seed == m.Seeds[0] {
			first = append(first, r)
		}
	}
	rep.Notes = append(rep.Notes, fmt.Sprintf("a sweep over seeds %s: time-series and delivery plots show seed %d; the curves aggregate every seed",
		sweep.FormatSeeds(m.Seeds), m.Seeds[0]))
	return first
}

// timePlots are drawn for every scenario group, in this order.
var timePlots = []struct {
	name, title string
	draw        func(*group) ([]byte, *table, error)
}{
	{"throughput", "Throughput over time", throughputPlot},
	{"latency", "End-to-end latency p50 and p99 over time", latencyPlot},
	{"delivery", "Delivery semantics", deliveryPlot},
}

// writeGroup writes one scenario group's fault bands, time plots and
// overhead plots.
func writeGroup(out output, g *group) (*summaryGroup, error) {
	sg := &summaryGroup{g: g}
	if len(g.Bands) > 0 {
		if err := out.file(g.Prefix+"faults.csv", bandTable(g.Bands).bytes()); err != nil {
			return nil, err
		}
	}
	for _, pl := range timePlots {
		png, data, err := pl.draw(g)
		if err != nil {
			return nil, fmt.Errorf("%s plot: %w", pl.name, err)
		}
		im, err := out.plot(g.Prefix+pl.name, pl.title, png, data)
		if err != nil {
			return nil, err
		}
		sg.images = append(sg.images, im)
	}
	images, notes, err := out.overheads(checkpointSizePlot(g), acksPlot(g))
	if err != nil {
		return nil, err
	}
	sg.images = append(sg.images, images...)
	sg.notes = notes
	return sg, nil
}

// writeRunOverheads writes the overhead plots drawn over every run, not
// per group: their x axis is the backpressure each run had. swept names
// the parameters of the sweep the runs come from, if they do.
func writeRunOverheads(out output, runs []*sweep.StoredRun, swept []string) ([]image, []string, error) {
	if len(runs) == 0 {
		return nil, nil, nil
	}
	labels := make([]string, len(runs))
	for i, r := range runs {
		labels[i] = r.Name
	}
	return out.overheads(alignmentPlot(runs, labels, swept...), startDelayPlot(runs, labels, swept...))
}

// writeCurves writes a sweep's metrics against its swept parameter, or
// notes why there are none.
func writeCurves(out output, dir string, curve *sweep.Curve) (images []image, notes []string, err error) {
	if curve == nil {
		return nil, []string{"no curve.json in " + dir + " (not a sweep): parameter curves skipped"}, nil
	}
	if _, ok := sweptParam(curve); !ok {
		return nil, []string{"the sweep varies no parameter (only systems and seeds): parameter curves skipped"}, nil
	}
	for _, m := range curveMetrics {
		png, data, ok, err := curvePlot(curve, m.key, m.title, m.unit)
		if err != nil {
			return nil, nil, fmt.Errorf("%s plot: %w", m.file, err)
		}
		if !ok {
			notes = append(notes, m.title+": skipped — no point has a value for "+m.key)
			continue
		}
		im, err := out.plot(m.file, m.title+" vs the swept parameter", png, data)
		if err != nil {
			return nil, nil, err
		}
		images = append(images, im)
	}
	return images, notes, nil
}
