package harness

import (
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"ftbench/engine"
)

// Progress reports arrive while a run executes, say where it is, and
// change nothing: the simulation stepped for them processes the same
// events as one call, so the results are the same.
func TestProgressReportsChangeNothing(t *testing.T) {
	defer func(every time.Duration) { ProgressEvery = every }(ProgressEvery)
	ProgressEvery = time.Millisecond
	cfg := DefaultConfig()
	cfg.System, cfg.Duration, cfg.Rate, cfg.Faults = "barrier", 3*engine.Second, 20000, []string{"crash"}
	plain, err := Execute(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var reports []Progress
	cfg.Progress = func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, p)
	}
	reported, err := Execute(cfg)
	if err != nil {
		t.Fatal(err)
	}
	same := func(o *Outcome) string {
		r := *o.Result
		r.Host = Host{}
		b, err := json.Marshal(struct {
			R    Result
			Rows any
		}{r, o.Rows})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if same(plain) != same(reported) {
		t.Fatal("a run with progress reports has different results")
	}
	mu.Lock()
	defer mu.Unlock()
	var last engine.Time
	simulating := 0
	for _, p := range reports {
		if !slices.Contains([]string{"starting", PhaseOracle, PhaseSimulating, PhaseChecking}, p.Phase) {
			t.Fatalf("unknown phase %q", p.Phase)
		}
		if p.SimTime < last || p.SimTime > p.End || p.System != "barrier" {
			t.Fatalf("report %+v after simulated time %v", p, last)
		}
		last = p.SimTime
		if p.Phase == PhaseSimulating {
			simulating++
		}
	}
	if simulating == 0 || last == 0 {
		t.Fatalf("no report while simulating among %d reports", len(reports))
	}
}
