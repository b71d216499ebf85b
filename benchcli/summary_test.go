package benchcli

import (
	"bytes"
	"strings"
	"testing"

	"ftbench/harness"
)

// A value that does not exist prints n/a: the latency of a run that
// committed nothing is not 0.00 ms.
func TestSummaryNothingCommitted(t *testing.T) {
	r := &harness.Result{System: "none", Variant: "default", Workload: "wordcount", RateChosen: harness.RateGiven,
		Verdict: "at-most-once", ExpectedEffects: 10, Lost: 10}
	var b bytes.Buffer
	printSummary(&b, r, nil, "dir")
	if !strings.Contains(b.String(), "latency:     n/a") || strings.Contains(b.String(), "0.00 ms") {
		t.Errorf("no commits, yet:\n%s", b.String())
	}
	r.CommittedEffects, r.LatencyMS.P50 = 5, 12
	b.Reset()
	printSummary(&b, r, nil, "dir")
	if !strings.Contains(b.String(), "latency:     p50 12.00 ms") {
		t.Errorf("commits, yet:\n%s", b.String())
	}
}

// A sweep without faults has no recovery to report: its table says n/a,
// not never, and a run's summary says how the rate was chosen.
func TestSweepWithoutFaultSaysNA(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := bench(t, "sweep", "--system", "none", "--duration", "2s", "--rate", "5000", "--param", "parallelism=2", "--out", dir, "--jobs", "1")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	row := lineWith(stdout, "none/default parallelism=2")
	if f := strings.Fields(row); len(f) < 5 || f[3] != "n/a" || strings.Contains(row, "never") {
		t.Errorf("recovery of a run without faults: %q\n%s", row, stdout)
	}
}
