//go:build ftbench_broken_sink

package main

import (
	"regexp"
	"testing"

	"ftbench/harness"
)

// TestTortureCatchesBrokenBarrierSink runs only in the deliberately broken
// build (go test -tags ftbench_broken_sink ./cmd/bench), whose barrier sink
// commits before its checkpoint completes: torture must catch it within 50
// runs and shrink the failing schedule to at most two faults.
func TestTortureCatchesBrokenBarrierSink(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := bench(t, "torture", "--system", "barrier", "--runs", "50", "--stop",
		"--shrink", "1", "--shrink-budget", "40", "--out", dir)
	if code != harness.ExitSafety {
		t.Fatalf("exit %d, want 3\n%s\n%s", code, stdout, stderr)
	}
	m := regexp.MustCompile(`(?m)^shrunk run (\d+): (\d+) faults -> (\d+),`).FindStringSubmatch(stdout)
	if m == nil || atoi(m[3]) > 2 {
		t.Fatalf("not shrunk to at most two faults:\n%s", stdout)
	}
	t.Logf("caught by run %s, shrunk from %s to %s faults", m[1], m[2], m[3])
	t.Logf("%s", stdout)
}
