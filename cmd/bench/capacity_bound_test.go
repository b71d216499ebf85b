package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ftbench/capacity"
	"ftbench/harness"
)

// A --latency-bound below what the system's commit cycle allows is refused
// before the first probe: one line naming the bound and the cycle, exit 2,
// no probe line and no capacity.json.
func TestCapacityRefusesUnmeetable(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string // each in the one line of stderr
	}{
		{"barrier's 2pc sink", []string{"--system", "barrier", "--latency-bound", "500ms"},
			[]string{"--latency-bound 500ms", "--checkpoint-interval 1s", "at least 990ms"}},
		{"barrier unaligned", []string{"--system", "barrier/unaligned", "--checkpoint-interval", "200ms", "--latency-bound", "150ms"},
			[]string{"--latency-bound 150ms", "--checkpoint-interval 200ms", "at least 198ms"}},
		{"lineage's batches", []string{"--system", "lineage", "--batch-interval", "2s", "--latency-bound", "1s"},
			[]string{"--latency-bound 1s", "--batch-interval 2s", "at least 1.98s"}},
		{"snapshot on a dataflow", []string{"--system", "snapshot", "--latency-bound", "900ms"},
			[]string{"--latency-bound 900ms", "--checkpoint-interval 1s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "cap")
			code, stdout, stderr := bench(t, append([]string{"capacity", "--out", out}, tc.args...)...)
			if code != harness.ExitUsage || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Fatalf("exit %d, want 2 and one line\n%s\n%s", code, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Fatalf("stderr does not name %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stdout, "probe ") {
				t.Fatalf("probes ran before the refusal:\n%s", stdout)
			}
			if _, err := os.Stat(out); err == nil {
				t.Fatalf("%s was written", out)
			}
		})
	}
}

// A search that finds no sustained rate down to the lowest rate a probe
// can judge says so and exits 4, with capacity.json written (capacity
// null, the probes listed): for an overloaded system and for a latency
// bound just above the commit cycle's floor.
func TestCapacityNoneFound(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		why  string
	}{
		{"overloaded at every rate", []string{"--system", "none", "--cost", "record-cpu=100ms", "--rate", "2000"}, "lag grows"},
		{"bound just above the floor", []string{"--system", "barrier", "--checkpoint-interval", "200ms", "--latency-bound", "199ms", "--duration", "6s"}, "> bound 199ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			args := append(append([]string{"capacity", "--out", out}, cheapCapacity...), tc.args...)
			code, stdout, stderr := bench(t, args...)
			if code != harness.ExitLiveness || !strings.Contains(stderr, "no sustained rate found between ") || !strings.Contains(stdout, tc.why) {
				t.Fatalf("exit %d, want 4 and 'no sustained rate found between': \n%s\n%s", code, stdout, stderr)
			}
			b, err := os.ReadFile(filepath.Join(out, "capacity.json"))
			if err != nil {
				t.Fatal(err)
			}
			var res capacity.Result
			if err := json.Unmarshal(b, &res); err != nil || res.CapacityRPS != nil || len(res.Probes) == 0 {
				t.Fatalf("capacity.json: %v, capacity %v, %d probes", err, res.CapacityRPS, len(res.Probes))
			}
			for _, p := range res.Probes {
				if p.Sustained {
					t.Fatalf("probe at %g records/s sustained, yet no capacity", p.RateRPS)
				}
			}
			lowest := res.Probes[len(res.Probes)-1].RateRPS
			if want := float64(capacity.MinProbeRecords) / res.ProbeDurationS; lowest < want*0.999 {
				t.Fatalf("probed %g records/s, below the lowest rate a probe judges (%g)", lowest, want)
			}
		})
	}
}
