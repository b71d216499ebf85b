package metrics

import (
	"math"
	"slices"
	"testing"
)

func TestSummary(t *testing.T) {
	oneTo100 := make([]float64, 100)
	for i := range oneTo100 {
		oneTo100[i] = float64(100 - i) // descending: Summary must sort a copy
	}
	tests := []struct {
		name string
		xs   []float64
		want Stat
	}{
		{"empty", nil, Stat{}},
		{"single", []float64{7}, Stat{N: 1, P50: 7, P99: 7, Max: 7, Mean: 7}},
		{"two", []float64{1, 3}, Stat{N: 2, P50: 2, P99: 2.98, Max: 3, Mean: 2}},
		// Linear interpolation between closest ranks: rank = p·(n-1).
		{"1..100", oneTo100, Stat{N: 100, P50: 50.5, P99: 99.01, Max: 100, Mean: 50.5}},
	}
	const tol = 1e-9
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := slices.Clone(tt.xs)
			got := Summary(tt.xs)
			if got.N != tt.want.N ||
				math.Abs(got.P50-tt.want.P50) > tol || math.Abs(got.P99-tt.want.P99) > tol ||
				got.Max != tt.want.Max || math.Abs(got.Mean-tt.want.Mean) > tol {
				t.Errorf("Summary = %+v, want %+v", got, tt.want)
			}
			if !slices.Equal(before, tt.xs) {
				t.Error("Summary modified its input")
			}
		})
	}
}
