// Package view renders a traced run as one self-contained HTML page
// (run.html): a space-time diagram of the run's bounded trace (trace.jsonl),
// the checkpoint, batch, transaction or ack-tree history, the run summary and
// throughput and latency over time. Everything the page needs is inlined:
// the charting library (uPlot, vendored under assets/, see assets/README.md),
// the page's script and style, and the data as JSON, so the page opens from
// file:// with no network access. It also renders a report's index.html (see
// index.go). Like reports, it reads results folders only, never the engine.
package view

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"sort"

	"ftbench/harness"
	"ftbench/sweep"
	"ftbench/trace"
)

// TraceFile and PageFile are the trace a run folder holds when it was traced
// and the page View writes next to it.
const (
	TraceFile = "trace.jsonl"
	PageFile  = "run.html"
)

// ErrNotTraced means the run folder has no trace.jsonl: the run was made
// without --trace.
var ErrNotTraced = errors.New("no " + TraceFile + " (run with bench run --trace)")

// The inlined assets (assets/README.md says where uPlot comes from).
var (
	//go:embed assets/uPlot.iife.min.js
	uplotJS string
	//go:embed assets/uPlot.min.css
	uplotCSS string
	//go:embed assets/view.css
	viewCSS string
	//go:embed assets/common.js
	commonJS string
	//go:embed assets/view.js
	viewJS string
	//go:embed assets/index.js
	indexJS string
	//go:embed assets/*.tmpl
	pageTemplates embed.FS
)

var templates = template.Must(template.New("").ParseFS(pageTemplates, "assets/*.tmpl"))

// Lane is one process of the diagram: a row, grouped by worker.
type Lane struct {
	Name   string   `json:"name"`
	Worker int      `json:"worker"`
	Ops    []string `json:"ops,omitempty"`
}

// Diagram is the space-time diagram's data, compacted for the page: kinds
// and lanes are indexed so that a message is a short array.
type Diagram struct {
	FromNS    int64  `json:"from_ns"`
	ToNS      int64  `json:"to_ns"`
	BucketNS  int64  `json:"bucket_ns"`
	Truncated bool   `json:"truncated,omitempty"`
	Lanes     []Lane `json:"lanes"`
	// Kinds are the message kinds; Msgs[i][4] indexes it.
	Kinds []string `json:"kinds"`
	// Msgs are [send t, recv t (0: never received), from lane, to lane,
	// kind, id, 1 if control else 0].
	Msgs [][7]int64 `json:"msgs"`
	// Counts are [bucket t, from lane, to lane, messages, kind] of the
	// sampled kinds (data records, Storm's ack stream).
	Counts [][5]int64     `json:"counts"`
	Events []trace.Record `json:"events"`
	Faults []trace.Record `json:"faults"`
	// Phases are the recovery steps run.json records after each crash.
	Phases []Phase `json:"phases"`
}

// Phase is one recorded recovery step: at AtNS the step Label was reached.
type Phase struct {
	AtNS  int64  `json:"at_ns"`
	Label string `json:"label"`
}

// Series is timeseries.csv, column by column, for the charts.
type Series struct {
	T       []float64    `json:"t"`
	PerS    []float64    `json:"per_s"`
	Lag     []float64    `json:"lag"`
	P50     []float64    `json:"p50"`
	P99     []float64    `json:"p99"`
	FaultsS [][2]float64 `json:"faults_s"`
}

// Page is everything run.html shows.
type Page struct {
	Title   string   `json:"title"`
	Summary string   `json:"summary"`
	Replay  string   `json:"replay"`
	Diagram Diagram  `json:"diagram"`
	History *History `json:"history"`
	Series  Series   `json:"series"`
}

// Load reads a traced run folder into a Page; summary is bench run's printed
// account of the run (the caller renders it, as bench run does).
func Load(dir, summary string) (*Page, error) {
	f, err := os.Open(filepath.Join(dir, TraceFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", dir, ErrNotTraced)
	}
	if err != nil {
		return nil, err
	}
	h, recs, err := trace.Read(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, TraceFile), err)
	}
	run, err := sweep.LoadRun(dir)
	if err != nil {
		return nil, err
	}
	r := run.Result
	p := &Page{
		Title:   fmt.Sprintf("%s/%s on %s, seed %d", r.System, r.Variant, r.Workload, r.Seed),
		Summary: summary,
		Replay:  r.Replay + " --trace",
		Diagram: diagram(h, recs, r),
		History: history(r, run.Events, recs),
		Series:  series(run),
	}
	p.History.tagMsgs(&p.Diagram)
	return p, nil
}

// diagram indexes the trace's lanes and kinds and splits its records.
func diagram(h trace.Header, recs []trace.Record, r *harness.Result) Diagram {
	d := Diagram{FromNS: h.FromNS, ToNS: h.ToNS, BucketNS: h.BucketNS, Truncated: h.Truncated,
		Msgs: [][7]int64{}, Counts: [][5]int64{}, Events: []trace.Record{}, Faults: []trace.Record{}, Phases: []Phase{}}
	lane := map[string]int{}
	for _, p := range h.Processes {
		lane[p.Name] = len(d.Lanes)
		d.Lanes = append(d.Lanes, Lane(p))
	}
	kind := map[string]int{}
	kindOf := func(k string) int64 {
		i, ok := kind[k]
		if !ok {
			i = len(d.Kinds)
			kind[k] = i
			d.Kinds = append(d.Kinds, k)
		}
		return int64(i)
	}
	laneOf := func(name string) int64 {
		if i, ok := lane[name]; ok {
			return int64(i)
		}
		return -1 // not a process of the header: drawn at the top, not on a lane
	}
	for _, rec := range recs {
		switch rec.Type {
		case trace.TypeMsg:
			ctrl := int64(0)
			if rec.Ctrl {
				ctrl = 1
			}
			d.Msgs = append(d.Msgs, [7]int64{rec.T, rec.Recv, laneOf(rec.From), laneOf(rec.To), kindOf(rec.Kind), rec.ID, ctrl})
		case trace.TypeCount:
			d.Counts = append(d.Counts, [5]int64{rec.T, laneOf(rec.From), laneOf(rec.To), rec.Data, kindOf(rec.Kind)})
		case trace.TypeEvent:
			d.Events = append(d.Events, rec)
		case trace.TypeFault:
			d.Faults = append(d.Faults, rec)
		}
	}
	for _, rc := range r.Recoveries {
		if rc.Phases == nil {
			continue
		}
		at := func(s *float64, label string) {
			if s != nil {
				d.Phases = append(d.Phases, Phase{AtNS: int64((rc.AtS + *s) * 1e9), Label: label})
			}
		}
		ph := rc.Phases
		at(ph.DetectedS, "detected")
		at(ph.WorkerUpS, "worker up")
		at(ph.RedeployedS, "redeployed")
		at(ph.RestoredS, "restored")
		at(ph.RecomputedS, "recomputed")
		at(ph.SpoutResumedS, "spout resumed")
		if ph.CatchUpS != nil && len(d.Phases) > 0 {
			last := d.Phases[len(d.Phases)-1].AtNS
			d.Phases = append(d.Phases, Phase{AtNS: last + int64(*ph.CatchUpS*1e9), Label: "caught up"})
		}
	}
	sort.SliceStable(d.Phases, func(i, j int) bool { return d.Phases[i].AtNS < d.Phases[j].AtNS })
	return d
}

func series(run *sweep.StoredRun) Series {
	s := Series{T: []float64{}, PerS: []float64{}, Lag: []float64{}, P50: []float64{}, P99: []float64{}, FaultsS: [][2]float64{}}
	for _, row := range run.Series {
		s.T = append(s.T, row.T)
		s.PerS = append(s.PerS, row.CommittedPerS)
		s.Lag = append(s.Lag, row.Lag)
		s.P50 = append(s.P50, row.P50)
		s.P99 = append(s.P99, row.P99)
	}
	// A fault's band: from fault_start for its value (a window fault's
	// length) or, for a crash, the worker_crash's down time at that instant.
	down := map[int64]int64{}
	for _, e := range run.Events {
		if e.Kind == "worker_crash" {
			down[int64(e.Time)] = e.Value
		}
	}
	for _, e := range run.Events {
		if e.Kind == "fault_start" {
			t := int64(e.Time)
			s.FaultsS = append(s.FaultsS, [2]float64{float64(t) / 1e9, float64(t+max(e.Value, down[t])) / 1e9})
		}
	}
	return s
}

// Render writes p as one HTML document.
func Render(p *Page) ([]byte, error) {
	return render("run.html.tmpl", viewJS, p.Title, p)
}

// render executes a page template with the shared assets inlined, the
// page's own script js and data as JSON (html/template escapes "</script>"
// out of the data, as JSON marshalling does with <, > and &).
func render(tmpl, js, title string, data any) ([]byte, error) {
	b, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	err = templates.ExecuteTemplate(&buf, tmpl, map[string]any{
		"Title":    title,
		"UPlotCSS": template.CSS(uplotCSS),
		"CSS":      template.CSS(viewCSS),
		"UPlotJS":  template.JS(uplotJS),
		"CommonJS": template.JS(commonJS),
		"JS":       template.JS(js),
		"Data":     template.JS(b),
	})
	return buf.Bytes(), err
}

// Write renders the traced run in dir as dir/run.html (written atomically)
// and returns its path.
func Write(dir, summary string) (string, error) {
	p, err := Load(dir, summary)
	if err != nil {
		return "", err
	}
	return Save(dir, p)
}

// Save writes p as dir/run.html (atomically) and returns its path.
func Save(dir string, p *Page) (string, error) {
	b, err := Render(p)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, PageFile)
	return path, sweep.WriteFileAtomic(path, b)
}

// Traced reports whether dir holds a trace.
func Traced(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, TraceFile))
	return err == nil
}
