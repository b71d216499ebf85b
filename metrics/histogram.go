// Package metrics turns the raw observations of a run (commits with their
// latency, source-lag samples, per-run durations) into the numbers the
// docs/metrics.md's Metric definitions define: per-bucket time series, steady-state
// throughput, recovery time and small-sample summaries.
//
// Everything here is single-goroutine and deterministic: the same sequence of
// calls gives byte-identical output, so results can be diffed across runs.
package metrics

import (
	"math"
	"math/bits"

	"ftbench/engine"
)

// Histogram layout (log-linear, in the style of HdrHistogram):
//
//   - values below 2^(subBits+1) = 256 ns get one bucket each (exact);
//   - above that, every power-of-two range [2^k, 2^(k+1)) is split into
//     2^subBits = 128 equal buckets.
//
// A bucket [lo, lo+w) at the bottom of its octave has w = lo/128, so
// reporting its highest value overstates any sample in it by less than
// 1/128 ≈ 0.78%: within the 1% budget over the whole int64 range, and in
// particular over 1µs..1000s.
//
// The index of a value v is shift<<subBits + v>>shift with
// shift = max(0, bits.Len64(v)-(subBits+1)); it is contiguous, and each
// group of 128 consecutive indices (a "chunk") is exactly one octave (chunks
// 0 and 1 are the exact values 0..255). Chunks are allocated on first use:
// a latency histogram usually touches a handful of octaves, which keeps the
// per-bucket histograms of a long Series small (about 1 KiB per octave).
const (
	subBits   = 7
	subCount  = 1 << subBits       // buckets per chunk (octave)
	subMask   = subCount - 1       // index within a chunk
	numChunks = 64 - subBits       // shift ≤ 63-(subBits+1) ⇒ chunk ≤ 56
	exactMax  = 1 << (subBits + 1) // values below this are exact
)

// Histogram counts engine.Time values (nanoseconds). The zero value is an
// empty histogram ready to use. It is not safe for concurrent use.
type Histogram struct {
	chunks [numChunks]*[subCount]int64
	n      int64
	// sum is a 128-bit accumulator (hi, lo): tens of millions of latencies
	// of up to 1000 s would overflow an int64 sum, and a float64 sum would
	// make Mean depend on rounding drift.
	sumHi, sumLo uint64
	min, max     engine.Time
}

// NewHistogram returns an empty histogram (the zero value works too).
func NewHistogram() *Histogram { return &Histogram{} }

// bucketIndex maps a non-negative value to its bucket.
func bucketIndex(v uint64) int {
	shift := bits.Len64(v) - (subBits + 1)
	if shift < 0 {
		shift = 0
	}
	return shift<<subBits + int(v>>uint(shift))
}

// bucketHigh is the largest value that maps to bucket i; Quantile reports it
// so that a percentile is never understated.
func bucketHigh(i int) uint64 {
	if i < exactMax {
		return uint64(i)
	}
	shift := uint(i>>subBits) - 1
	top := uint64(i) - uint64(shift)<<subBits // in [128, 256)
	return (top+1)<<shift - 1
}

// Add records one value; negative values count as 0. It does not allocate
// except the first time a value lands in a new octave.
func (h *Histogram) Add(v engine.Time) {
	if v < 0 {
		v = 0
	}
	i := bucketIndex(uint64(v))
	c := h.chunks[i>>subBits]
	if c == nil {
		c = h.chunk(i >> subBits)
	}
	c[i&subMask]++
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.n++
	var carry uint64
	h.sumLo, carry = bits.Add64(h.sumLo, uint64(v), 0)
	h.sumHi += carry
}

// chunk allocates chunk k; kept out of Add so Add stays small enough to inline
// its fast path.
func (h *Histogram) chunk(k int) *[subCount]int64 {
	c := new([subCount]int64)
	h.chunks[k] = c
	return c
}

// Count returns the number of values added.
func (h *Histogram) Count() int64 { return h.n }

// Max returns the largest value added (0 if empty).
func (h *Histogram) Max() engine.Time { return h.max }

// Min returns the smallest value added (0 if empty).
func (h *Histogram) Min() engine.Time { return h.min }

// Mean returns the exact mean of the values added (0 if empty).
func (h *Histogram) Mean() float64 {
	if h.n == 0 {
		return 0
	}
	return (float64(h.sumHi)*math.Exp2(64) + float64(h.sumLo)) / float64(h.n)
}

// Quantile returns the value at quantile q (clamped to [0,1]; NaN counts as
// 0): the highest value of the bucket holding the sample of rank
// ceil(q*Count) (at least 1), clamped to [Min, Max] so that q=1 gives Max
// exactly and no answer lies outside the observed range. It returns 0 for an
// empty histogram.
func (h *Histogram) Quantile(q float64) engine.Time {
	if h.n == 0 {
		return 0
	}
	if !(q > 0) { // also catches NaN
		q = 0
	}
	if q > 1 {
		q = 1
	}
	rank := int64(math.Ceil(q * float64(h.n)))
	if rank < 1 {
		rank = 1
	}
	if rank > h.n {
		rank = h.n
	}
	var seen int64
	for k, c := range h.chunks {
		if c == nil {
			continue
		}
		for j, cnt := range c {
			seen += cnt
			if seen >= rank {
				return h.clamp(bucketHigh(k<<subBits + j))
			}
		}
	}
	return h.max // unreachable while counts and n agree
}

func (h *Histogram) clamp(v uint64) engine.Time {
	if v >= uint64(h.max) {
		return h.max
	}
	if engine.Time(v) < h.min {
		return h.min
	}
	return engine.Time(v)
}

// Merge adds every value of o to h (as if each had been Added). Merging h
// into itself doubles every count.
func (h *Histogram) Merge(o *Histogram) {
	if o == nil || o.n == 0 {
		return
	}
	for k, oc := range o.chunks {
		if oc == nil {
			continue
		}
		c := h.chunks[k]
		if c == nil {
			c = h.chunk(k)
		}
		for j, cnt := range oc {
			c[j] += cnt
		}
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	if o.max > h.max {
		h.max = o.max
	}
	var carry uint64
	h.sumLo, carry = bits.Add64(h.sumLo, o.sumLo, 0)
	h.sumHi += o.sumHi + carry
	h.n += o.n
}

// Reset empties h but keeps its allocated chunks, so a reused histogram
// does not allocate again for the same octaves.
func (h *Histogram) Reset() {
	for _, c := range h.chunks {
		if c != nil {
			*c = [subCount]int64{}
		}
	}
	h.n, h.sumHi, h.sumLo, h.min, h.max = 0, 0, 0, 0, 0
}
