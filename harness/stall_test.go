package harness

import (
	"strings"
	"testing"
)

// A run whose commits stop because the checkpoint store cannot complete a
// write (a bandwidth of one byte a second, a slow factor of a million, an
// outage longer than the run) is stalled, not lossy: it ends undrained
// (exit 4) with the store named as the cause, never with effects reported
// lost. A system whose output does not wait on the store (none) goes on.
func TestStoreStallIsLiveness(t *testing.T) {
	tests := []struct {
		system, variant string
		cost            []string
		faults          []string
		wantExit        int
		wantCause       string
	}{
		{"barrier", "", []string{"store-write-bw=1"}, []string{"crash@2s:worker=1"}, ExitLiveness, "writes in progress"},
		{"barrier", "unaligned", nil, []string{"store-down@0s-60s"}, ExitLiveness, "down from 0s to the end of the run"},
		{"barrier", "sync", nil, []string{"store-slow@500ms-60s:factor=1e6"}, ExitLiveness, "writes in progress"},
		{"lineage", "", []string{"store-write-bw=1"}, nil, ExitLiveness, "writes in progress"},
		{"snapshot", "cl", nil, []string{"store-down@0s-60s"}, ExitLiveness, "down from 0s"},
		{"stormack", "", nil, []string{"store-slow@0s-60s:factor=1e6"}, ExitLiveness, "store-slow"},
		{"none", "", []string{"store-write-bw=1"}, nil, ExitOK, ""},
	}
	for _, tt := range tests {
		name := tt.system + "/" + tt.variant + " " + strings.Join(append(tt.cost, tt.faults...), " ")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := short(tt.system, tt.faults...)
			cfg.Variant, cfg.CostOverride = tt.variant, tt.cost
			r := runCfg(t, cfg)
			if r.ExitCode != tt.wantExit {
				t.Fatalf("exit %d, want %d: %v", r.ExitCode, tt.wantExit, r.Problems)
			}
			if r.Lost != 0 || !r.ClaimHeld {
				t.Errorf("lost %d, claim held %v: a stall reported as a safety failure (%v)", r.Lost, r.ClaimHeld, r.Problems)
			}
			if tt.wantCause == "" {
				return
			}
			if len(r.Problems) == 0 || !strings.Contains(r.Problems[0], "the checkpoint store held the run up") || !strings.Contains(r.Problems[0], tt.wantCause) {
				t.Errorf("problems %q: want the store named as the cause (%q)", r.Problems, tt.wantCause)
			}
			if r.RecoveryTimeS != nil && len(r.Recoveries) > 0 {
				t.Errorf("recovery time %v for a run that committed nothing after its fault", *r.RecoveryTimeS)
			}
		})
	}
}
