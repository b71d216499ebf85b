package harness

import (
	"testing"
)

// A plain sink's zombie (partitioned away, running on until the cut heals)
// writes older counts over the replacement's last ones: the run ends with
// final values behind the oracle. run.json says so (stale_final_keys), and
// the plain sink's at-least-once claim allows it, as Flink's
// non-transactional sinks do; the 2PC sink's zombie never commits, so its
// final values stay right.
func TestZombieLeavesStaleFinalValues(t *testing.T) {
	for _, tt := range []struct {
		sink      string
		wantStale bool
		wantHeld  bool
	}{
		{"plain", true, true},
		{"2pc", false, true},
	} {
		t.Run(tt.sink, func(t *testing.T) {
			t.Parallel()
			cfg := short("barrier", "partition@3s-7s:op=sink/0")
			cfg.Slots, cfg.SystemOpts = 8, map[string]string{"sink": tt.sink}
			r := runCfg(t, cfg)
			if got := r.StaleFinalKeys > 0; got != tt.wantStale {
				t.Errorf("stale_final_keys %d, want stale: %v", r.StaleFinalKeys, tt.wantStale)
			}
			if r.StaleFinalKeys+r.AheadFinalKeys != r.WrongKeys {
				t.Errorf("stale %d + ahead %d != wrong %d", r.StaleFinalKeys, r.AheadFinalKeys, r.WrongKeys)
			}
			if r.ClaimHeld != tt.wantHeld || r.Lost != 0 {
				t.Errorf("claim held %v, lost %d: %v", r.ClaimHeld, r.Lost, r.Problems)
			}
		})
	}
}
