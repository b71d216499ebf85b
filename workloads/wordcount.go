package workloads

import (
	"fmt"
	"math"

	"ftbench/engine"
)

// wordcount: source -> split (flatMap line into words) -> count (keyed by
// word) -> sink. Lines hold 1-5 words drawn from a Zipf distribution over a
// vocabulary, so a few keys are hot, as in real text. With active-keys < 1
// only a rotating block of the vocabulary is drawn from in each period (see
// wordKey), so a checkpoint interval changes a known share of the state.
type wordcount struct {
	seed uint64
	plan Plan
	// full draws a rank over the whole vocabulary; active over one
	// active block (nil when every key is active).
	full, active rankSampler
	vocab        uint64
	block        uint64 // keys per active block
	period       int64  // records of a partition per active period
	warmup       int64  // records of a partition drawn from the whole vocabulary first
}

const (
	zipfTableBits = 16
	maxWords      = 5
	wordBytes     = 8
)

func init() {
	Register(Factory{
		Name:     "wordcount",
		Describe: "stateful keyed word counts over Zipf-distributed words (source, split, count, sink)",
		Options: []Option{
			{Name: "vocabulary", Default: "10000", Usage: "number of distinct words (up to 10^7)"},
			{Name: "zipf-s", Default: "1.0", Usage: "Zipf exponent of word frequencies (0 = uniform)"},
			{Name: "active-keys", Default: "1", Usage: "wordcount: share of the vocabulary words are drawn from in each active period (a block that rotates through the vocabulary)"},
			{Name: "active-period", Default: "10000", Usage: "wordcount: records of each partition per active period (active-keys < 1)"},
			{Name: "active-warmup", Default: "0", Usage: "wordcount: first records of each partition drawn from the whole vocabulary, before the active periods (to fill the state)"},
		},
		New: newWordcount,
	})
}

func newWordcount(seed uint64, opts map[string]string) (Workload, error) {
	vocab, err := intOption(opts, "vocabulary", 1, MaxVocabulary)
	if err != nil {
		return nil, err
	}
	s, err := floatOption(opts, "zipf-s", 0, 10)
	if err != nil {
		return nil, err
	}
	share, err := floatOption(opts, "active-keys", 0, 1)
	if err != nil {
		return nil, err
	}
	period, err := intOption(opts, "active-period", 1, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	warmup, err := intOption(opts, "active-warmup", 0, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	w := &wordcount{seed: engine.ChildSeed(seed, "workload/wordcount"), vocab: uint64(vocab),
		full: newRankSampler(vocab, s, true), period: int64(period), warmup: int64(warmup)}
	if share < 1 {
		block := max(1, int(math.Round(share*float64(vocab))))
		if share <= 0 || block >= vocab {
			return nil, fmt.Errorf("--active-keys=%q: want a share in (0, 1] that leaves at least 1 and fewer than all %d words active, or 1", opts["active-keys"], vocab)
		}
		w.block, w.active = uint64(block), newRankSampler(block, s, false)
	}
	w.plan = Plan{Source: "source", Stages: []Stage{
		{
			Name:  "split",
			Input: Forward,
			Cost: func(c *engine.CostModel, m engine.Msg) engine.Time {
				return c.RecordCPU + engine.Time(m.Size)*c.ScanPerByte
			},
			Fn: w.split,
		},
		{
			Name:  "count",
			Input: Hash,
			Cost:  func(c *engine.CostModel, _ engine.Msg) engine.Time { return c.StateCPU },
			Update: func(state *int64, m engine.Msg, emit func(engine.Msg)) {
				*state++
				m.Val = *state
				m.Size = 16
				emit(m)
			},
		},
		sinkStage(),
	}}
	return w, nil
}

// zipfTable maps a uniform 16-bit number to a word rank with probability
// proportional to 1/rank^s: an O(1), allocation-free pure sampler. The
// quantisation gives every rank a multiple of 2^-16 probability; words
// rarer than that are folded into their neighbours.
func zipfTable(vocab int, s float64) []uint16 {
	cdf := make([]float64, vocab)
	sum := 0.0
	for i := range cdf {
		sum += 1 / math.Pow(float64(i+1), s)
		cdf[i] = sum
	}
	table := make([]uint16, 1<<zipfTableBits)
	rank := 0
	for u := range table {
		x := (float64(u) + 0.5) / float64(len(table)) * sum
		for rank < vocab-1 && cdf[rank] < x {
			rank++
		}
		table[u] = uint16(rank)
	}
	return table
}

func (w *wordcount) Name() string { return "wordcount" }
func (w *wordcount) Plan() *Plan  { return &w.plan }

func (w *wordcount) lineHash(part int32, off int64) uint64 {
	return engine.Mix64(w.seed ^ uint64(part)<<48 ^ uint64(off))
}

// Record is a line; its words are derived from (part, off) by split, so the
// source record carries only its size.
func (w *wordcount) Record(part int32, off int64) engine.Msg {
	n := 1 + int32(w.lineHash(part, off)%maxWords)
	return engine.Msg{ID: engine.EffectID{Part: part, Off: off}, Size: n * (wordBytes + 1)}
}

func (w *wordcount) split(m engine.Msg, emit func(engine.Msg)) {
	h := w.lineHash(m.ID.Part, m.ID.Off)
	n := int32(1 + h%maxWords)
	// The line's words are all written before the first is emitted: emit
	// copies a word whole, in 16-byte loads, and a load that spans fields
	// stored a moment before cannot take them from the store buffer, so it
	// waits until they reach the cache (a store-forwarding stall). Written
	// ahead, they have: 7% of the 60 s wordcount's wall time.
	var words [maxWords]engine.Msg
	for i := int32(0); i < n; i++ {
		u := engine.Mix64(h + uint64(i+1)*0x9e3779b97f4a7c15)
		word := &words[i]
		*word = m
		word.Key = w.wordKey(m.ID.Off, u)
		word.Val = 1
		word.ID.Sub = i
		word.Size = wordBytes + 4
	}
	for i := int32(0); i < n; i++ {
		emit(words[i])
	}
}

// MaxVocabulary is the largest wordcount vocabulary.
const MaxVocabulary = 10_000_000

// wordKey is the word drawn with hash u in the line at offset off of its
// partition. With every key active it is the rank drawn over the whole
// vocabulary. Otherwise, after the warm-up, offset off lies in active period
// p = (off - warmup) / period, whose words are the block of B = round(share
// x vocabulary) consecutive keys starting at p*B (mod vocabulary): the rank
// is drawn over B keys (rank 0, the most frequent, is the block's first
// key). Consecutive periods use disjoint blocks until the vocabulary wraps,
// so each period touches B keys that the previous one did not.
func (w *wordcount) wordKey(off int64, u uint64) uint64 {
	if w.active == nil || off < w.warmup {
		return uint64(w.full.rank(u))
	}
	p := uint64((off - w.warmup) / w.period)
	start := (p % w.vocab) * w.block % w.vocab // p*B mod vocab without overflow
	return (start + uint64(w.active.rank(u))) % w.vocab
}

func (w *wordcount) CostPerRecord(c *engine.CostModel) map[string]engine.Time {
	const avgWords = (1 + maxWords) / 2
	send := c.SendCost(wordBytes + 4)
	return map[string]engine.Time{
		"source": c.SourceRecord + c.SendCost(avgWords*(wordBytes+1)),
		"split":  c.RecordCPU + avgWords*(wordBytes+1)*c.ScanPerByte + avgWords*send,
		"count":  avgWords * (c.StateCPU + c.SendCost(16)),
		"sink":   avgWords * c.SinkCPU,
	}
}
