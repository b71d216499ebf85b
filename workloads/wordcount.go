package workloads

import (
	"math"

	"ftbench/engine"
)

// wordcount: source -> split (flatMap line into words) -> count (keyed by
// word) -> sink. Lines hold 1-5 words drawn from a Zipf distribution over a
// vocabulary, so a few keys are hot, as in real text.
type wordcount struct {
	seed  uint64
	plan  Plan
	table []uint16 // quantised inverse CDF of the Zipf distribution (fits in L2)
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
			{Name: "vocabulary", Default: "10000", Usage: "number of distinct words"},
			{Name: "zipf-s", Default: "1.0", Usage: "Zipf exponent of word frequencies (0 = uniform)"},
		},
		New: newWordcount,
	})
}

func newWordcount(seed uint64, opts map[string]string) (Workload, error) {
	vocab, err := intOption(opts, "vocabulary", 1, 1<<16)
	if err != nil {
		return nil, err
	}
	s, err := floatOption(opts, "zipf-s", 0, 10)
	if err != nil {
		return nil, err
	}
	w := &wordcount{seed: engine.ChildSeed(seed, "workload/wordcount"), table: zipfTable(vocab, s)}
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
		{
			Name:  "sink",
			Input: Forward,
			Cost:  func(c *engine.CostModel, _ engine.Msg) engine.Time { return c.SinkCPU },
			Sink:  true,
		},
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
	for i := int32(0); i < n; i++ {
		u := engine.Mix64(h + uint64(i+1)*0x9e3779b97f4a7c15)
		word := m
		word.Key = uint64(w.table[u>>(64-zipfTableBits)])
		word.Val = 1
		word.ID.Sub = i
		word.Size = wordBytes + 4
		emit(word)
	}
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
