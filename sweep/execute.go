package sweep

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"ftbench/harness"
)

// Options control how a sweep executes.
type Options struct {
	Jobs   int  // parallel runs; 0 = runtime.NumCPU()
	Resume bool // reuse runs already in the folder
	// Progress, if set, is called after each run, from one goroutine at a
	// time.
	Progress func(Progress)
	// Start, if set, is called once before runs execute with the number
	// of runs to execute and the shard's total (the rest are reused).
	Start func(todo, total int)
	// Notice, if set, receives one-line notes (corrupt files found, partial
	// folders removed, points left out of the grid).
	Notice func(string)
	// Now names run folders; default time.Now.
	Now func() time.Time
}

// Progress reports one finished run.
type Progress struct {
	Done, Total int
	Run         *Run
	Err         error         // the run failed
	Wall        time.Duration // this run's wall time
	Elapsed     time.Duration // since the sweep started
	ETA         time.Duration // estimated time to finish the remaining runs
}

// Outcome is a finished sweep.
type Outcome struct {
	Grid     *Grid
	Runs     []*RunOutcome // every run of the shard, in grid order
	Executed int           // runs executed now (the rest were reused)
	Problems []Problem     // corrupt results found (and re-run)
	Curve    *Curve
}

// RunOutcome is one run's result or failure.
type RunOutcome struct {
	Run    *Run
	Dir    string
	Result *harness.Result // nil when failed
	Failed *FailedRun
	Reused bool
}

// InputError is a problem with the sweep's own input (exit code 2).
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// IsInputError reports whether err is bad input.
func IsInputError(err error) bool {
	var ie *InputError
	return errors.As(err, &ie)
}

// Execute runs the manifest's grid (the shard's points only) into folder
// out, then aggregates the results into out/curve.json and out/curve.csv.
// A run that fails is recorded in its folder as failed.json and the sweep
// goes on. With opts.Resume, runs whose results are already in out are not
// run again; unreadable results are reported through opts.Notice and run
// again.
func Execute(out string, m *Manifest, opts Options) (*Outcome, error) {
	if opts.Jobs <= 0 {
		opts.Jobs = runtime.NumCPU()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	notice := opts.Notice
	if notice == nil {
		notice = func(string) {}
	}
	m.Format = ManifestFormat
	grid, err := m.Expand()
	if err != nil {
		return nil, &InputError{err}
	}
	for _, s := range grid.Skipped {
		notice("left out of the grid: " + s)
	}
	old, hasOld, err := ReadManifest(out)
	if hasOld && !opts.Resume {
		return nil, &InputError{fmt.Errorf("%s already holds a sweep; use --resume to finish or extend it, or another --out", out)}
	}
	if err != nil && opts.Resume {
		notice(fmt.Sprintf("%v; writing a new one", err))
	}
	if !hasOld && !opts.Resume && nonEmpty(out) {
		return nil, &InputError{fmt.Errorf("%s is not empty and holds no sweep; choose another --out (or --resume to add to it)", out)}
	}
	if old != nil && old.GridID() != m.GridID() {
		notice(fmt.Sprintf("%s held a different grid; finished runs of the new grid are reused, the rest run", filepath.Join(out, ManifestFile)))
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("results folder: %w", err)
	}
	if err := WriteFileAtomic(filepath.Join(out, ManifestFile), marshal(m)); err != nil {
		return nil, fmt.Errorf("writing %s: %w", ManifestFile, err)
	}
	shard := Shard{I: 1, N: 1}
	if m.Shard != nil {
		shard = *m.Shard
	}

	o := &Outcome{Grid: grid}
	var done map[string]*StoredRun
	if opts.Resume {
		st, err := Scan(out)
		if err != nil {
			return nil, fmt.Errorf("results folder: %w", err)
		}
		for _, p := range st.Partial {
			if err := os.RemoveAll(p); err == nil {
				notice("removed " + p + " (left by an interrupted run)")
			}
		}
		for _, p := range st.Problems {
			notice("corrupt results " + p.String() + "; moved aside and run again")
			dir := p.Path
			if filepath.Base(dir) == FailedFile {
				dir = filepath.Dir(dir)
			}
			_ = os.Rename(dir, filepath.Join(filepath.Dir(dir), ".corrupt-"+filepath.Base(dir)))
		}
		o.Problems = st.Problems
		runs, failed := st.byKey()
		done = runs
		for _, f := range failed {
			if _, ok := runs[f.Key]; !ok {
				// A failed run is tried again: the cause may be fixed.
				_ = os.RemoveAll(f.Dir)
			}
		}
	}

	var todo []*RunOutcome
	for _, r := range grid.Runs {
		if !shard.Has(r.Point.Index) {
			continue
		}
		ro := &RunOutcome{Run: r}
		o.Runs = append(o.Runs, ro)
		if sr, ok := done[r.Key]; ok {
			ro.Dir, ro.Result, ro.Reused = sr.Dir, sr.Result, true
			continue
		}
		todo = append(todo, ro)
	}
	o.Executed = len(todo)
	if opts.Start != nil {
		opts.Start(len(todo), len(o.Runs))
	}
	if err := execute(out, todo, opts, len(o.Runs)-len(todo), len(o.Runs)); err != nil {
		return nil, err
	}
	o.Curve = Aggregate(m, grid, shard, o.Runs)
	if err := WriteCurve(out, o.Curve); err != nil {
		return nil, err
	}
	return o, nil
}

// execute runs todo on opts.Jobs goroutines. Runs are independent and
// deterministic, so their order does not matter.
func execute(out string, todo []*RunOutcome, opts Options, already, total int) error {
	start := time.Now()
	work := make(chan *RunOutcome)
	type result struct {
		ro   *RunOutcome
		err  error
		wall time.Duration
	}
	results := make(chan result)
	var wg sync.WaitGroup
	for range min(opts.Jobs, max(1, len(todo))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ro := range work {
				t0 := time.Now()
				err := runOne(out, ro, opts.Now())
				results <- result{ro, err, time.Since(t0)}
			}
		}()
	}
	go func() {
		for _, ro := range todo {
			work <- ro
		}
		close(work)
		wg.Wait()
		close(results)
	}()
	var fatal error
	finished := 0
	for res := range results {
		finished++
		if res.err != nil && fatal == nil {
			fatal = res.err
		}
		if opts.Progress != nil {
			elapsed := time.Since(start)
			eta := time.Duration(0)
			if rest := len(todo) - finished; rest > 0 {
				eta = time.Duration(float64(elapsed) / float64(finished) * float64(rest))
			}
			var runErr error
			if res.ro.Failed != nil {
				runErr = errors.New(res.ro.Failed.Error)
			}
			opts.Progress(Progress{Done: already + finished, Total: total, Run: res.ro.Run, Err: runErr,
				Wall: res.wall, Elapsed: elapsed, ETA: eta})
		}
	}
	return fatal
}

// runOne executes one run and stores its results (or its failure). Only a
// failure to write is returned: a failing run is an outcome.
func runOne(out string, ro *RunOutcome, now time.Time) error {
	r := ro.Run
	id := harness.NewRunID(r.Config, now) + "-" + r.Key
	res, err := harness.Execute(r.Config)
	if err != nil {
		f := &FailedRun{
			Format: FailedFormat, System: r.Config.System, Variant: r.Config.Variant, Seed: r.Seed,
			Point: r.Point.ID(), Params: r.Point.Params, Key: r.Key, Input: harness.IsInputError(err),
			Error: err.Error(), Replay: r.Config.ReplayCommand(), Faults: r.Config.Faults,
		}
		if err := writeDirAtomic(out, id, map[string][]byte{FailedFile: marshal(f)}); err != nil {
			return fmt.Errorf("writing %s: %w", filepath.Join(out, id), err)
		}
		f.Dir = filepath.Join(out, id)
		ro.Failed, ro.Dir = f, f.Dir
		return nil
	}
	dir, err := harness.Write(out, id, res)
	if err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	ro.Dir, ro.Result = dir, res.Result
	return nil
}

// nonEmpty reports whether dir exists and holds anything but hidden files.
func nonEmpty(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if len(e.Name()) > 0 && e.Name()[0] != '.' {
			return true
		}
	}
	return false
}
