package barrier

import (
	"testing"

	"ftbench/engine"
	"ftbench/harness"
	_ "ftbench/systems/none"
)

// BenchmarkCheckpointOverhead is the overhead acceptance line: steady-state
// throughput of barrier at a 1 s checkpoint interval and no faults, against
// none, on wordcount at an offered rate (400k records/s) that saturates
// both. It reports the simulated throughputs and their ratio (must be >=
// 0.9); ns/op is only the cost of simulating the runs. Run with
//
//	go test -run '^$' -bench CheckpointOverhead -benchtime 1x ./systems/barrier/
func BenchmarkCheckpointOverhead(b *testing.B) {
	run := func(system, variant string) float64 {
		cfg := harness.DefaultConfig()
		cfg.System, cfg.Variant = system, variant
		cfg.Rate = 400000
		cfg.Duration = 10 * engine.Second
		out, err := harness.Execute(cfg)
		if err != nil {
			b.Fatal(err)
		}
		if out.Result.Verdict != "exactly-once" {
			b.Fatalf("%s %s: verdict %s", system, variant, out.Result.Verdict)
		}
		if out.Result.ThroughputRPS == nil {
			b.Fatalf("%s %s: no throughput measured", system, variant)
		}
		return *out.Result.ThroughputRPS
	}
	for b.Loop() {
		none := run("none", "")
		b.ReportMetric(none, "none-rps")
		for _, v := range []string{Aligned, Unaligned} {
			t := run("barrier", v)
			b.ReportMetric(t, v+"-rps")
			b.ReportMetric(t/none, v+"/none")
		}
	}
}
