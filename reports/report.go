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
}

// ErrNoResults means the folder holds nothing to report.
var ErrNoResults = errors.New("no results")

// Generate reads the results in dir (a run folder, a folder of run folders
// such as a compare or sweep, or a results root) and writes the plots,
// their CSV data and summary.md into opts.Out.
func Generate(dir string, opts Options) (*Report, error) {
	if opts.Out == "" {
		opts.Out = filepath.Join(dir, "report")
	}
	if opts.MaxGroups <= 0 {
		opts.MaxGroups = 12
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a folder", dir)
	}
	st, err := sweep.Scan(dir)
	if err != nil {
		return nil, err
	}
	rep := &Report{Dir: dir, Out: opts.Out, Problems: st.Problems, Runs: len(st.Runs)}
	for _, p := range st.Problems {
		rep.Notes = append(rep.Notes, "skipped unreadable results "+p.String())
	}
	var curve *sweep.Curve
	if _, err := os.Stat(filepath.Join(dir, sweep.CurveJSON)); err == nil {
		if curve, err = sweep.ReadCurve(filepath.Join(dir, sweep.CurveJSON)); err != nil {
			rep.Notes = append(rep.Notes, "skipped "+err.Error())
			curve = nil
		}
	}
	var caps *capacity.Comparison
	if _, err := os.Stat(filepath.Join(dir, CapacityFile)); err == nil {
		if caps, err = capacity.ReadFile(filepath.Join(dir, CapacityFile)); err != nil {
			rep.Notes = append(rep.Notes, "skipped "+err.Error())
			caps = nil
		}
	}
	if len(st.Runs) == 0 && curve == nil && caps == nil {
		if len(st.Problems) > 0 {
			return nil, fmt.Errorf("%w in %s: every run is unreadable (first: %s)", ErrNoResults, dir, st.Problems[0])
		}
		return nil, fmt.Errorf("%w in %s (want run folders with run.json, a sweep's curve.json or a capacity.json)", ErrNoResults, dir)
	}
	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return nil, err
	}
	s := &summary{rep: rep, failed: st.Failed, curve: curve, caps: caps}
	write := func(name string, png []byte, data *table) error {
		if err := writePlot(opts.Out, name, png, data); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
		rep.Files = append(rep.Files, name+".png", name+".csv")
		return nil
	}

	if caps != nil && len(caps.Systems) > 0 {
		png, data, err := capacityPlot(caps)
		if err != nil {
			return nil, fmt.Errorf("capacity plot: %w", err)
		}
		if err := write("capacity", png, data); err != nil {
			return nil, err
		}
		s.capacity = append(s.capacity, image{"Capacity per system", "capacity.png"})
	}

	runs := st.Runs
	sortRuns(runs)
	// A sweep over several seeds would draw every point once per seed:
	// draw the time series of its first seed only.
	timeRuns := runs
	if m, ok, _ := sweep.ReadManifest(dir); ok && len(m.Seeds) > 1 {
		timeRuns = nil
		for _, r := range runs {
			if r.Result.Seed == m.Seeds[0] {
				timeRuns = append(timeRuns, r)
			}
		}
		rep.Notes = append(rep.Notes, fmt.Sprintf("a sweep over seeds %s: time-series and delivery plots show seed %d; the curves aggregate every seed",
			sweep.FormatSeeds(m.Seeds), m.Seeds[0]))
	}
	groups := groupRuns(timeRuns)
	if len(groups) > opts.MaxGroups {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d scenario groups; time-series, delivery and per-group overhead plots drawn for the first %d (by seed)", len(groups), opts.MaxGroups))
		groups = groups[:opts.MaxGroups]
	}
	for _, g := range groups {
		sg := &summaryGroup{g: g}
		s.groups = append(s.groups, sg)
		if len(g.Bands) > 0 {
			if err := sweep.WriteFileAtomic(filepath.Join(opts.Out, g.Prefix+"faults.csv"), bandTable(g.Bands).bytes()); err != nil {
				return nil, err
			}
			rep.Files = append(rep.Files, g.Prefix+"faults.csv")
		}
		for _, pl := range []struct {
			name, title string
			draw        func(*group) ([]byte, *table, error)
		}{
			{"throughput", "Throughput over time", throughputPlot},
			{"latency", "End-to-end latency p50 and p99 over time", latencyPlot},
			{"delivery", "Delivery semantics", deliveryPlot},
		} {
			png, data, err := pl.draw(g)
			if err != nil {
				return nil, fmt.Errorf("%s plot: %w", pl.name, err)
			}
			if err := write(g.Prefix+pl.name, png, data); err != nil {
				return nil, err
			}
			sg.images = append(sg.images, image{pl.title, g.Prefix + pl.name + ".png"})
		}
		for _, o := range []overheadResult{checkpointSizePlot(g), acksPlot(g)} {
			if o.png == nil {
				sg.notes = append(sg.notes, o.title+": skipped — "+o.note)
				continue
			}
			if err := write(o.file, o.png, o.data); err != nil {
				return nil, err
			}
			sg.images = append(sg.images, image{o.title, o.file + ".png"})
		}
	}
	if len(runs) > 0 {
		labels := make([]string, len(runs))
		for i, r := range runs {
			labels[i] = r.Name
		}
		for _, o := range []overheadResult{alignmentPlot(runs, labels), startDelayPlot(runs, labels)} {
			if o.png == nil {
				s.overheadNotes = append(s.overheadNotes, o.title+": skipped — "+o.note)
				continue
			}
			if err := write(o.file, o.png, o.data); err != nil {
				return nil, err
			}
			s.overhead = append(s.overhead, image{o.title, o.file + ".png"})
		}
	}
	if curve == nil {
		s.curveNotes = append(s.curveNotes, "no curve.json in "+dir+" (not a sweep): parameter curves skipped")
	} else if _, ok := sweptParam(curve); !ok {
		s.curveNotes = append(s.curveNotes, "the sweep varies no parameter (only systems and seeds): parameter curves skipped")
	} else {
		for _, m := range curveMetrics {
			png, data, ok, err := curvePlot(curve, m.key, m.title, m.unit)
			if err != nil {
				return nil, fmt.Errorf("%s plot: %w", m.file, err)
			}
			if !ok {
				s.curveNotes = append(s.curveNotes, m.title+": skipped — no point has a value for "+m.key)
				continue
			}
			if err := write(m.file, png, data); err != nil {
				return nil, err
			}
			s.curves = append(s.curves, image{m.title + " vs the swept parameter", m.file + ".png"})
		}
	}
	md := s.markdown()
	if err := sweep.WriteFileAtomic(filepath.Join(opts.Out, "summary.md"), md); err != nil {
		return nil, err
	}
	rep.Files = append(rep.Files, "summary.md")
	sort.Strings(rep.Files)
	return rep, nil
}
