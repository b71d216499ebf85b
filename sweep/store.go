package sweep

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"ftbench/engine"
	"ftbench/harness"
	"ftbench/metrics"
)

// Results files, as harness.Write stores them.
const (
	RunFile    = "run.json"
	SeriesFile = "timeseries.csv"
	EventsFile = "events.jsonl"
	// FailedFile stands in for run.json in the folder of a run that could
	// not execute (bad configuration for that system, or an internal error).
	FailedFile = "failed.json"
	// ManifestFile, CurveJSON and CurveCSV sit at the top of a sweep folder.
	ManifestFile = "sweep.json"
	CurveJSON    = "curve.json"
	CurveCSV     = "curve.csv"
)

// SeriesRow is one bucket of timeseries.csv.
type SeriesRow struct {
	T             float64 // bucket start, s
	Committed     float64 // effects committed in the bucket
	CommittedPerS float64 // effects/s
	Lag           float64 // source lag at the bucket's end, records
	P50, P99      float64 // latency of the bucket's commits, ms; 0 = none
}

// StoredRun is one run read back from its folder.
type StoredRun struct {
	Dir    string
	Name   string // folder name
	Key    string // run key from the folder name ("" for runs not made by a sweep)
	Result *harness.Result
	Series []SeriesRow
	Events []engine.Event
}

// FailedRun is failed.json.
type FailedRun struct {
	Format  string   `json:"format"`
	System  string   `json:"system"`
	Variant string   `json:"variant"`
	Seed    uint64   `json:"seed"`
	Point   string   `json:"point"`
	Params  []KV     `json:"params"`
	Key     string   `json:"key"`
	Input   bool     `json:"input_error"` // the configuration was refused (exit 2), not a crash
	Error   string   `json:"error"`
	Replay  string   `json:"replay"`
	Dir     string   `json:"-"`
	Faults  []string `json:"faults"`
}

// FailedFormat identifies failed.json.
const FailedFormat = "ftbench-failed-run/1"

// Problem is a results file that could not be read.
type Problem struct {
	Path string
	Err  error
}

func (p Problem) String() string {
	if msg := p.Err.Error(); strings.Contains(msg, p.Path) {
		return msg // the error names the file already
	}
	return p.Path + ": " + p.Err.Error()
}

// Store is what a results folder holds.
type Store struct {
	Runs     []*StoredRun // sorted by folder name (oldest first for harness run ids)
	Failed   []*FailedRun
	Problems []Problem // unreadable run folders, named
	Partial  []string  // leftovers of interrupted writes (hidden .tmp-* folders)
}

var keySuffix = regexp.MustCompile(`-([0-9a-f]{12})$`)

// KeyOf returns the run key at the end of a folder name, or "".
func KeyOf(name string) string {
	if m := keySuffix.FindStringSubmatch(name); m != nil {
		return m[1]
	}
	return ""
}

// Scan reads every run folder directly under dir (dir itself too, if it is
// a run folder). Unreadable runs become Problems; nothing is fatal except
// an unreadable dir.
func Scan(dir string) (*Store, error) {
	st := &Store{}
	if _, err := os.Stat(filepath.Join(dir, RunFile)); err == nil {
		r, err := LoadRun(dir)
		if err != nil {
			st.Problems = append(st.Problems, Problem{dir, err})
		} else {
			st.Runs = append(st.Runs, r)
		}
		return st, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() {
			continue
		}
		path := filepath.Join(dir, name)
		if strings.HasPrefix(name, ".tmp-") {
			st.Partial = append(st.Partial, path)
			continue
		}
		if strings.HasPrefix(name, ".") {
			continue
		}
		if _, err := os.Stat(filepath.Join(path, FailedFile)); err == nil {
			f, err := loadFailed(path)
			if err != nil {
				st.Problems = append(st.Problems, Problem{filepath.Join(path, FailedFile), err})
				continue
			}
			st.Failed = append(st.Failed, f)
			continue
		}
		if _, err := os.Stat(filepath.Join(path, RunFile)); err != nil {
			continue // not a run folder (a report, a shard, ...)
		}
		r, err := LoadRun(path)
		if err != nil {
			st.Problems = append(st.Problems, Problem{path, err})
			continue
		}
		st.Runs = append(st.Runs, r)
	}
	return st, nil
}

// LoadRun reads a run folder: run.json, timeseries.csv and events.jsonl
// (the last is optional). Errors name the file.
func LoadRun(dir string) (*StoredRun, error) {
	r := &StoredRun{Dir: dir, Name: filepath.Base(dir), Key: KeyOf(filepath.Base(dir))}
	path := filepath.Join(dir, RunFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	res, err := DecodeResult(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r.Result = res
	path = filepath.Join(dir, SeriesFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r.Series, err = ReadSeries(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	path = filepath.Join(dir, EventsFile)
	if f, err := os.Open(path); err == nil {
		r.Events, err = ReadEvents(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return r, nil
}

// DecodeResult parses run.json and checks the keys every consumer relies on.
func DecodeResult(b []byte) (*harness.Result, error) {
	var res harness.Result
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("not a run.json: %v", err)
	}
	switch {
	case res.System == "":
		return nil, errors.New("not a run.json: no system")
	case res.Config.DurationS <= 0:
		return nil, errors.New("not a run.json: no config.duration_s")
	}
	return &res, nil
}

// seriesRequired are the timeseries.csv columns a report needs; columns
// added to metrics.CSVHeader later (checkpoints_completed, ...) are optional
// so results stored by an older bench still read.
var seriesRequired = strings.Split(metrics.CSVHeader, ",")[:6]

// ReadSeries parses timeseries.csv by column name (metrics.CSVHeader);
// unknown extra columns are ignored.
func ReadSeries(r io.Reader) ([]SeriesRow, error) {
	cr := csv.NewReader(r)
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("no header: %v", err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	for _, want := range seriesRequired {
		if _, ok := col[want]; !ok {
			return nil, fmt.Errorf("header lacks column %s", want)
		}
	}
	var rows []SeriesRow
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		get := func(name string) (float64, error) {
			v, err := strconv.ParseFloat(rec[col[name]], 64)
			if err != nil {
				return 0, fmt.Errorf("line %d: %s=%q is not a number", line, name, rec[col[name]])
			}
			return v, nil
		}
		var row SeriesRow
		for _, f := range []struct {
			name string
			dst  *float64
		}{
			{"t_s", &row.T}, {"committed", &row.Committed}, {"committed_per_s", &row.CommittedPerS},
			{"source_lag", &row.Lag}, {"latency_p50_ms", &row.P50}, {"latency_p99_ms", &row.P99},
		} {
			if *f.dst, err = get(f.name); err != nil {
				return nil, err
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// ReadEvents parses events.jsonl.
func ReadEvents(r io.Reader) ([]engine.Event, error) {
	var evs []engine.Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var e engine.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		evs = append(evs, e)
	}
	return evs, sc.Err()
}

func loadFailed(dir string) (*FailedRun, error) {
	b, err := os.ReadFile(filepath.Join(dir, FailedFile))
	if err != nil {
		return nil, err
	}
	var f FailedRun
	if err := json.Unmarshal(b, &f); err != nil || f.Format != FailedFormat {
		return nil, fmt.Errorf("not a %s file", FailedFormat)
	}
	f.Dir = dir
	return &f, nil
}

// WriteFileAtomic writes data to path through a temporary file in the same
// folder and a rename, so a reader sees the old file or the new one.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(path)+"-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// writeDirAtomic creates root/name holding files, through a temporary
// folder and a rename.
func writeDirAtomic(root, name string, files map[string][]byte) error {
	tmp, err := os.MkdirTemp(root, ".tmp-"+name+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, f := range sortedKeys(files) {
		if err := os.WriteFile(filepath.Join(tmp, f), files[f], 0o644); err != nil {
			return err
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(root, name))
}

// marshal encodes JSON with two-space indentation and a final newline,
// with replay lines and commands unescaped (harness.MarshalIndent).
func marshal(v any) []byte {
	b, err := harness.MarshalIndent(v)
	if err != nil {
		panic(err) // only plain data is marshalled here
	}
	return b
}

// ReadManifest reads dir/sweep.json; ok is false when there is none.
func ReadManifest(dir string) (m *Manifest, ok bool, err error) {
	path := filepath.Join(dir, ManifestFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	m = &Manifest{}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, true, fmt.Errorf("%s: not a sweep manifest (this bench reads %s and the older %s): %v", path, ManifestFormat, ManifestFormatV1, err)
	}
	return m, true, nil
}

// byKey indexes a store's runs and failures by run key; the newest folder
// (by name; run ids start with a timestamp) wins.
func (st *Store) byKey() (runs map[string]*StoredRun, failed map[string]*FailedRun) {
	runs = map[string]*StoredRun{}
	failed = map[string]*FailedRun{}
	sort.Slice(st.Runs, func(i, j int) bool { return st.Runs[i].Name < st.Runs[j].Name })
	for _, r := range st.Runs {
		if r.Key != "" {
			runs[r.Key] = r
		}
	}
	for _, f := range st.Failed {
		if old, ok := failed[f.Key]; !ok || filepath.Base(old.Dir) < filepath.Base(f.Dir) {
			failed[f.Key] = f
		}
	}
	return runs, failed
}
