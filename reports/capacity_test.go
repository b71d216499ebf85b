package reports

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"ftbench/capacity"
)

// A folder holding only a capacity.json is reported: bars, their CSV with
// the ratio to none (empty where a system has no capacity), and a summary
// section.
func TestCapacityReport(t *testing.T) {
	dir := t.TempDir()
	f := func(x float64) *float64 { return &x }
	cmp := capacity.Comparison{Format: capacity.CompareFormat, Command: "bench compare --capacity", Systems: []*capacity.Result{
		{Format: capacity.Format, System: "none", Variant: "default", Workload: "grep", CapacityRPS: f(1000), OverloadedAtRPS: 1015, Probes: make([]capacity.Probe, 9), ProbeDurationS: 6},
		{Format: capacity.Format, System: "barrier", Variant: "aligned", Workload: "grep", CapacityRPS: f(800), OverloadedAtRPS: 812, Probes: make([]capacity.Probe, 8), ProbeDurationS: 12},
		{Format: capacity.Format, System: "stormack", Variant: "default", Workload: "grep", OverloadedAtRPS: 3, Probes: make([]capacity.Probe, 31), ProbeDurationS: 6},
	}}
	b, _ := json.Marshal(cmp)
	if err := os.WriteFile(filepath.Join(dir, CapacityFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Generate(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	csv, err := os.ReadFile(filepath.Join(rep.Out, "capacity.csv"))
	if err != nil {
		t.Fatal(err)
	}
	want := "series,workload,capacity_rps,overloaded_at_rps,ratio_to_none,probes,probe_duration_s,latency_bound_ms\n" +
		"none/default,grep,1000,1015,1,9,6,\n" +
		"barrier/aligned,grep,800,812,0.8,8,12,\n" +
		"stormack/default,grep,,3,,31,6,\n"
	if string(csv) != want {
		t.Fatalf("capacity.csv:\n%s\nwant:\n%s", csv, want)
	}
	checkPNG(t, filepath.Join(rep.Out, "capacity.png"))
	checkSummaryHas(t, rep.Out, "## Capacity", "| barrier/aligned | grep | 800 | 812 | 0.800 |", "overloaded at every probe", "![Capacity per system](capacity.png)")
}
