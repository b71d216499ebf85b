package workloads

import (
	"math"
	"runtime"
	"testing"

	"ftbench/engine"
)

// The exact sampler's frequencies match 1/k^s normalised, for several
// exponents (s = 1 included, which math/rand/v2's Zipf does not take):
// every rank's count is within 5 standard deviations of its expectation.
func TestZipfSamplerFrequencies(t *testing.T) {
	const draws = 400_000
	for _, c := range []struct {
		n int
		s float64
	}{{10, 1}, {10, 0.5}, {50, 2}, {7, 1.2}, {1, 1}} {
		z := newZipfSampler(c.n, c.s)
		counts := make([]float64, c.n)
		for i := uint64(0); i < draws; i++ {
			r := z.rank(engine.Mix64(i))
			if r < 0 || r >= c.n {
				t.Fatalf("n=%d s=%g: rank %d out of range", c.n, c.s, r)
			}
			counts[r]++
		}
		var norm float64
		for k := 1; k <= c.n; k++ {
			norm += math.Pow(float64(k), -c.s)
		}
		for k := 1; k <= c.n; k++ {
			p := math.Pow(float64(k), -c.s) / norm
			want, sd := p*draws, math.Sqrt(draws*p*(1-p))
			if math.Abs(counts[k-1]-want) > 5*sd+1e-9 {
				t.Errorf("n=%d s=%g: rank %d drawn %.0f times, want %.0f ± %.0f", c.n, c.s, k, counts[k-1], want, 5*sd)
			}
		}
	}
}

func TestUniformSampler(t *testing.T) {
	const n, draws = 7, 70_000
	counts := make([]float64, n)
	u := uniformSampler(n)
	for i := uint64(0); i < draws; i++ {
		counts[u.rank(engine.Mix64(i))]++
	}
	sd := math.Sqrt(draws * (1.0 / n) * (1 - 1.0/n))
	for r, c := range counts {
		if math.Abs(c-draws/n) > 5*sd {
			t.Errorf("rank %d drawn %.0f times, want %d ± %.0f", r, c, draws/n, 5*sd)
		}
	}
}

// A 10^7-word vocabulary costs O(1) memory: no table or CDF over it.
func TestLargeVocabularyNeedsNoTable(t *testing.T) {
	for _, s := range []string{"1.0", "0"} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		w := mustNew(t, "wordcount", map[string]string{"vocabulary": "10000000", "zipf-s": s})
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<10 {
			t.Errorf("zipf-s=%s: building a 10^7-word wordcount allocated %d bytes, want O(1)", s, grew)
		}
		o := NewOracle(w)
		for off := int64(0); off < 2000; off++ {
			o.Feed(0, off)
		}
		var high bool
		for k := range o.Final() {
			if k >= MaxVocabulary {
				t.Fatalf("word %d outside the vocabulary", k)
			}
			high = high || k >= 1<<16
		}
		if !high {
			t.Errorf("zipf-s=%s: no word beyond the old 65,536 cap in 2000 lines", s)
		}
	}
}

// The default vocabulary still draws its words from the quantised table,
// so default runs (and their baselines) see the same key sequence.
func TestDefaultWordsUnchanged(t *testing.T) {
	w := mustNew(t, "wordcount", nil).(*wordcount)
	table := zipfTable(10000, 1.0)
	for off := int64(0); off < 500; off++ {
		h := w.lineHash(2, off)
		u := engine.Mix64(h + 0x9e3779b97f4a7c15)
		if got, want := w.wordKey(off, u), uint64(table[u>>(64-zipfTableBits)]); got != want {
			t.Fatalf("offset %d: word %d, the table gives %d", off, got, want)
		}
	}
}

// Active periods: after the warm-up, the words of period p are exactly
// block p (B consecutive keys from p*B, wrapping), consecutive blocks are
// disjoint, and the warm-up draws from the whole vocabulary.
func TestActiveKeys(t *testing.T) {
	const vocab, period, warmup = 1000, 200, 400
	w := mustNew(t, "wordcount", map[string]string{
		"vocabulary": "1000", "zipf-s": "0", "active-keys": "0.03",
		"active-period": "200", "active-warmup": "400"}).(*wordcount)
	if w.block != 30 {
		t.Fatalf("block %d, want 30", w.block)
	}
	o := NewOracle(w)
	warm := map[uint64]bool{}
	for off := int64(0); off < warmup; off++ {
		o.Feed(0, off)
	}
	for k := range o.Final() {
		warm[k] = true
	}
	if len(warm) < 500 {
		t.Errorf("warm-up touched %d of %d words, want most of them", len(warm), vocab)
	}
	for p := int64(0); p < 40; p++ { // 40 periods wrap the 1000 words (34 blocks)
		seen := map[uint64]bool{}
		start := uint64(p) * 30 % vocab
		for off := warmup + p*period; off < warmup+(p+1)*period; off++ {
			h := w.lineHash(1, off)
			n := 1 + h%maxWords
			for i := uint64(0); i < n; i++ {
				k := w.wordKey(off, engine.Mix64(h+(i+1)*0x9e3779b97f4a7c15))
				if (k+vocab-start)%vocab >= 30 {
					t.Fatalf("period %d: word %d outside block [%d, %d+30) mod %d", p, k, start, start, vocab)
				}
				seen[k] = true
			}
		}
		if len(seen) < 25 {
			t.Errorf("period %d touched %d of the block's 30 words", p, len(seen))
		}
	}
}
