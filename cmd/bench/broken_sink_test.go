//go:build ftbench_broken_sink

package main

import "testing"

// TestTortureCatchesBrokenBarrierSink runs only in the deliberately broken
// build (go test -tags ftbench_broken_sink ./cmd/bench), whose barrier sink
// commits before its checkpoint completes (systems/barrier/broken_on.go):
// torture must catch it within 50 runs and shrink the failing schedule to at
// most two faults.
func TestTortureCatchesBrokenBarrierSink(t *testing.T) {
	requireCaughtAndShrunk(t, "barrier")
}
