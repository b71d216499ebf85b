package harness

import (
	"strings"
	"testing"

	"ftbench/engine"
	_ "ftbench/systems/barrier"
)

func TestMinSteadyDuration(t *testing.T) {
	ms := engine.Millisecond
	cases := []struct{ cycle, want engine.Time }{
		{0, 1400 * ms}, // 10 buckets after a 350ms warm-up
		// With a commit cycle, 10 cycles after the first output, which the
		// fit waits for for up to 2 cycles after the warm-up.
		{200 * ms, 3200 * ms}, // 12 cycles after an 800ms warm-up
		{150 * ms, 2400 * ms}, // 1.8s after a 600ms warm-up
		{engine.Second, 14 * engine.Second},
		{2 * engine.Second, 26 * engine.Second},
	}
	for _, tc := range cases {
		got := MinSteadyDuration(tc.cycle, DefaultBucket)
		if got != tc.want {
			t.Errorf("cycle %v: %v, want %v", tc.cycle, got, tc.want)
		}
		warm := min(2*engine.Second, got/4)
		unit := max(tc.cycle, DefaultBucket)
		if (got-warm)/unit < 10 {
			t.Errorf("cycle %v: %v leaves %v after the warm-up", tc.cycle, got, got-warm)
		}
	}
}

// A barrier 2PC run too short for 10 whole checkpoint intervals after the
// warm-up says so instead of guessing; MinSteadyDuration is long enough.
func TestOverloadNeedsWholeCycles(t *testing.T) {
	cfg := DefaultConfig()
	cfg.System, cfg.Workload = "barrier", "grep"
	cfg.Parallelism, cfg.Workers = 2, 2
	cfg.CostOverride = []string{"record-cpu=500us"} // default rate ~2000/s: cheap
	cfg.SystemOpts = map[string]string{"checkpoint-interval": "200ms"}
	cfg.Duration = 2 * engine.Second
	r := runCfg(t, cfg)
	if r.Overloaded != nil || r.LagSlopeRPS != nil || !strings.Contains(r.LagTrend.Reason, "whole commit cycles of 200ms") {
		t.Fatalf("2s run: overloaded %v slope %v, lag_trend %+v", r.Overloaded, r.LagSlopeRPS, r.LagTrend)
	}
	cfg.Duration = MinSteadyDuration(200*engine.Millisecond, DefaultBucket)
	r = runCfg(t, cfg)
	// At least 10: the duration also covers a first output up to two
	// cycles after the warm-up, which this run's came before.
	if r.Overloaded == nil || *r.Overloaded || r.LagTrend.Samples < 10 || r.LagTrend.CycleS != 0.2 {
		t.Fatalf("%gs run at half capacity: overloaded %v, lag_trend %+v", r.Config.DurationS, r.Overloaded, r.LagTrend)
	}
	// A fault before 10 cycles have passed leaves too short a window too.
	cfg.Duration = 10 * engine.Second
	cfg.Faults = []string{"crash@2s:worker=1"}
	r = runCfg(t, cfg)
	if r.Overloaded != nil || !strings.Contains(r.LagTrend.Reason, "first fault") {
		t.Fatalf("early fault: overloaded %v, lag_trend %+v", r.Overloaded, r.LagTrend)
	}
}
