package kstreams

import (
	"testing"

	"ftbench/engine"
)

// BenchmarkWordcount is one fault-free wordcount run (40 000 records/s,
// 5 s): the simulator's cost of the protocol, for profiling.
func BenchmarkWordcount(b *testing.B) {
	for i := 0; i < b.N; i++ {
		cfg := e2eConfig("wordcount", nil)
		cfg.Rate = 40000
		cfg.Duration = 5 * engine.Second
		execute(&testing.T{}, cfg)
	}
}
