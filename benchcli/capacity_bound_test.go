package benchcli

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

// A live probe's line gives the CPU it received, flags a failed probe that
// got under LowCPUShare of the cores it assumes, and shows the failed first
// attempt of a probe that was run again.
func TestLiveProbeLine(t *testing.T) {
	low := &capacity.CPUUse{Share: 0.45, Cores: 2}
	full := &capacity.CPUUse{Share: 0.93, Cores: 2}
	first := &capacity.Probe{Reason: "lag grows 900 records/s >= 1% of the rate", CPU: low}
	for _, tc := range []struct {
		name string
		p    capacity.Probe
		want string // "" = nothing added
	}{
		{"simulated", capacity.Probe{Sustained: true}, ""},
		{"sustained on little CPU", capacity.Probe{Sustained: true, CPU: low}, ", cpu 0.45 of 2 cores"},
		{"failed on little CPU", capacity.Probe{CPU: low}, ", cpu 0.45 of 2 cores LOW CPU: under 0.8 of the cores it assumes, the verdict may be the machine's"},
		{"failed on full CPU", capacity.Probe{CPU: full}, ", cpu 0.93 of 2 cores"},
		{"failed once, then sustained", capacity.Probe{Sustained: true, CPU: full, FirstAttempt: first},
			", cpu 0.93 of 2 cores; first attempt OVERLOADED: lag grows 900 records/s >= 1% of the rate, cpu 0.45 of 2 cores, not confirmed"},
		{"failed twice", capacity.Probe{CPU: full, FirstAttempt: first},
			", cpu 0.93 of 2 cores; first attempt OVERLOADED: lag grows 900 records/s >= 1% of the rate, cpu 0.45 of 2 cores, confirmed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := liveProbe(tc.p); got != tc.want {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// --sim-capacity is refused before the first probe unless the search is
// live and the file is the simulator's search of the same system,
// workload and hardware.
func TestSimCapacityRefused(t *testing.T) {
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim")
	if code, o, e := bench(t, append([]string{"capacity", "--system", "none", "--out", sim}, cheapCapacity...)...); code != 0 {
		t.Fatalf("simulated search: exit %d\n%s\n%s", code, o, e)
	}
	file := filepath.Join(sim, "capacity.json")
	live := append([]string{"capacity", "--runtime", "live", "--out", filepath.Join(dir, "live")}, cheapCapacity...)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"not live", append([]string{"capacity", "--out", filepath.Join(dir, "x")}, append(cheapCapacity, "--system", "none")...), "only a live search"},
		{"another system", append(live, "--system", "stormack"), "holds no search of stormack/default on grep"},
		{"other hardware", append(live, "--system", "none", "--workers", "1"), "its hardware is 2 workers x 4 cores"},
		{"no such file", append(live, "--system", "none"), "no-such.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := file
			if tc.name == "no such file" {
				f = filepath.Join(dir, "no-such.json")
			}
			code, stdout, stderr := bench(t, append(tc.args, "--sim-capacity", f)...)
			if code != harness.ExitUsage || !strings.Contains(stderr, tc.want) || strings.Contains(stdout, "probe ") {
				t.Fatalf("exit %d, want 2 naming %q before any probe\n%s\n%s", code, tc.want, stdout, stderr)
			}
		})
	}
}
