package harness

import (
	"fmt"
	"time"

	"ftbench/engine"
	"ftbench/metrics"
)

// LagTrend is run.json's lag_trend: the basis of lag_slope_rps and
// overloaded (docs/metrics.md, "Overload").
type LagTrend struct {
	// FromS and ToS bound the steady window the line is fitted over: the
	// end of the warm-up to the start of the bucket holding the first fault
	// (or the end of the input).
	FromS float64 `json:"from_s"`
	ToS   float64 `json:"to_s"`
	// CycleS is the system's commit cycle (0: continuous output); with a
	// cycle each whole cycle is one point, otherwise each bucket.
	CycleS  float64 `json:"cycle_s"`
	Samples int     `json:"samples"`
	// Reason says why lag_slope_rps and overloaded are null.
	Reason string `json:"reason,omitempty"`
}

// overload fits the lag trend over the steady window before the first fault
// and applies the overload criterion (metrics.OverloadSlope of the offered
// rate). It fills res.LagSlopeRPS, res.Overloaded and res.LagTrend, leaving
// the first two null when the window is too short for the fit.
func (r *runner) overload(res *Result, rows []metrics.Row) {
	cycle := r.cycle
	from, to := r.warmUp, r.cfg.Duration
	if first, ok := r.bursts.First(); ok && cycle > 0 {
		// Until a bursty sink's first output the lag only builds up: the
		// pipeline is filling (a 2 s micro-batch commits first at about
		// 4.8 s), and a fit that starts in it sees a slope that is not
		// there (+1.4% at a sustained rate, enough to call it overloaded).
		// A sink whose first output comes more than two cycles after the
		// warm-up is falling behind; its fit starts there.
		from = min(max(from, first), r.warmUp+2*cycle)
	}
	for _, s := range r.specs {
		// The bucket holding a fault is not steady state (as for throughput).
		to = min(to, s.At/r.cfg.Bucket*r.cfg.Bucket)
	}
	res.LagTrend = LagTrend{FromS: from.Seconds(), ToS: max(to, from).Seconds(), CycleS: cycle.Seconds()}
	tr, ok := metrics.LagTrend(rows, from, to, cycle)
	res.LagTrend.Samples = tr.Samples
	if !ok {
		unit := fmt.Sprintf("buckets of %v", time.Duration(r.cfg.Bucket))
		if cycle > 0 {
			unit = fmt.Sprintf("whole commit cycles of %v", time.Duration(cycle))
		}
		res.LagTrend.Reason = fmt.Sprintf("the steady window %v..%v (warm-up end to first fault or end of input) holds %d %s; the lag trend needs %d",
			time.Duration(from), time.Duration(max(to, from)), tr.Samples, unit, metrics.MinTrendSamples)
		return
	}
	slope := round3(tr.SlopeRPS)
	over := tr.Overloaded(r.cfg.Rate)
	res.LagSlopeRPS, res.Overloaded = &slope, &over
}

// MinSteadyDuration is the shortest --duration whose steady window (after
// the warm-up, min(2s, duration/4)) holds metrics.MinTrendSamples whole
// commit cycles (or buckets, for continuous output), rounded up to a whole
// bucket: the shortest run whose overloaded flag is not null. A bursty
// sink's window starts at its first output, at most two cycles after the
// warm-up, so it needs two cycles more.
func MinSteadyDuration(cycle, bucket engine.Time) engine.Time {
	if bucket <= 0 {
		bucket = DefaultBucket
	}
	unit := bucket
	if cycle > 0 {
		unit = cycle
	}
	need := engine.Time(metrics.MinTrendSamples) * unit
	if cycle > 0 {
		need += 2 * cycle
	}
	// d - min(2s, d/4) >= need: with the 2s warm-up when d >= 8s, else
	// d·3/4 >= need.
	d := need + 2*engine.Second
	if d < 8*engine.Second {
		d = (need*4 + 2) / 3
	}
	return (d + bucket - 1) / bucket * bucket
}
