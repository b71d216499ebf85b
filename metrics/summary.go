package metrics

import "github.com/montanaflynn/stats"

// Stat summarises a small sample (checkpoint durations, sizes, ...).
type Stat struct {
	N                   int
	P50, P99, Max, Mean float64
}

// Summary returns count, median, 99th percentile (linear interpolation
// between closest ranks, as numpy's default), maximum and mean of xs; the
// zero Stat for an empty sample. xs is not modified.
func Summary(xs []float64) Stat {
	if len(xs) == 0 {
		return Stat{}
	}
	// Errors are impossible here: the input is non-empty and the percents
	// are in (0, 100].
	p50, _ := stats.Percentile(xs, 50)
	p99, _ := stats.Percentile(xs, 99)
	mx, _ := stats.Max(xs)
	mean, _ := stats.Mean(xs)
	return Stat{N: len(xs), P50: p50, P99: p99, Max: mx, Mean: mean}
}
