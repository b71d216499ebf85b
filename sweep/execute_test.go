package sweep

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"ftbench/engine"
	"ftbench/harness"
)

// tiny is a base configuration that runs in a few tens of milliseconds.
func tiny() harness.Config {
	cfg := harness.DefaultConfig()
	cfg.System, cfg.Seed = "", 0
	cfg.Duration = 2 * engine.Second
	cfg.Rate = 5000
	cfg.Drain = 2 * engine.Second
	cfg.Faults = []string{"crash"}
	return cfg
}

func restartManifest() *Manifest {
	return &Manifest{
		Base:    tiny(),
		Targets: []Target{{System: "none", Variant: "default"}},
		Params:  []Param{{"cost.restart-delay", []string{"200ms", "600ms"}}},
		Seeds:   []uint64{1, 2},
	}
}

type recorder struct {
	mu       sync.Mutex
	progress []Progress
	notes    []string
}

func (r *recorder) opts() Options {
	return Options{
		Jobs:     2,
		Progress: func(p Progress) { r.mu.Lock(); r.progress = append(r.progress, p); r.mu.Unlock() },
		Notice:   func(s string) { r.mu.Lock(); r.notes = append(r.notes, s); r.mu.Unlock() },
	}
}

func metric(t *testing.T, c *Curve, id, name string) *Stat {
	t.Helper()
	for _, p := range c.Points {
		if p.ID == id {
			s, ok := p.Metrics[name]
			if !ok {
				t.Fatalf("point %s has no %s", id, name)
			}
			return s
		}
	}
	t.Fatalf("no point %s in %v", id, c.Points)
	return nil
}

func TestExecuteAggregates(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	var rec recorder
	o, err := Execute(out, restartManifest(), rec.opts())
	if err != nil {
		t.Fatal(err)
	}
	if o.Executed != 4 || len(rec.progress) != 4 || rec.progress[3].Done != 4 || rec.progress[3].Total != 4 {
		t.Fatalf("executed %d, progress %+v", o.Executed, rec.progress)
	}
	// none's losses are not late (staleness stays flat), so the outage
	// shows in the source lag's recovery.
	short := metric(t, o.Curve, "none/default cost.restart-delay=200ms", "lag_recovery_time_s")
	long := metric(t, o.Curve, "none/default cost.restart-delay=600ms", "lag_recovery_time_s")
	if short.N != 2 || long.N != 2 || *long.Median <= *short.Median {
		t.Fatalf("recovery medians: 200ms %v, 600ms %v; a longer restart must recover later", *short.Median, *long.Median)
	}
	lost := metric(t, o.Curve, "none/default cost.restart-delay=200ms", "lost")
	if *lost.Min > *lost.Median || *lost.Median > *lost.Max || *lost.Min == 0 || len(lost.Values) != 2 {
		t.Fatalf("lost stats %+v: none loses records under a crash", lost)
	}
	// Stored files: the curve round-trips, the CSV has one line per point
	// and metric, and every run folder carries its key.
	c, err := ReadCurve(filepath.Join(out, CurveJSON))
	if err != nil || len(c.Points) != 2 {
		t.Fatalf("curve.json: %v, %v", c, err)
	}
	csv, _ := os.ReadFile(filepath.Join(out, CurveCSV))
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	if lines[0] != "system,variant,cost.restart-delay,metric,n,null,median,min,max,p25,p75" {
		t.Errorf("curve.csv header %q", lines[0])
	}
	if !strings.Contains(string(csv), "\nnone,default,600ms,recovery_time_s,2,0,") {
		t.Errorf("curve.csv lacks the recovery row:\n%s", csv)
	}
	st, _ := Scan(out)
	if len(st.Runs) != 4 || len(st.Problems) != 0 {
		t.Fatalf("scan: %d runs, problems %v", len(st.Runs), st.Problems)
	}
	for _, r := range st.Runs {
		if r.Key == "" || len(r.Series) == 0 {
			t.Errorf("run %s: key %q, %d series rows", r.Name, r.Key, len(r.Series))
		}
	}
	// A folder with other things in it is refused.
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Execute(other, restartManifest(), rec.opts()); err == nil || !IsInputError(err) || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("non-empty folder: %v", err)
	}
	// A second sweep into the same folder must say --resume.
	if _, err := Execute(out, restartManifest(), rec.opts()); err == nil || !IsInputError(err) || !strings.Contains(err.Error(), "--resume") {
		t.Fatalf("rerun without --resume: %v", err)
	}
}

func TestResumeRunsOnlyMissingAndCorrupt(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	var rec recorder
	first, err := Execute(out, restartManifest(), rec.opts())
	if err != nil {
		t.Fatal(err)
	}
	// Simulate a sweep killed halfway (one run missing, a partial folder
	// left behind) and a corrupted results file.
	if err := os.RemoveAll(first.Runs[0].Dir); err != nil {
		t.Fatal(err)
	}
	corrupt := filepath.Join(first.Runs[3].Dir, RunFile)
	if err := os.WriteFile(corrupt, []byte(`{"system": "none", "dur`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(out, ".tmp-interrupted-123"), 0o755); err != nil {
		t.Fatal(err)
	}
	rec = recorder{}
	opts := rec.opts()
	opts.Resume = true
	o, err := Execute(out, restartManifest(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if o.Executed != 2 || len(rec.progress) != 2 {
		t.Fatalf("resume executed %d runs, want 2 (the missing and the corrupt one)", o.Executed)
	}
	ran := map[string]bool{}
	for _, p := range rec.progress {
		ran[p.Run.Key] = true
	}
	if !ran[first.Runs[0].Run.Key] || !ran[first.Runs[3].Run.Key] {
		t.Errorf("resume ran %v, want the keys of runs 0 and 3", ran)
	}
	notes := strings.Join(rec.notes, "\n")
	if !strings.Contains(notes, corrupt) || !strings.Contains(notes, ".tmp-interrupted-123") {
		t.Errorf("notes must name the corrupt file and the partial folder:\n%s", notes)
	}
	if len(o.Problems) != 1 {
		t.Errorf("problems %v", o.Problems)
	}
	// The resumed curve equals the uninterrupted one.
	if !reflect.DeepEqual(pointsJSON(t, first.Curve), pointsJSON(t, o.Curve)) {
		t.Error("resumed curve differs from the first")
	}
	st, _ := Scan(out)
	if len(st.Problems) != 0 || len(st.Runs) != 4 || len(st.Partial) != 0 {
		t.Errorf("after resume: %d runs, problems %v, partial %v", len(st.Runs), st.Problems, st.Partial)
	}
	// Nothing left to do: a second resume runs nothing.
	rec = recorder{}
	opts = rec.opts()
	opts.Resume = true
	if o, err := Execute(out, restartManifest(), opts); err != nil || o.Executed != 0 {
		t.Fatalf("second resume: executed %v, %v", o.Executed, err)
	}
}

func pointsJSON(t *testing.T, c *Curve) string {
	t.Helper()
	b, err := json.Marshal(c.Points)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFailingRunsAreRecorded(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	m := restartManifest()
	m.Params = nil
	m.Targets = []Target{{System: "none", Variant: "default"}, {System: "sweeptest-panic", Variant: "a"}, {System: "sweeptest-refuse", Variant: "a"}}
	var rec recorder
	o, err := Execute(out, m, rec.opts())
	if err != nil {
		t.Fatal(err)
	}
	var ok, internal, input int
	for _, r := range o.Runs {
		switch {
		case r.Result != nil:
			ok++
		case r.Failed.Input:
			input++
		default:
			internal++
			if !strings.Contains(r.Failed.Error, "boom") || !strings.Contains(r.Failed.Replay, "--system sweeptest-panic") {
				t.Errorf("failure record %+v", r.Failed)
			}
		}
	}
	if ok != 2 || internal != 2 || input != 2 {
		t.Fatalf("ok %d internal %d input %d; want 2 each", ok, internal, input)
	}
	var failedPoint *CurvePoint
	for _, p := range o.Curve.Points {
		if p.System == "sweeptest-panic" {
			failedPoint = p
		}
	}
	if failedPoint == nil || len(failedPoint.Failed) != 2 || len(failedPoint.Seeds) != 0 || len(o.Curve.Missing) != 2 {
		t.Fatalf("failed point %+v, missing %v", failedPoint, o.Curve.Missing)
	}
	st, _ := Scan(out)
	if len(st.Failed) != 4 || len(st.Runs) != 2 {
		t.Fatalf("stored %d failed, %d runs", len(st.Failed), len(st.Runs))
	}
	// Resume tries failed runs again (the cause may have been fixed).
	rec = recorder{}
	opts := rec.opts()
	opts.Resume = true
	o, err = Execute(out, m, opts)
	if err != nil || o.Executed != 4 {
		t.Fatalf("resume executed %d, %v; want the 4 failed runs", o.Executed, err)
	}
	if st, _ := Scan(out); len(st.Failed) != 4 {
		t.Errorf("old failure records must be replaced, have %d", len(st.Failed))
	}
}

func TestShardAndMerge(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	whole, err := Execute(filepath.Join(dir, "whole"), restartManifest(), Options{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	var shards []string
	total := 0
	for i := 1; i <= 2; i++ {
		m := restartManifest()
		m.Shard = &Shard{I: i, N: 2}
		d := filepath.Join(dir, "shard", string(rune('0'+i)))
		o, err := Execute(d, m, Options{Jobs: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(o.Curve.Points) != 1 {
			t.Fatalf("shard %d has %d points, want 1", i, len(o.Curve.Points))
		}
		total += o.Executed
		shards = append(shards, d)
	}
	if total != 4 {
		t.Fatalf("shards ran %d runs, want 4", total)
	}
	merged, err := Merge(filepath.Join(dir, "merged"), shards, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(merged.Missing) != 0 || pointsJSON(t, merged) != pointsJSON(t, whole.Curve) {
		t.Fatalf("merged curve differs from the unsharded one; missing %v", merged.Missing)
	}
	// The files too, byte for byte: what a cluster job's merge is checked
	// against (scripts/slurm/test.sh).
	for _, f := range []string{CurveJSON, CurveCSV} {
		a, errA := os.ReadFile(filepath.Join(dir, "whole", f))
		b, errB := os.ReadFile(filepath.Join(dir, "merged", f))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Fatalf("merged %s differs from the unsharded one (%v, %v):\n%s\n---\n%s", f, errA, errB, a, b)
		}
	}
	// One shard alone merges with the other point missing.
	partial, err := Merge(filepath.Join(dir, "partial"), shards[:1], nil)
	if err != nil || len(partial.Missing) != 1 {
		t.Fatalf("partial merge: %v, missing %v", err, partial.Missing)
	}
	// Shards of different sweeps are refused, naming the folder.
	other := restartManifest()
	other.Seeds = []uint64{9}
	od := filepath.Join(dir, "other")
	if _, err := Execute(od, other, Options{Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(filepath.Join(dir, "bad"), []string{shards[0], od}, nil); err == nil || !IsInputError(err) || !strings.Contains(err.Error(), od) {
		t.Fatalf("merging different sweeps: %v", err)
	}
	if _, err := Merge(filepath.Join(dir, "bad2"), []string{t.TempDir()}, nil); err == nil || !strings.Contains(err.Error(), "not a sweep folder") {
		t.Fatalf("merging a non-sweep folder: %v", err)
	}
}

func TestQuantile(t *testing.T) {
	xs := []float64{1, 2, 3, 10}
	for _, tc := range []struct{ q, want float64 }{{0.5, 2.5}, {0.25, 1.75}, {0.75, 4.75}, {0, 1}, {1, 10}} {
		if got := quantile(xs, tc.q); got != tc.want {
			t.Errorf("quantile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if quantile([]float64{4}, 0.5) != 4 {
		t.Error("quantile of one value")
	}
}

func TestRunMetricsFlattensSystemMetrics(t *testing.T) {
	rt := 1.5
	r := &harness.Result{RecoveryTimeS: &rt, Duplicates: 3,
		SystemMetrics: map[string]any{"acks": int64(7), "checkpoint": map[string]any{"state_bytes": 10.5}, "mode": "x", "ok": true},
		Counters:      map[string]int64{"acks_sent": 9}}
	m := RunMetrics(r)
	for k, want := range map[string]float64{"recovery_time_s": 1.5, "duplicates": 3, "system.acks": 7, "system.checkpoint.state_bytes": 10.5, "counter.acks_sent": 9} {
		if m[k] == nil || *m[k] != want {
			t.Errorf("%s = %v, want %v", k, m[k], want)
		}
	}
	if _, ok := m["system.mode"]; ok {
		t.Error("a string system metric must not become a metric")
	}
	r.RecoveryTimeS = nil
	if v, ok := RunMetrics(r)["recovery_time_s"]; !ok || v != nil {
		t.Error("a null recovery time must be present and null")
	}
}
