package benchcli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ftbench/trace"
	"ftbench/view"
)

// shortRun makes a small stored run (no trace) and returns its folder.
func shortRun(t *testing.T) string {
	t.Helper()
	out := t.TempDir()
	if code, _, stderr := bench(t, "run", "--system", "barrier", "--duration", "2s", "--out", out); code != 0 {
		t.Fatalf("bench run: exit %d: %s", code, stderr)
	}
	dir, err := filepath.EvalSymlinks(filepath.Join(out, "latest"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// writeTrace stores a minimal trace in dir: two processes, a barrier
// between them.
func writeTrace(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, view.TraceFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := trace.Header{Format: 1, System: "barrier", FromNS: 0, ToNS: 2e9, BucketNS: 1e8, Processes: []trace.Process{{Name: "a", Worker: 0}, {Name: "b", Worker: 1}}}
	if err := trace.Write(f, h, []trace.Record{{Type: trace.TypeMsg, T: 1e9, Recv: 1.001e9, From: "a", To: "b", Ctrl: true, Kind: "barrier", ID: 1}}); err != nil {
		t.Fatal(err)
	}
}

// bench view refuses what is not a traced run with one line and exit 2.
func TestViewBadInput(t *testing.T) {
	run := shortRun(t)
	file := filepath.Join(run, "run.json")
	corrupt := t.TempDir()
	for _, name := range []string{"run.json", "timeseries.csv", "events.jsonl"} {
		b, err := os.ReadFile(filepath.Join(run, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(corrupt, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(corrupt, view.TraceFile), []byte("not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no folder", []string{"view"}, "takes one run folder, got 0"},
		{"two folders", []string{"view", run, run}, "takes one run folder, got 2"},
		{"missing folder", []string{"view", filepath.Join(run, "nope")}, "no such file"},
		{"a file", []string{"view", file}, "is not a folder"},
		{"not a run", []string{"view", t.TempDir()}, "no run.json"},
		{"not traced", []string{"view", run}, "no trace.jsonl (run with bench run --trace)"},
		{"corrupt trace", []string{"view", corrupt}, "trace header"},
	} {
		t.Run(tc.name, func(t *testing.T) { requireUsageError(t, tc.want, tc.args...) })
	}
}

// A traced run gets its run.html from bench view, and bench report links
// it from index.html.
func TestViewAndReportIndex(t *testing.T) {
	run := shortRun(t)
	writeTrace(t, run)
	code, stdout, stderr := bench(t, "view", run)
	page := filepath.Join(run, view.PageFile)
	if code != 0 || strings.TrimSpace(stdout) != "view: "+page {
		t.Fatalf("bench view: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	// The page carries bench run's summary of the run.
	if !strings.Contains(string(b), "barrier/aligned on wordcount, seed 1: 2s of input") {
		t.Error("run.html lacks the run's summary")
	}
	if err := os.Remove(page); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = bench(t, "report", run)
	if code != 0 || !strings.Contains(stdout, "(1 traced runs with their run.html)") {
		t.Fatalf("bench report: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if _, err := os.Stat(page); err != nil {
		t.Errorf("bench report did not write the run's view: %v", err)
	}
	index, err := os.ReadFile(filepath.Join(run, "report", view.IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(index), `"href":"../run.html"`) {
		t.Error("index.html does not link ../run.html")
	}
}
