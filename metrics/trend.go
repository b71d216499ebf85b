package metrics

import "ftbench/engine"

// OverloadSlope is the overload criterion, relative to the offered rate: a
// run is overloaded when its source lag grows by at least this fraction of
// the offered rate per second (Theodolite's lag-trend criterion, made
// relative so that one threshold serves every rate). Below it the lag is
// flat within measurement noise and the system sustains the rate.
const OverloadSlope = 0.01

// MinTrendSamples is the fewest points LagTrend fits a line to: whole
// commit cycles for a system whose output comes in bursts, buckets for one
// whose output is continuous. Fewer points make the slope mostly noise.
const MinTrendSamples = 10

// Trend is a least-squares line fitted to the source lag over time.
type Trend struct {
	// SlopeRPS is the lag's growth in records per second (negative when
	// a backlog shrinks).
	SlopeRPS float64
	// Samples is the number of points fitted: whole cycles when Cycle > 0,
	// buckets otherwise.
	Samples int
	Cycle   engine.Time
}

// Overloaded applies the overload criterion to a lag trend at the offered
// rate (records/s): the lag grows by at least OverloadSlope of the rate.
func (t Trend) Overloaded(rate float64) bool { return t.SlopeRPS >= OverloadSlope*rate }

// LagTrend fits a least-squares line to the source lag (the Lag column of
// rows: the level at the END of each bucket) over the window [from, to), and
// returns its slope. ok is false when the window holds fewer than
// MinTrendSamples points.
//
// With continuous output (cycle <= 0) every bucket lying wholly inside the
// window is a point (its lag at the bucket's end).
//
// When the sink makes output visible in bursts, once per commit cycle (a
// two-phase-commit sink at each checkpoint, a micro-batch at each batch), the
// lag is a sawtooth: it climbs for a whole cycle and drops at the commit. A
// line through every bucket would then depend on where in the tooth the
// window starts and ends, so each whole cycle [from+k·cycle,
// from+(k+1)·cycle) contributes one point instead: the mean lag of its
// buckets, at the cycle's middle. A steady sawtooth gives equal means
// whatever its phase; a growing one gives means that grow by slope·cycle per
// cycle. The mean is preferred to one sample at a fixed phase because the
// commit instant jitters (a checkpoint's duration varies): a sample taken
// near it lands at the top of one tooth and the bottom of the next, while
// the jitter moves a cycle's mean by at most a bucket's worth of the tooth.
// Exact when the cycle is a whole number of buckets (checkpoint and batch
// intervals normally are); otherwise a cycle's point covers the buckets that
// start in it. The partial cycle at the window's end is left out.
func LagTrend(rows []Row, from, to, cycle engine.Time) (Trend, bool) {
	tr := Trend{Cycle: max(cycle, 0)}
	if len(rows) < 2 || to <= from {
		return tr, false
	}
	bucket := rows[1].Start - rows[0].Start
	var xs, ys []float64
	if cycle <= 0 {
		for _, r := range rows {
			if r.Start >= from && r.Start+bucket <= to {
				xs = append(xs, (r.Start + bucket).Seconds())
				ys = append(ys, float64(r.Lag))
			}
		}
	} else {
		n := int((to - from) / cycle)
		sums := make([]float64, n)
		counts := make([]int, n)
		for _, r := range rows {
			if r.Start < from {
				continue
			}
			k := int((r.Start - from) / cycle)
			if k >= n {
				continue
			}
			sums[k] += float64(r.Lag)
			counts[k]++
		}
		for k := 0; k < n; k++ {
			if counts[k] == 0 {
				continue // rows end before the window does
			}
			xs = append(xs, (from + engine.Time(k)*cycle + cycle/2).Seconds())
			ys = append(ys, sums[k]/float64(counts[k]))
		}
	}
	tr.Samples = len(xs)
	if len(xs) < MinTrendSamples {
		return tr, false
	}
	tr.SlopeRPS = slope(xs, ys)
	return tr, true
}

// slope is the least-squares slope of y over x, computed about the means
// so that large times do not cost precision.
func slope(xs, ys []float64) float64 {
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	n := float64(len(xs))
	mx, my = mx/n, my/n
	var sxy, sxx float64
	for i := range xs {
		dx := xs[i] - mx
		sxy += dx * (ys[i] - my)
		sxx += dx * dx
	}
	if sxx == 0 {
		return 0
	}
	return sxy / sxx
}
