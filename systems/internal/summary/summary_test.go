package summary

import "testing"

func TestRound3(t *testing.T) {
	for x, want := range map[float64]float64{1.2344: 1.234, 1.2346: 1.235, -1.2346: -1.235, 2e-4: 0, 1e6 / 3: 333333.333} {
		if got := Round3(x); got != want {
			t.Errorf("Round3(%v) = %v, want %v", x, got, want)
		}
	}
}
