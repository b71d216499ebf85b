package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// handCurve is a small curve: two checkpoint intervals, two seeds.
func handCurve() *Curve {
	f := func(x float64) *float64 { return &x }
	stat := func(med float64) *Stat {
		return &Stat{N: 2, Median: f(med), Min: f(med), Max: f(med), P25: f(med), P75: f(med), Values: []*float64{f(med), f(med)}}
	}
	point := func(iv string, rec, dup float64) *CurvePoint {
		return &CurvePoint{ID: "barrier/aligned checkpoint-interval=" + iv, System: "barrier", Variant: "aligned",
			Params: map[string]string{"checkpoint-interval": iv}, Seeds: []uint64{1, 2},
			Metrics: map[string]*Stat{"recovery_time_s": stat(rec), "duplicates": stat(dup), "lost": stat(0)}}
	}
	return &Curve{
		Format:   CurveFormat,
		Scenario: Scenario{Workload: "wordcount", Faults: []string{"crash"}, DurationS: 10, Parallelism: 4, Workers: 4},
		Params:   []Param{{"checkpoint-interval", []string{"1s", "2s"}}},
		Seeds:    []uint64{1, 2},
		Points:   []*CurvePoint{point("1s", 1.2, 0), point("2s", 2.0, 0)},
	}
}

func TestCompareWithinAndOutside(t *testing.T) {
	b, err := NewBaseline(handCurve(), nil)
	if err != nil {
		t.Fatal(err)
	}
	cmp, err := Compare(b, handCurve())
	// Two points of verdict, claim_held and three metrics.
	if err != nil || len(cmp.Rows) != 10 || len(cmp.Outside()) != 0 {
		t.Fatalf("identical curves: %v rows, outside %v, err %v", len(cmp.Rows), cmp.Outside(), err)
	}
	cur := handCurve()
	*cur.Points[1].Metrics["recovery_time_s"].Median = 2.08 // within 5% + 0.1 s
	*cur.Points[0].Metrics["duplicates"].Median = 11        // outside abs 10
	cmp, err = Compare(b, cur)
	if err != nil {
		t.Fatal(err)
	}
	out := cmp.Outside()
	if len(out) != 1 || out[0].Point != "barrier/aligned checkpoint-interval=1s" || out[0].Metric != "duplicates" {
		t.Fatalf("outside = %+v", out)
	}
	if out[0].Change() != "+11" {
		t.Errorf("change %q", out[0].Change())
	}
	*cur.Points[1].Metrics["recovery_time_s"].Median = 4
	cmp, _ = Compare(b, cur)
	if len(cmp.Outside()) != 2 {
		t.Fatalf("doubled recovery time must be outside: %+v", cmp.Outside())
	}
	// A run that never recovered in one seed is outside, whatever the median.
	cur = handCurve()
	cur.Points[0].Metrics["recovery_time_s"].N, cur.Points[0].Metrics["recovery_time_s"].Null = 1, 1
	cmp, _ = Compare(b, cur)
	if o := cmp.Outside(); len(o) != 1 || !strings.Contains(o[0].Reason, "1 of 2 seeds") {
		t.Fatalf("null seed: %+v", o)
	}
	// Different base cost overrides are compared, with a note.
	cur = handCurve()
	cur.Scenario.CostOverride = []string{"restart-delay=2s"}
	cmp, err = Compare(b, cur)
	if err != nil || len(cmp.Notes) != 1 || !strings.Contains(cmp.Notes[0], "restart-delay=2s") {
		t.Fatalf("cost override note: %v, %v", cmp, err)
	}
}

func TestCompareMismatch(t *testing.T) {
	b, _ := NewBaseline(handCurve(), nil)
	cases := []struct {
		name   string
		change func(c *Curve)
		want   string
	}{
		{"other parameter", func(c *Curve) { c.Params[0].Name = "rate" }, "different grid"},
		{"other values", func(c *Curve) { c.Params[0].Values = []string{"1s", "5s"} }, "different grid: checkpoint-interval"},
		{"missing point", func(c *Curve) { c.Points = c.Points[:1] }, "lacks point barrier/aligned checkpoint-interval=2s"},
		{"extra point", func(c *Curve) {
			p := *c.Points[0]
			p.ID = "barrier/unaligned checkpoint-interval=1s"
			c.Points = append(c.Points, &p)
		}, "has point barrier/unaligned"},
		{"missing metric", func(c *Curve) { delete(c.Points[1].Metrics, "lost") }, "missing metric: current point barrier/aligned checkpoint-interval=2s lacks lost"},
		{"seeds", func(c *Curve) { c.Seeds = []uint64{1, 2, 3} }, "different seeds: the baseline has 1-2, the current curve 1-3"},
		{"scenario", func(c *Curve) { c.Scenario.Workload = "grep" }, "different scenario: workload wordcount in the baseline, grep now"},
	}
	for _, tc := range cases {
		cur := handCurve()
		tc.change(cur)
		_, err := Compare(b, cur)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestReadBaselineRejectsMalformed(t *testing.T) {
	dir := t.TempDir()
	good, _ := NewBaseline(handCurve(), nil)
	path := filepath.Join(dir, "b.json")
	if err := WriteBaseline(path, good); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadBaseline(path); err != nil || len(b.Curve.Points) != 2 {
		t.Fatalf("round trip: %v", err)
	}
	cases := map[string]string{
		`not json`:                         "not a baseline file",
		`{"format": "x"}`:                  "format",
		`{"format": "ftbench-baseline/1"}`: "no metrics",
		`{"format": "ftbench-baseline/1", "metrics": ["lost"], "tolerance": {"lost": {"rel": -1}}, "curve": {}}`: "non-negative",
		`{"format": "ftbench-baseline/1", "metrics": ["lost"]}`:                                                  "no curve",
		`{"format": "ftbench-baseline/1", "metrics": ["nope"], "curve": {"format": "ftbench-curve/1", "params": [], "points": [{"id": "none/default", "system": "none", "variant": "default", "metrics": {}}]}}`: "lacks metric nope",
	}
	for body, want := range cases {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadBaseline(path)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: err = %v, want %q naming the file", body, err, want)
		}
	}
}
