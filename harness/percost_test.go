package harness

import (
	"math"
	"slices"
	"strings"
	"testing"

	"ftbench/engine"
	_ "ftbench/systems/all"
)

// --cost count.state-cpu=8us doubles the state cost of wordcount's count
// operator and nothing else. In every system the CPU the run charges grows
// by exactly that: 4 µs more for each of the words count updates (one per
// expected effect, without faults), and in the systems that run each
// operator instance as its own process, only count's instances pay it.
// Lineage's executors run every operator's work, so there the check is on
// their total: any leak into another operator would add to it.
func TestPerOperatorCostReachesOnlyThatOperator(t *testing.T) {
	const extra = 4 * engine.Microsecond // 8 µs instead of the default 4 µs
	for _, system := range []string{"none", "barrier", "stormack", "snapshot", "lineage", "kstreams", "trident"} {
		t.Run(system, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.System = system
			cfg.Duration = 2 * engine.Second
			cfg.Rate = 20_000 // far below capacity either way: same records, same order
			base, words := cpuByProc(t, cfg)
			cfg.CostOverride = []string{"count.state-cpu=8us"}
			over, _ := cpuByProc(t, cfg)

			want := float64(words) * float64(extra)
			var total float64
			for name, b := range base {
				d := float64(over[name] - b)
				total += d
				if system == "lineage" || system == "kstreams" || system == "trident" {
					continue // processes that run several operators' work
				}
				if !runsCount(name) && math.Abs(d) > 0.005*float64(b) {
					t.Errorf("%s (not count) CPU moved by %.0f ns of %d", name, d, b)
				}
			}
			t.Logf("%d words: CPU grew by %.0f ns, %.0f expected", words, total, want)
			if math.Abs(total-want) > 0.01*want {
				t.Errorf("CPU grew by %.0f ns, want %.0f (%d words x %v)", total, want, words, extra)
			}
		})
	}
}

// cpuByProc runs cfg and returns each process's CPU and the expected
// effects (one per word for wordcount).
func cpuByProc(t *testing.T, cfg Config) (map[string]engine.Time, int64) {
	t.Helper()
	r, err := prepare(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := r.run()
	if out.Result.ExitCode != ExitOK {
		t.Fatalf("exit %d: %v", out.Result.ExitCode, out.Result.Problems)
	}
	s, ok := r.rt.(simRuntime)
	if !ok {
		t.Fatalf("runtime %T, want the simulator", r.rt)
	}
	cpu := map[string]engine.Time{}
	for i, p := range r.dep.Procs {
		cpu[p.Name] = s.CPU(engine.ProcID(i))
	}
	return cpu, r.expectedTotal()
}

// runsCount reports whether process proc ("count/0", a chained
// "count→sink/0") runs the count operator.
func runsCount(proc string) bool {
	ops, _, _ := strings.Cut(proc, "/")
	return slices.Contains(strings.Split(ops, "→"), "count")
}

// Per-operator overrides are bad input, before anything runs, when they
// name an operator the workload lacks or exceed the cost limits.
func TestPerOperatorCostInputErrors(t *testing.T) {
	tests := []struct{ workload, override, want string }{
		{"wordcount", "cnt.state-cpu=8us", `workload wordcount has no operator "cnt"`},
		{"grep", "count.state-cpu=8us", `workload grep has no operator "count"`},
		{"wordcount", "count.state-cpu=100000h", "operator count: cost state-cpu must be at most"},
		{"wordcount", "count.net-latency=1ms", "belongs to the cluster"},
		{"bank-p2p", "debit.state-cpu=8us", `workload bank-p2p has no operator "debit"`},
	}
	for _, tc := range tests {
		cfg := DefaultConfig()
		cfg.Workload = tc.workload
		if tc.workload == "bank-p2p" {
			cfg.System = "snapshot"
		}
		cfg.CostOverride = []string{tc.override}
		_, err := prepare(cfg)
		if !IsInputError(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s on %s: %v, want bad input containing %q", tc.override, tc.workload, err, tc.want)
		}
	}
}
