package metrics

import (
	"math"
	"testing"

	"ftbench/engine"
)

const (
	tBucket = 100 * engine.Millisecond
	tSec    = engine.Second
)

// trendRows builds n buckets whose lag at each bucket's end is lag(end).
func trendRows(n int, lag func(end engine.Time) float64) []Row {
	rows := make([]Row, n)
	for i := range rows {
		start := engine.Time(i) * tBucket
		rows[i] = Row{Start: start, Lag: int64(math.Round(lag(start + tBucket)))}
	}
	return rows
}

// sawtooth is a 2PC-style lag: it climbs at rate records/s for a whole cycle
// and drops to base at every commit, the commits at phase + k·cycle, plus a
// trend of growth records/s.
func sawtooth(base, rate, growth float64, cycle, phase engine.Time) func(engine.Time) float64 {
	return func(t engine.Time) float64 {
		into := ((t-phase)%cycle + cycle) % cycle
		return base + rate*into.Seconds() + growth*t.Seconds()
	}
}

func TestLagTrend(t *testing.T) {
	cases := []struct {
		name     string
		rows     []Row
		from, to engine.Time
		cycle    engine.Time
		want     float64
		ok       bool
		samples  int
	}{
		{"continuous flat", trendRows(200, func(engine.Time) float64 { return 3000 }), 2 * tSec, 14 * tSec, 0, 0, true, 120},
		{"continuous linear growth", trendRows(200, func(e engine.Time) float64 { return 1000 + 500*e.Seconds() }), 2 * tSec, 14 * tSec, 0, 500, true, 120},
		{"continuous shrinking backlog", trendRows(200, func(e engine.Time) float64 { return 1e6 - 2000*e.Seconds() }), 2 * tSec, 14 * tSec, 0, -2000, true, 120},
		{"continuous too short", trendRows(200, func(engine.Time) float64 { return 1 }), 2 * tSec, 2*tSec + 9*tBucket, 0, 0, false, 9},
		{"window past the rows", trendRows(25, func(engine.Time) float64 { return 1 }), 2 * tSec, 14 * tSec, 0, 0, false, 5},
		{"flat sawtooth, commits at 0", trendRows(200, sawtooth(100, 1e5, 0, tSec, 0)), 2 * tSec, 14 * tSec, tSec, 0, true, 12},
		{"flat sawtooth, commits at .3", trendRows(200, sawtooth(100, 1e5, 0, tSec, 300*engine.Millisecond)), 2 * tSec, 14 * tSec, tSec, 0, true, 12},
		{"flat sawtooth, commits at .9", trendRows(200, sawtooth(100, 1e5, 0, tSec, 900*engine.Millisecond)), 2 * tSec, 14 * tSec, tSec, 0, true, 12},
		{"flat sawtooth, window mid-tooth", trendRows(200, sawtooth(100, 1e5, 0, tSec, 0)), 2300 * engine.Millisecond, 14 * tSec, tSec, 0, true, 11},
		{"flat sawtooth, partial last cycle", trendRows(200, sawtooth(100, 1e5, 0, tSec, 0)), 2 * tSec, 12500 * engine.Millisecond, tSec, 0, true, 10},
		{"flat 2s sawtooth", trendRows(300, sawtooth(0, 5e4, 0, 2*tSec, 700*engine.Millisecond)), 2 * tSec, 27 * tSec, 2 * tSec, 0, true, 12},
		{"growing sawtooth", trendRows(200, sawtooth(100, 1e5, 750, tSec, 400*engine.Millisecond)), 2 * tSec, 14 * tSec, tSec, 750, true, 12},
		{"growing sawtooth, mid-tooth", trendRows(200, sawtooth(100, 1e5, 750, tSec, 400*engine.Millisecond)), 2150 * engine.Millisecond, 14 * tSec, tSec, 750, true, 11},
		{"sawtooth, 9 whole cycles", trendRows(200, sawtooth(100, 1e5, 0, tSec, 0)), 2 * tSec, 11900 * engine.Millisecond, tSec, 0, false, 9},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr, ok := LagTrend(tc.rows, tc.from, tc.to, tc.cycle)
			if ok != tc.ok || tr.Samples != tc.samples {
				t.Fatalf("ok=%v samples=%d, want ok=%v samples=%d", ok, tr.Samples, tc.ok, tc.samples)
			}
			if !ok {
				return
			}
			// Lags are whole records, so a line through rounded values
			// may be off by far less than a record per second.
			if math.Abs(tr.SlopeRPS-tc.want) > 0.5 {
				t.Fatalf("slope %.6g records/s, want %g", tr.SlopeRPS, tc.want)
			}
		})
	}
}

// A commit instant that jitters by a bucket moves a cycle's mean by a
// fraction of the tooth, far below the overload threshold at the rate that
// makes the tooth.
func TestLagTrendCommitJitter(t *testing.T) {
	const rate = 1e5
	rows := trendRows(200, func(e engine.Time) float64 {
		k := int64(e / tSec)
		phase := engine.Time(k%3) * tBucket // commits at k, k+.1s, k+.2s, ...
		return sawtooth(0, rate, 0, tSec, phase)(e)
	})
	tr, ok := LagTrend(rows, 2*tSec, 14*tSec, tSec)
	if !ok || tr.Overloaded(rate) {
		t.Fatalf("jittered flat sawtooth: ok=%v slope %g, overloaded at %g/s", ok, tr.SlopeRPS, rate)
	}
}

func TestOverloaded(t *testing.T) {
	cases := []struct {
		slope, rate float64
		want        bool
	}{
		{0, 1000, false}, {-50, 1000, false}, {9.99, 1000, false}, {10, 1000, true}, {500, 1000, true},
	}
	for _, tc := range cases {
		if got := (Trend{SlopeRPS: tc.slope}).Overloaded(tc.rate); got != tc.want {
			t.Errorf("slope %g at rate %g: overloaded=%v, want %v", tc.slope, tc.rate, got, tc.want)
		}
	}
}
