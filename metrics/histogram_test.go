package metrics

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"ftbench/engine"
)

// TestBucketLayout checks the index arithmetic exhaustively: buckets are
// contiguous (the value after a bucket's highest value starts the next
// bucket), so no value is skipped or double-counted, and the reported value
// of every bucket from 1µs up is within 1% of every value in it.
func TestBucketLayout(t *testing.T) {
	last := bucketIndex(math.MaxInt64)
	if last != numChunks*subCount-1 {
		t.Fatalf("index of MaxInt64 = %d, want %d", last, numChunks*subCount-1)
	}
	if bucketHigh(last) != math.MaxInt64 {
		t.Fatalf("bucketHigh(last) = %d, want MaxInt64", bucketHigh(last))
	}
	var lo uint64
	for i := 0; i <= last; i++ {
		hi := bucketHigh(i)
		if hi < lo {
			t.Fatalf("bucket %d: high %d < low %d", i, hi, lo)
		}
		if bucketIndex(lo) != i || bucketIndex(hi) != i {
			t.Fatalf("bucket %d: index(lo=%d)=%d index(hi=%d)=%d", i, lo, bucketIndex(lo), hi, bucketIndex(hi))
		}
		if lo >= uint64(engine.Microsecond) {
			if rel := float64(hi-lo) / float64(lo); rel > 0.01 {
				t.Fatalf("bucket %d [%d,%d]: relative error %.4f > 1%%", i, lo, hi, rel)
			}
		}
		lo = hi + 1
	}
}

func TestBucketIndexSmallValuesExact(t *testing.T) {
	for _, v := range []uint64{0, 1, 2, 127, 128, 200, 255} {
		if got := bucketIndex(v); got != int(v) {
			t.Errorf("bucketIndex(%d) = %d, want exact %d", v, got, v)
		}
		if got := bucketHigh(int(v)); got != v {
			t.Errorf("bucketHigh(%d) = %d, want %d", v, got, v)
		}
	}
}

func TestQuantile(t *testing.T) {
	seq := func(from, to engine.Time) []engine.Time {
		var xs []engine.Time
		for v := from; v <= to; v++ {
			xs = append(xs, v)
		}
		return xs
	}
	tests := []struct {
		name string
		add  []engine.Time
		q    float64
		want engine.Time
	}{
		{"empty", nil, 0.5, 0},
		{"single exact at p0", []engine.Time{123456789}, 0, 123456789},
		{"single exact at p50", []engine.Time{123456789}, 0.5, 123456789},
		{"1..100 p50", seq(1, 100), 0.5, 50},
		{"1..100 p99", seq(1, 100), 0.99, 99},
		{"1..100 p100", seq(1, 100), 1, 100},
		{"1..100 p0 is min", seq(1, 100), 0, 1},
		{"q above 1 clamps", seq(1, 100), 7, 100},
		{"q below 0 clamps", seq(1, 100), -1, 1},
		{"NaN q is p0", seq(1, 100), math.NaN(), 1},
		{"negative values clamp to 0", []engine.Time{-5, -7}, 1, 0},
		// 1_000_003 shares a bucket whose highest value is larger than it;
		// the answer must still not exceed Max.
		{"never above max", []engine.Time{10, 1_000_003}, 1, 1_000_003},
		// Two values in one wide bucket: p0 reports the bucket's high end,
		// but never below Min or above Max.
		{"p0 within range", []engine.Time{1_000_000, 1_000_003}, 0, 1_000_003},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h Histogram
			for _, v := range tt.add {
				h.Add(v)
			}
			if got := h.Quantile(tt.q); got != tt.want {
				t.Errorf("Quantile(%v) = %d, want %d", tt.q, got, tt.want)
			}
		})
	}
}

// TestQuantileRelativeError compares against exact order statistics of a
// log-uniform sample spanning 1µs..1000s.
func TestQuantileRelativeError(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var h Histogram
	xs := make([]engine.Time, 50000)
	for i := range xs {
		xs[i] = engine.Time(math.Exp(rng.Float64()*math.Log(1e9)) * 1e3)
		h.Add(xs[i])
	}
	slices.Sort(xs)
	for _, q := range []float64{0, 0.001, 0.1, 0.5, 0.9, 0.99, 0.999, 1} {
		rank := int(math.Ceil(q * float64(len(xs))))
		if rank < 1 {
			rank = 1
		}
		exact := xs[rank-1]
		got := h.Quantile(q)
		if got < exact || float64(got-exact) > 0.01*float64(exact) {
			t.Errorf("q=%v: got %d, exact %d (rel %.5f)", q, got, exact, float64(got-exact)/float64(exact))
		}
	}
	if h.Min() != xs[0] || h.Max() != xs[len(xs)-1] {
		t.Errorf("min/max = %d/%d, want %d/%d", h.Min(), h.Max(), xs[0], xs[len(xs)-1])
	}
}

func TestMinMaxMeanCount(t *testing.T) {
	tests := []struct {
		name      string
		add       []engine.Time
		min, max  engine.Time
		mean      float64
		wantCount int64
	}{
		{"empty", nil, 0, 0, 0, 0},
		{"one", []engine.Time{42}, 42, 42, 42, 1},
		{"several", []engine.Time{5, 1, 9, 3}, 1, 9, 4.5, 4},
		{"negative clamps", []engine.Time{-10, 10}, 0, 10, 5, 2},
		// An int64 sum would overflow; the 128-bit sum must not.
		{"huge", []engine.Time{1 << 62, 1 << 62, 1 << 62, 1 << 62}, 1 << 62, 1 << 62, math.Exp2(62), 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h Histogram
			for _, v := range tt.add {
				h.Add(v)
			}
			if h.Count() != tt.wantCount || h.Min() != tt.min || h.Max() != tt.max || h.Mean() != tt.mean {
				t.Errorf("count/min/max/mean = %d/%d/%d/%v, want %d/%d/%d/%v",
					h.Count(), h.Min(), h.Max(), h.Mean(), tt.wantCount, tt.min, tt.max, tt.mean)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	a := []engine.Time{3, 900, 5_000_000, 7e9}
	b := []engine.Time{1, 2_000, 80_000_000, 6e11}
	tests := []struct {
		name string
		dst  []engine.Time
		src  []engine.Time
	}{
		{"both non-empty", a, b},
		{"into empty", nil, b},
		{"from empty", a, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h, o, want Histogram
			for _, v := range tt.dst {
				h.Add(v)
				want.Add(v)
			}
			for _, v := range tt.src {
				o.Add(v)
				want.Add(v)
			}
			h.Merge(&o)
			assertSameHistogram(t, &h, &want)
		})
	}
	t.Run("nil", func(t *testing.T) {
		var h Histogram
		h.Add(7)
		h.Merge(nil)
		if h.Count() != 1 {
			t.Errorf("count after Merge(nil) = %d", h.Count())
		}
	})
	t.Run("self doubles", func(t *testing.T) {
		var h, want Histogram
		for _, v := range a {
			h.Add(v)
			want.Add(v)
			want.Add(v)
		}
		h.Merge(&h)
		assertSameHistogram(t, &h, &want)
	})
}

func assertSameHistogram(t *testing.T, got, want *Histogram) {
	t.Helper()
	if got.Count() != want.Count() || got.Min() != want.Min() || got.Max() != want.Max() || got.Mean() != want.Mean() {
		t.Fatalf("count/min/max/mean = %d/%d/%d/%v, want %d/%d/%d/%v",
			got.Count(), got.Min(), got.Max(), got.Mean(), want.Count(), want.Min(), want.Max(), want.Mean())
	}
	for _, q := range []float64{0, 0.25, 0.5, 0.75, 0.99, 1} {
		if g, w := got.Quantile(q), want.Quantile(q); g != w {
			t.Errorf("Quantile(%v) = %d, want %d", q, g, w)
		}
	}
}

func TestReset(t *testing.T) {
	var h Histogram
	h.Add(10)
	h.Add(1e9)
	h.Reset()
	if h.Count() != 0 || h.Quantile(0.5) != 0 || h.Max() != 0 || h.Min() != 0 || h.Mean() != 0 {
		t.Fatalf("after Reset: count %d p50 %d max %d min %d mean %v", h.Count(), h.Quantile(0.5), h.Max(), h.Min(), h.Mean())
	}
	// Old counts must be gone: a fresh value must be every quantile.
	h.Add(500)
	if h.Quantile(0) != 500 || h.Quantile(1) != 500 || h.Min() != 500 {
		t.Errorf("after Reset+Add(500): p0 %d p100 %d min %d", h.Quantile(0), h.Quantile(1), h.Min())
	}
	// Reset keeps chunks, so re-adding into the same octaves is free.
	if n := testing.AllocsPerRun(100, func() { h.Reset(); h.Add(1e9) }); n != 0 {
		t.Errorf("Reset+Add allocates %v times", n)
	}
}

func TestAddDoesNotAllocate(t *testing.T) {
	var h Histogram
	vals := []engine.Time{0, 999, 12_345, 3_000_000, 2e9, 9e11}
	for _, v := range vals {
		h.Add(v) // first touch of each octave allocates its chunk
	}
	if n := testing.AllocsPerRun(1000, func() {
		for _, v := range vals {
			h.Add(v)
		}
	}); n != 0 {
		t.Errorf("Add allocates %v times per run", n)
	}
}

func BenchmarkHistogramAdd(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	vals := make([]engine.Time, 4096)
	for i := range vals {
		vals[i] = engine.Time(math.Exp(rng.Float64()*math.Log(1e6)) * 1e3) // 1µs..1s
	}
	var h Histogram
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		h.Add(vals[i&4095])
	}
}
