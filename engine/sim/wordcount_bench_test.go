package sim_test

import (
	"testing"
	"time"

	"ftbench/engine"
	"ftbench/harness"
	_ "ftbench/systems/none"
)

// BenchmarkWordcount60s runs the acceptance workload: 60 s of simulated
// wordcount at 100k records/s through the whole harness (oracle, simulator,
// checks). Reported: wall seconds per run and simulated records and events
// per wall second. Target: under 15 s wall on 2 cores.
func BenchmarkWordcount60s(b *testing.B) {
	cfg := harness.DefaultConfig()
	cfg.Duration = 60 * engine.Second
	cfg.Rate = 100_000
	var records, events float64
	start := time.Now()
	for i := 0; i < b.N; i++ {
		out, err := harness.Execute(cfg)
		if err != nil {
			b.Fatal(err)
		}
		if out.Result.Lost != 0 || out.Result.Duplicates != 0 {
			b.Fatalf("lost=%d dup=%d", out.Result.Lost, out.Result.Duplicates)
		}
		records += float64(out.Result.AppendedRecords)
		events += float64(out.Result.SimEvents)
	}
	wall := time.Since(start).Seconds()
	b.ReportMetric(wall/float64(b.N), "wall-s/run")
	b.ReportMetric(records/wall, "records/s")
	b.ReportMetric(events/wall, "events/s")
}
