package harness_test

import (
	"testing"

	"ftbench/harness"
	_ "ftbench/systems/barrier"
	_ "ftbench/systems/kstreams"
)

// BenchmarkMainJob runs the main job, `bench run --system barrier --fault
// crash`, through the whole harness (oracle, simulator, checks), with and
// without the observer. Reported: input records per wall second. Profile it
// with -cpuprofile / -memprofile to see where the harness spends its time.
func BenchmarkMainJob(b *testing.B) {
	for _, observe := range []bool{false, true} {
		name := "plain"
		if observe {
			name = "observe"
		}
		b.Run(name, func(b *testing.B) {
			cfg := harness.DefaultConfig()
			cfg.System, cfg.Faults, cfg.Observe = "barrier", []string{"crash"}, observe
			var records float64
			for b.Loop() {
				records += float64(executeOK(b, cfg).AppendedRecords)
			}
			b.ReportMetric(records/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkSameRate runs kstreams and barrier on the same input, wordcount
// at 100 000 records/s for 20 s, through the whole harness: the pair issue
// 32's speed line compares (docs/performance.md; there with bench itself,
// a fresh process a run). Profile a system's sub-benchmark with
// -cpuprofile to see where its run goes.
func BenchmarkSameRate(b *testing.B) {
	for _, system := range []string{"kstreams", "barrier"} {
		b.Run(system, func(b *testing.B) {
			cfg := harness.DefaultConfig()
			cfg.System, cfg.Rate = system, 100000
			for b.Loop() {
				executeOK(b, cfg)
			}
		})
	}
}

// executeOK runs cfg and fails the benchmark unless the run exits 0.
func executeOK(b *testing.B, cfg harness.Config) *harness.Result {
	out, err := harness.Execute(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if out.Result.ExitCode != harness.ExitOK {
		b.Fatalf("exit %d: %v", out.Result.ExitCode, out.Result.Problems)
	}
	return out.Result
}
