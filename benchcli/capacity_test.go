package benchcli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"ftbench/capacity"
)

// The capacity workload is made cheap to simulate: a filter CPU cost of
// 500µs puts the capacity near 4000 records/s, so probes are small, and
// short: 2s of input (15 buckets after the warm-up) unless the commit cycle
// asks for more (the tests shorten the cycles to 200ms: 2.7s probes).
var cheapCapacity = []string{"--workload", "grep", "--parallelism", "2", "--workers", "2", "--cost", "record-cpu=500us", "--duration", "2s"}

// A run just below a found capacity is sustained and one above it is
// overloaded, for a continuous system (none) and a micro-batch one
// (lineage, whose lag is a sawtooth).
func TestCapacityBracketsOverload(t *testing.T) {
	for _, sys := range [][]string{{"none"}, {"lineage", "--batch-interval", "200ms"}} {
		t.Run(sys[0], func(t *testing.T) {
			dir := t.TempDir()
			flags := append(append([]string{"--system"}, sys...), cheapCapacity...)
			args := append([]string{"capacity", "--out", dir}, flags...)
			code, stdout, stderr := bench(t, args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			if n := strings.Count(stdout, "probe "); n < 5 || !strings.Contains(stdout, "capacity: ") {
				t.Fatalf("want a line per probe and the capacity:\n%s", stdout)
			}
			b, err := os.ReadFile(filepath.Join(dir, "capacity.json"))
			if err != nil {
				t.Fatal(err)
			}
			var res capacity.Result
			if err := json.Unmarshal(b, &res); err != nil {
				t.Fatal(err)
			}
			if res.CapacityRPS == nil || res.OverloadedAtRPS > *res.CapacityRPS*1.02 || len(res.Probes) == 0 {
				t.Fatalf("capacity %v, overloaded at %v, %d probes", res.CapacityRPS, res.OverloadedAtRPS, len(res.Probes))
			}
			for _, tc := range []struct {
				factor float64
				want   bool
			}{{0.95, false}, {1.2, true}} {
				rate := strconv.FormatFloat(*res.CapacityRPS*tc.factor, 'f', 0, 64)
				out := t.TempDir()
				// The run's --duration comes last, so it wins.
				args := append(append([]string{"run", "--rate", rate, "--out", out}, flags...), "--duration", strconv.FormatFloat(res.ProbeDurationS, 'f', -1, 64)+"s")
				code, stdout, stderr := bench(t, args...)
				if code != 0 {
					t.Fatalf("%v: exit %d\n%s\n%s", args, code, stdout, stderr)
				}
				m := readResult(t, out)
				if m["overloaded"] != tc.want {
					t.Fatalf("%g x capacity (%s records/s): overloaded %v, want %v (lag slope %v)", tc.factor, rate, m["overloaded"], tc.want, m["lag_slope_rps"])
				}
				if got := strings.Count(stdout, "OVERLOADED"); got != map[bool]int{false: 0, true: 1}[tc.want] {
					t.Fatalf("%g x capacity: %d OVERLOADED lines:\n%s", tc.factor, got, stdout)
				}
			}
		})
	}
}

func TestCapacityBadInput(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown system", []string{"--system", "nope"}, `unknown system "nope"`},
		{"fault", []string{"--fault", "crash"}, `without faults`},
		{"bad latency bound", []string{"--latency-bound", "soon"}, `--latency-bound`},
		{"zero latency bound", []string{"--latency-bound", "0s"}, `--latency-bound`},
		{"bad rate", []string{"--rate", "-3"}, `--rate`},
		{"argument", []string{"extra"}, `no arguments`},
		{"unknown variant", []string{"--system", "barrier", "--variant", "x"}, `no variant "x"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			requireUsageError(t, tc.want, append([]string{"capacity", "--out", dir}, tc.args...)...)
		})
	}
}

// bench compare --capacity searches every system into one capacity.json,
// prints the ratio to none, and bench report draws it.
func TestCompareCapacity(t *testing.T) {
	dir := t.TempDir()
	args := append([]string{"compare", "--capacity", "--system", "none,barrier/aligned", "--checkpoint-interval", "200ms", "--out", dir}, cheapCapacity...)
	code, stdout, stderr := bench(t, args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	cmp, err := capacity.ReadFile(filepath.Join(dir, "capacity.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cmp.Systems) != 2 || cmp.Systems[0].System != "none" || cmp.Systems[1].System != "barrier" {
		t.Fatalf("systems %+v", cmp.Systems)
	}
	for _, r := range cmp.Systems {
		if r.CapacityRPS == nil || cmp.Ratio(r) == nil {
			t.Fatalf("%s: capacity %v", r.System, r.CapacityRPS)
		}
	}
	if !strings.Contains(stdout, "vs none") || !strings.Contains(stdout, "1.000") {
		t.Fatalf("no ratio column:\n%s", stdout)
	}
	if code, stdout, stderr := bench(t, "report", dir); code != 0 || !strings.Contains(stdout, "1 plots") {
		t.Fatalf("report: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "report", "capacity.png")); err != nil {
		t.Fatal(err)
	}
	requireUsageError(t, "--latency-bound", "compare", "--system", "none", "--latency-bound", "1s", "--out", t.TempDir())
	requireUsageError(t, "without faults", "compare", "--capacity", "--system", "none", "--fault", "crash", "--out", t.TempDir())
}

// bench compare names every overloaded run in one warning line each.
func TestCompareWarnsOverloaded(t *testing.T) {
	args := append([]string{"compare", "--system", "none"}, cheapCapacity...)
	code, stdout, stderr := bench(t, append(args, "--rate", "4500", "--duration", "3s", "--out", t.TempDir())...)
	if code != 0 || strings.Count(stdout, "warning: none/default: OVERLOADED: offered 4500 records/s") != 1 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, _ = bench(t, append(args, "--rate", "3000", "--duration", "3s", "--out", t.TempDir())...)
	if code != 0 || strings.Contains(stdout, "OVERLOADED") {
		t.Fatalf("exit %d, a sustained run warned:\n%s", code, stdout)
	}
}
