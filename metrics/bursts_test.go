package metrics

import (
	"math"
	"testing"

	"ftbench/engine"
)

// Bursts measures over whole real commit periods: regular bursts give the
// rate they carry whatever the window's phase, and irregular ones (an
// overloaded micro-batch system) give their true average, where a window of
// nominal cycles would count one burst more or less.
func TestBurstsThroughput(t *testing.T) {
	const s = engine.Second
	type burst struct {
		at engine.Time
		n  int // commits, spread over 100ms
	}
	cases := []struct {
		name     string
		cycle    engine.Time
		bursts   []burst
		from, to engine.Time
		want     float64
		ok       bool
	}{
		{"one per cycle", s, []burst{{1 * s, 1000}, {2 * s, 1000}, {3 * s, 1000}, {4 * s, 1000}, {5 * s, 1000}}, 500 * engine.Millisecond, 6 * s, 1000, true},
		{"window starts mid-cycle", s, []burst{{1 * s, 1000}, {2 * s, 1000}, {3 * s, 1000}, {4 * s, 1000}}, 1500 * engine.Millisecond, 10 * s, 1000, true},
		// Overloaded: a batch of 2.5 cycles' input every 2.5 s.
		{"every 2.5 cycles", s, []burst{{2 * s, 2500}, {4500 * engine.Millisecond, 2500}, {7 * s, 2500}, {9500 * engine.Millisecond, 2500}}, 0, 10 * s, 1000, true},
		{"one burst only", s, []burst{{2 * s, 1000}}, 0, 10 * s, 0, false},
		{"bursts before the window", s, []burst{{1 * s, 1000}, {2 * s, 1000}}, 3 * s, 10 * s, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBursts(tc.cycle)
			for _, x := range tc.bursts {
				for i := 0; i < x.n; i++ {
					b.Commit(x.at + engine.Time(i)*100*engine.Millisecond/engine.Time(x.n))
				}
			}
			got, w, ok := b.Throughput(tc.from, tc.to, tc.cycle)
			if ok != tc.ok || (ok && math.Abs(got-tc.want) > 1e-9*tc.want) {
				t.Fatalf("got %.3f/s over %+v (ok %v), want %.3f (ok %v)", got, w, ok, tc.want, tc.ok)
			}
		})
	}
	if NewBursts(0) != nil {
		t.Error("a continuous sink needs no bursts")
	}
}

// CommitN(at, n) leaves Bursts exactly as n Commit(at) calls do, whether
// the instant starts a burst or continues one, and ignores n <= 0.
func TestBurstsCommitNIsNCommits(t *testing.T) {
	const s = engine.Second
	steps := []struct {
		at engine.Time
		n  int
	}{{1 * s, 3}, {1 * s, 1}, {1*s + 1, 0}, {3 * s, 5}, {3*s + 10, 2}, {6 * s, -1}, {6 * s, 4}}
	one, many := NewBursts(s), NewBursts(s)
	for _, st := range steps {
		for i := 0; i < st.n; i++ {
			one.Commit(st.at)
		}
		many.CommitN(st.at, st.n)
		if one.n != many.n || one.last != many.last || len(one.starts) != len(many.starts) {
			t.Fatalf("after %+v: CommitN gives n %d last %d starts %v, Commit gives %d %d %v", st, many.n, many.last, many.starts, one.n, one.last, one.starts)
		}
		for i := range one.starts {
			if one.starts[i] != many.starts[i] {
				t.Fatalf("after %+v: starts %v, want %v", st, many.starts, one.starts)
			}
		}
	}
	var none *Bursts
	none.CommitN(s, 3) // a continuous sink's nil Bursts ignores it
}
