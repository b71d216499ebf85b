package harness

import (
	"fmt"
	"testing"

	"ftbench/engine"
	"ftbench/workloads"
)

// With the hardware fixed (W workers of C cores), capacity follows the cost
// model's bound as parallelism grows over multiples of W: it grows while the
// instances limit it, then stops once the workers' cores are full. Each run
// is offered 1.5x the bound, so backpressure holds it at what it can
// sustain, and throughput is measured from commits. grep has no shuffle and
// no keys, so records spread evenly; its costs are scaled up 50x to keep the
// simulated record counts small.
func TestCapacityFollowsCoreBound(t *testing.T) {
	costs := []string{"source-record=50us", "record-cpu=100us", "sink-cpu=100us", "scan-per-byte=250ns", "send-cpu=25us", "serde-per-byte=100ns"}
	const workers, cores = 2, 4
	var last float64
	for _, par := range []int{2, 4, 8, 16} {
		t.Run(fmt.Sprintf("parallelism %d", par), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.System, cfg.Workload = "none", "grep"
			cfg.Workers, cfg.Cores, cfg.Parallelism = workers, cores, par
			cfg.CostOverride = costs
			cfg.Duration = 4 * engine.Second
			c := engine.DefaultCost()
			for _, o := range costs {
				if err := c.Set(o); err != nil {
					t.Fatal(err)
				}
			}
			c.Cores = cores
			w, err := workloads.New("grep", engine.ChildSeed(cfg.Seed, "workload"), nil)
			if err != nil {
				t.Fatal(err)
			}
			// none chains grep into one task per partition, as Flink would.
			bound := workloads.ChainedCapacityBound(w, &c, par, workers, [][]string{{"source", "filter", "sink"}}, false)
			if b, err := CapacityBound(cfg); err != nil || b != bound {
				t.Fatalf("harness.CapacityBound %v (%v), want the chained bound %v", b, err, bound)
			}
			cfg.Rate = 1.5 * bound
			r := runCfg(t, cfg)
			if r.ThroughputRPS == nil {
				t.Fatal("no throughput measured")
			}
			got := *r.ThroughputRPS
			t.Logf("bound %.0f records/s, measured %.0f (%.3f)", bound, got, got/bound)
			if got < 0.9*bound || got > 1.1*bound {
				t.Errorf("capacity %.0f records/s, cost-model bound %.0f: off by more than 10%%", got, bound)
			}
			if par > workers*cores && last > 0 && got > 1.1*last {
				t.Errorf("cores are full, yet capacity grew from %.0f to %.0f", last, got)
			}
			last = got
		})
	}
}
