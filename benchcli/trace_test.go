package benchcli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"ftbench/trace"
)

// bench run --trace writes trace.jsonl in the run folder, with one lane per
// process of run.json's processes; without --trace there is none.
func TestRunTrace(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	run := []string{"run", "--system", "barrier", "--fault", "crash@1s:worker=0", "--duration", "2s", "--rate", "5000", "--out", out}
	if code, o, e := bench(t, append(run, "--trace", "--trace-window", "500ms-1.5s")...); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, o, e)
	}
	f, err := os.Open(filepath.Join(out, "latest", "trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, recs, err := trace.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	if h.FromNS != 5e8 || h.ToNS != 1.5e9 || len(recs) == 0 {
		t.Errorf("window [%d, %d) with %d records, want 500ms-1.5s", h.FromNS, h.ToNS, len(recs))
	}
	b, err := os.ReadFile(filepath.Join(out, "latest", "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Processes []trace.Process `json:"processes"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Processes) == 0 || len(res.Processes) != len(h.Processes) {
		t.Errorf("run.json lists %d processes, the trace %d lanes", len(res.Processes), len(h.Processes))
	}
	if code, o, e := bench(t, run...); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, o, e)
	}
	if _, err := os.Stat(filepath.Join(out, "latest", "trace.jsonl")); !os.IsNotExist(err) {
		t.Errorf("a run without --trace wrote trace.jsonl (%v)", err)
	}
}
