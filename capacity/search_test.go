package capacity

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// threshold is a fake system that sustains every rate below t.
func threshold(t float64, calls *int) ProbeFunc {
	return func(rate float64) (Probe, error) {
		*calls++
		return Probe{Sustained: rate < t}, nil
	}
}

func TestSearchConverges(t *testing.T) {
	cases := []struct {
		name            string
		start, capacity float64
	}{
		{"above the start", 777303, 1_234_567},
		{"far above the start", 1000, 3_000_000},
		{"below the start", 777303, 446_000},
		{"far below the start", 1e6, 1234},
		{"just above the start", 1000, 1000.5},
		{"at the start", 1000, 1000}, // the start itself is overloaded
		{"a power of two times the start", 1000, 8000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var calls int
			var seen []float64
			b, err := Search(tc.start, 0, DefaultTolerance, threshold(tc.capacity, &calls), func(p Probe, lo, hi float64) {
				seen = append(seen, p.RateRPS)
				if lo >= tc.capacity || (hi != 0 && hi < tc.capacity) {
					t.Fatalf("bracket [%g, %g) misses the threshold %g", lo, hi, tc.capacity)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if !(b.Sustained < tc.capacity && tc.capacity <= b.Overloaded) {
				t.Fatalf("bracket [%g, %g) does not hold the threshold %g", b.Sustained, b.Overloaded, tc.capacity)
			}
			if b.Overloaded > b.Sustained*(1+DefaultTolerance) {
				t.Fatalf("bracket [%g, %g) wider than 2%%", b.Sustained, b.Overloaded)
			}
			if b.Sustained < tc.capacity/(1+DefaultTolerance) {
				t.Fatalf("capacity %g more than 2%% below the threshold %g", b.Sustained, tc.capacity)
			}
			if calls != len(b.Probes) || len(seen) != calls || calls > 45 {
				t.Fatalf("%d calls, %d probes, %d progress lines", calls, len(b.Probes), len(seen))
			}
			// Deterministic: the same verdicts give the same probes.
			var calls2 int
			b2, _ := Search(tc.start, 0, DefaultTolerance, threshold(tc.capacity, &calls2), nil)
			if !reflect.DeepEqual(b, b2) {
				t.Fatalf("second search differs:\n%+v\n%+v", b, b2)
			}
		})
	}
}

func TestSearchErrors(t *testing.T) {
	boom := errors.New("boom")
	n := 0
	_, err := Search(1000, 0, DefaultTolerance, func(rate float64) (Probe, error) {
		n++
		if n == 3 {
			return Probe{}, boom
		}
		return Probe{Sustained: true}, nil
	}, nil)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "4000") {
		t.Fatalf("a failing probe: got %v", err)
	}
	_, err = Search(1000, 0, DefaultTolerance, func(float64) (Probe, error) { return Probe{Sustained: true}, nil }, nil)
	if err == nil || !strings.Contains(err.Error(), "still sustained") {
		t.Fatalf("never overloaded: got %v", err)
	}
	b, err := Search(1000, 0, DefaultTolerance, func(float64) (Probe, error) { return Probe{}, nil }, nil)
	if err != nil || b.Sustained != 0 || b.Overloaded == 0 {
		t.Fatalf("never sustained: got %+v, %v", b, err)
	}
	for _, start := range []float64{0, -1} {
		if _, err := Search(start, 0, DefaultTolerance, nil, nil); err == nil {
			t.Fatalf("start %g accepted", start)
		}
	}
}

// Halving stops at the floor: no probe goes below it, and a floor that is
// itself overloaded ends the search with no capacity (Sustained 0,
// Overloaded the floor) instead of probing on down to nonsense rates.
func TestSearchFloor(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		start, floor, capacity float64
		wantNone               bool
	}{
		{"capacity below the floor", 100_000, 71, 50, true},
		{"no rate sustained", 100_000, 71, 0, true},
		{"the start is the floor", 71, 71, 10, true},
		{"capacity just above the floor", 100_000, 71, 72, false},
		{"capacity between floor and start", 100_000, 71, 3000, false},
		{"capacity above the start", 100_000, 71, 300_000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls int
			b, err := Search(tc.start, tc.floor, DefaultTolerance, threshold(tc.capacity, &calls), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range b.Probes {
				if p.RateRPS < tc.floor {
					t.Fatalf("probed %g, below the floor %g", p.RateRPS, tc.floor)
				}
			}
			if tc.wantNone {
				if b.Sustained != 0 || b.Overloaded != tc.floor || b.Probes[len(b.Probes)-1].RateRPS != tc.floor {
					t.Fatalf("want no capacity, overloaded at the floor %g, last probe there: %+v", tc.floor, b)
				}
				return
			}
			if !(b.Sustained < tc.capacity && tc.capacity <= b.Overloaded && b.Overloaded <= b.Sustained*(1+DefaultTolerance)) {
				t.Fatalf("bracket [%g, %g) does not hold the threshold %g within 2%%", b.Sustained, b.Overloaded, tc.capacity)
			}
		})
	}
}
