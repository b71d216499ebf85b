package lineage

import (
	"fmt"
	"strconv"
	"testing"

	"ftbench/engine"
)

// The longer the checkpoint interval, the longer the lineage a failure has
// to recompute and the longer recovery takes (lecture 21.5: D-Streams measured
// about 0.15 s of extra delay with a 2 s checkpoint interval, 3.5 s with
// 30 s). The crash at 29.9 s hits just before batch 29's checkpoint, and
// batch 29 is a checkpoint batch for every k below, so each run loses k-1
// batches of lineage: the worst case for its interval.
func TestRecoveryGrowsWithCheckpointInterval(t *testing.T) {
	ks := []int{1, 2, 5, 10, 30}
	type point struct{ lost, recomputed, extra, recovery float64 }
	pts := make([]point, len(ks))
	t.Run("sweep", func(t *testing.T) {
		for i, k := range ks {
			i, k := i, k
			t.Run(fmt.Sprintf("k=%d", k), func(t *testing.T) {
				t.Parallel()
				cfg := runConfig("wordcount", "", 1140, 33*engine.Second, "crash@29.9s:op=count/0,restart=100ms")
				cfg.Workers, cfg.Parallelism = 5, 5
				cfg.WorkloadOpts = map[string]string{"zipf-s": "0", "vocabulary": "65536"}
				cfg.SystemOpts[optCkpt] = strconv.Itoa(k)
				cfg.CostOverride = append(append([]string(nil), heavy...), "detect-delay=100ms")
				r := execute(t, cfg)
				if r.Verdict != "exactly-once" || !r.ClaimHeld {
					t.Fatalf("verdict %s", r.Verdict)
				}
				rec := r.SystemMetrics["recoveries"].([]map[string]any)[0]
				if lb := rec["lost_batches"].(int64); lb != int64(k-1) {
					t.Errorf("lost %d batches of lineage, want %d", lb, k-1)
				}
				pts[i] = point{rec["lost_work_cpu_s"].(float64), rec["recomputed_s"].(float64), rec["extra_delay_max_s"].(float64), rec["recovery_s"].(float64)}
			})
		}
	})
	for i := range ks {
		t.Logf("checkpoint every %2d batches: lost work %6.3f cpu-s, recomputed in %.3f s, extra delay %.3f s, recovery %.3f s",
			ks[i], pts[i].lost, pts[i].recomputed, pts[i].extra, pts[i].recovery)
		if i == 0 {
			continue
		}
		p, q := pts[i-1], pts[i]
		if q.recomputed <= p.recomputed || q.extra <= p.extra || q.recovery < p.recovery {
			t.Errorf("k=%d -> k=%d: recovery does not grow (%+v -> %+v)", ks[i-1], ks[i], p, q)
		}
	}
}
