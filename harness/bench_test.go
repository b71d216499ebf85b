package harness_test

import (
	"testing"

	"ftbench/harness"
	_ "ftbench/systems/barrier"
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
				out, err := harness.Execute(cfg)
				if err != nil {
					b.Fatal(err)
				}
				if out.Result.ExitCode != harness.ExitOK {
					b.Fatalf("exit %d: %v", out.Result.ExitCode, out.Result.Problems)
				}
				records += float64(out.Result.AppendedRecords)
			}
			b.ReportMetric(records/b.Elapsed().Seconds(), "records/s")
		})
	}
}
