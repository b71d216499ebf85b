package chapter

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"ftbench/capacity"
	"ftbench/harness"
	"ftbench/sweep"
)

// Results are the campaign's outcomes by job ID: a capacity search's
// capacity.json or a run's run.json, as stored under Out.
type Results struct {
	Out  string
	Caps map[string]*capacity.Result
	Runs map[string]*harness.Result
	// Failed are jobs that could not run, with why (the table reads "not
	// measured" for them).
	Failed map[string]string
	// Dirs are the jobs' result folders, relative to Out.
	Dirs map[string]string
}

// capacityFile is a search's result in its job folder (the name bench
// capacity and reports use).
const capacityFile = "capacity.json"

// Folder is where a job's results go under out. A capacity search writes
// out/runs/ID/capacity.json. A run writes its run folder TIMESTAMP-ID into
// out/runs/MEASURE/, beside the other setups' runs of the same measure, so
// that reports draws them together (one throughput timeline per system).
func (j Job) Folder(out string) string {
	if j.Capacity {
		return filepath.Join(out, "runs", j.ID)
	}
	return filepath.Join(out, "runs", string(j.Measure))
}

// stampLen is the length of a run ID's timestamp (harness.NewRunID).
const stampLen = len("20060102T150405.000000")

// findRun is the run folder of job id in dir, "" if none is finished
// (harness.Write renames a complete folder into place, so any is).
func findRun(dir, id string) (string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	found := ""
	for _, e := range entries {
		if n := e.Name(); e.IsDir() && len(n) > stampLen && n[stampLen] == '-' && n[stampLen+1:] == id {
			found = n // the last in name order: the newest
		}
	}
	return found, nil
}

// Run executes the jobs not yet finished under out (a job is finished when
// its folder holds capacity.json or run.json: re-running resumes), jobs at
// a time, and loads every result. Runs whose rate is half a capacity wait
// for that search. Progress lines go to w.
func Run(out string, list []Job, jobs int, w io.Writer) (*Results, error) {
	res := &Results{Out: out, Caps: map[string]*capacity.Result{}, Runs: map[string]*harness.Result{}, Failed: map[string]string{}, Dirs: map[string]string{}}
	if jobs < 1 {
		jobs = 1
	}
	var mu sync.Mutex
	started := time.Now()
	done := 0
	do := func(j Job) {
		err := runJob(out, j, res, &mu)
		mu.Lock()
		defer mu.Unlock()
		done++
		status := "done"
		if err != nil {
			res.Failed[j.ID] = err.Error()
			status = "FAILED: " + err.Error()
		}
		fmt.Fprintf(w, "[%3d/%d %5.1fs] %s %s\n", done, len(list), time.Since(started).Seconds(), j.ID, status)
	}
	// Two phases: the searches, then the runs (some take a search's rate).
	for _, capacityPhase := range []bool{true, false} {
		queue := make(chan Job)
		var wg sync.WaitGroup
		for range jobs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range queue {
					do(j)
				}
			}()
		}
		for _, j := range list {
			if j.Capacity == capacityPhase {
				queue <- j
			}
		}
		close(queue)
		wg.Wait()
	}
	return res, nil
}

// runJob runs (or loads) one job and stores its result in res.
func runJob(out string, j Job, res *Results, mu *sync.Mutex) error {
	dir := j.Folder(out)
	if j.Capacity {
		path := filepath.Join(dir, capacityFile)
		c, err := loadCapacity(path)
		if errors.Is(err, fs.ErrNotExist) || err == nil && c.Command != j.Command() {
			// Not run yet, or run by another campaign (a changed
			// definition): search again, replacing the file.
			c, err = searchCapacity(j, dir)
		}
		if err != nil {
			return err
		}
		mu.Lock()
		res.Caps[j.ID] = c
		res.Dirs[j.ID] = filepath.Join("runs", j.ID)
		mu.Unlock()
		return nil
	}
	cfg, err := runConfig(j, res, mu)
	if err != nil {
		return err
	}
	name, err := findRun(dir, j.ID)
	if err != nil {
		return err
	}
	var r *harness.Result
	if name != "" {
		r, err = loadRun(filepath.Join(dir, name, "run.json"))
	}
	if name == "" || err == nil && r.Replay != cfg.ReplayCommand() {
		// Not run yet, or run with another configuration (a changed
		// campaign, or a capacity searched again): run it now, in a
		// newer folder, which findRun prefers.
		r, name, err = execute(cfg, j.ID, dir)
	}
	if err != nil {
		return err
	}
	mu.Lock()
	res.Runs[j.ID] = r
	res.Dirs[j.ID] = filepath.Join("runs", string(j.Measure), name)
	mu.Unlock()
	return nil
}

func loadCapacity(path string) (*capacity.Result, error) {
	c, err := capacity.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(c.Systems) != 1 {
		return nil, fmt.Errorf("%s: want one system's capacity, got %d", path, len(c.Systems))
	}
	return c.Systems[0], nil
}

func loadRun(path string) (*harness.Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r harness.Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// searchCapacity runs the job's capacity search and writes its
// capacity.json into dir atomically (a temporary file renamed).
func searchCapacity(j Job, dir string) (*capacity.Result, error) {
	o := capacity.Options{Base: j.Config, LatencyBound: j.LatencyBound, Tolerance: j.Tolerance}
	c, err := capacity.Find(o, nil)
	if err != nil {
		return nil, err
	}
	c.Command = j.Command()
	b, err := harness.MarshalIndent(c)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return c, sweep.WriteFileAtomic(filepath.Join(dir, capacityFile), b)
}

// runConfig is a run job's configuration: its Config, with the rate set
// to half a capacity for a latency run.
func runConfig(j Job, res *Results, mu *sync.Mutex) (harness.Config, error) {
	cfg := j.Config
	if j.HalfOf != "" {
		mu.Lock()
		c := res.Caps[j.HalfOf]
		mu.Unlock()
		if c == nil || c.CapacityRPS == nil {
			return cfg, fmt.Errorf("no capacity from %s to take half of", j.HalfOf)
		}
		cfg.Rate = *c.CapacityRPS / 2
	}
	return cfg, nil
}

// execute runs cfg and writes its run folder TIMESTAMP-ID into dir with
// harness.Write (a temporary folder renamed into place).
func execute(cfg harness.Config, id, dir string) (*harness.Result, string, error) {
	o, err := harness.Execute(cfg)
	if err != nil {
		return nil, "", err
	}
	name := time.Now().UTC().Format("20060102T150405.000000") + "-" + id
	if _, err := harness.Write(dir, name, o); err != nil {
		return nil, "", err
	}
	return o.Result, name, nil
}
