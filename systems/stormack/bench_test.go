package stormack_test

import (
	"testing"

	"ftbench/engine"
	"ftbench/harness"
	_ "ftbench/systems/none"
)

// BenchmarkGrepThroughputVsNone measures the acking cost the issue asks
// for: steady-state throughput on grep with 100-byte records, offered far
// above capacity so both systems saturate, for stormack and for none (no
// fault tolerance). The ratio comes only from the modelled ack traffic (the
// messages' send CPU and bytes, the acker's and spout's map updates).
//
//	go test -run '^$' -bench GrepThroughput -benchtime 1x ./systems/stormack/
func BenchmarkGrepThroughputVsNone(b *testing.B) {
	rps := func(system string) float64 {
		cfg := harness.DefaultConfig()
		cfg.System = system
		cfg.Workload = "grep"
		cfg.WorkloadOpts = map[string]string{"record-size": "100"}
		cfg.Duration = 4 * engine.Second
		cfg.Drain = engine.Second // saturated: the backlog never drains, and need not
		cfg.Rate = 4e6
		out, err := harness.Execute(cfg)
		if err != nil {
			b.Fatal(err)
		}
		if out.Result.ThroughputRPS == nil {
			b.Fatalf("%s: no throughput measured", system)
		}
		return *out.Result.ThroughputRPS
	}
	for i := 0; i < b.N; i++ {
		s, n := rps("stormack"), rps("none")
		b.ReportMetric(s, "stormack-rec/s")
		b.ReportMetric(n, "none-rec/s")
		b.ReportMetric(s/n, "stormack/none")
	}
}
