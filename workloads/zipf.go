package workloads

import (
	"math"
	"math/bits"

	"ftbench/engine"
)

// rankSampler draws a word rank in [0, n) from a hash: a pure function, so
// the record at (partition, offset) stays a pure function of the seed.
// Rank 0 is the most frequent word.
type rankSampler interface {
	rank(h uint64) int
}

// newRankSampler picks the sampler for n ranks with Zipf exponent s: the
// quantised table for a vocabulary that fits in it (the original sampler,
// kept so that default runs draw the same words as before), otherwise an
// exact O(1)-memory one.
func newRankSampler(n int, s float64, tableOK bool) rankSampler {
	switch {
	case tableOK && n <= 1<<zipfTableBits:
		return tableSampler(zipfTable(n, s))
	case s == 0:
		return uniformSampler(n)
	default:
		return newZipfSampler(n, s)
	}
}

// tableSampler is the quantised inverse CDF (zipfTable).
type tableSampler []uint16

func (t tableSampler) rank(h uint64) int { return int(t[h>>(64-zipfTableBits)]) }

// uniformSampler draws every rank with probability 1/n (Lemire's
// multiply-shift; the bias is below n/2^64).
type uniformSampler int

func (n uniformSampler) rank(h uint64) int {
	hi, _ := bits.Mul64(h, uint64(n))
	return int(hi)
}

// zipfSampler draws rank k-1 with probability proportional to 1/k^s,
// k = 1..n, exactly, by Hörmann and Derflinger's rejection-inversion
// ("Rejection-inversion to generate variates from monotone discrete
// distributions", 1996), as Apache Commons' ZipfRejectionInversionSampler
// and math/rand/v2's Zipf do; unlike math/rand/v2 it takes any s > 0 (Zipf's
// classic s = 1 included). It needs O(1) memory whatever n is — a table or
// CDF over a 10^7-word vocabulary would not — and on average fewer than
// 1.1 uniform draws per sample. The uniforms come from successive hashes of
// h, so a sample is a pure function of h.
type zipfSampler struct {
	n, s       float64
	hIntX1     float64 // H(1.5) - 1
	hIntN      float64 // H(n + 0.5)
	squeezeLim float64 // accept k at once when k - x <= squeezeLim
}

func newZipfSampler(n int, s float64) *zipfSampler {
	z := &zipfSampler{n: float64(n), s: s}
	z.hIntX1 = z.hIntegral(1.5) - 1
	z.hIntN = z.hIntegral(z.n + 0.5)
	z.squeezeLim = 2 - z.hIntegralInverse(z.hIntegral(2.5)-z.h(2))
	return z
}

func (z *zipfSampler) rank(h uint64) int {
	for i := uint64(0); ; i++ {
		// A uniform in [0, 1) from the i-th hash of h (53 bits).
		v := float64(engine.Mix64(h+i*0xd1b54a32d192ed03)>>11) / (1 << 53)
		u := z.hIntN + v*(z.hIntX1-z.hIntN)
		x := z.hIntegralInverse(u)
		k := math.Floor(x + 0.5)
		k = min(max(k, 1), z.n)
		if k-x <= z.squeezeLim || u >= z.hIntegral(k+0.5)-z.h(k) {
			return int(k) - 1
		}
	}
}

// h is the unnormalised density x^-s; hIntegral its antiderivative
// (x^(1-s)-1)/(1-s), log x at s = 1, written to stay accurate near s = 1.
func (z *zipfSampler) h(x float64) float64 { return math.Exp(-z.s * math.Log(x)) }

func (z *zipfSampler) hIntegral(x float64) float64 {
	lx := math.Log(x)
	return helper2((1-z.s)*lx) * lx
}

func (z *zipfSampler) hIntegralInverse(x float64) float64 {
	t := max(x*(1-z.s), -1) // rounding may push it below -1
	return math.Exp(helper1(t) * x)
}

// helper1 is log1p(x)/x, helper2 is expm1(x)/x, both 1 at x = 0.
func helper1(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(0.5-x*(1.0/3-0.25*x))
}

func helper2(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x*0.5*(1+x*(1.0/3)*(1+0.25*x))
}
