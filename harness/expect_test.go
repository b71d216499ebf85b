package harness

import (
	"testing"

	"ftbench/engine"
	_ "ftbench/systems/barrier"
)

// The oracle pass leaves milestones along the log for the systems'
// snapshot checks, also when it runs after a live run: the end of the log
// and a point inside it start from a milestone, and the barrier run's
// retained checkpoints check out consistent from them.
func TestOraclePassLeavesMilestones(t *testing.T) {
	for _, rt := range []string{RuntimeSim, RuntimeLive} {
		t.Run(rt, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.System, cfg.Runtime = "barrier", rt
			cfg.Duration, cfg.Rate = 2*engine.Second, 20_000
			cfg.SystemOpts = map[string]string{"checkpoint-interval": "300ms", "checkpoints-retained": "3"}
			r, err := prepare(cfg)
			if err != nil {
				t.Fatal(err)
			}
			res := r.run().Result
			total := r.log.Total()
			if got := r.milestones.Base(r.appendedAll()); got != total {
				t.Errorf("the end of the log (%d) starts from round %d", total, got)
			}
			mid := r.appendedAll()
			mid[0] = total / 2
			if got := r.milestones.Base(mid); got <= 0 || got > total/2 {
				t.Errorf("offsets %v start from round %d, want a milestone in (0, %d]", mid, got, total/2)
			}
			checked, _ := res.SystemMetrics["snapshots_checked"].(int64)
			consistent, _ := res.SystemMetrics["snapshots_consistent"].(int64)
			if checked == 0 || consistent != checked {
				t.Errorf("%d snapshots checked, %d consistent: %v", checked, consistent, res.SystemMetrics["snapshot_problems"])
			}
		})
	}
}
