//go:build ftbench_mutant_early_commit

package benchcli

import "testing"

// TestTortureCatchesBrokenBarrierSink runs only in the deliberately broken
// build (go test -tags ftbench_mutant_early_commit ./benchcli), whose barrier sink
// commits before its checkpoint completes (systems/barrier/mutant_early_commit_on.go):
// torture must catch it within 50 runs and shrink the failing schedule to at
// most two faults. The sink is fixed to 2pc: torture would otherwise also
// draw the plain sink, whose own claim breaks (see docs/torture.md).
func TestTortureCatchesBrokenBarrierSink(t *testing.T) {
	requireCaughtAndShrunk(t, "barrier", "--sink", "2pc")
}
