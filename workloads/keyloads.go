package workloads

import (
	"iter"

	"ftbench/engine"
)

// The exact key distributions of the keyed workloads, for the capacity
// bound (KeySkewed): which keys their hash-partitioned stages receive and
// how much of each stage's CPU each key's records take.

// KeyLoads: every word of a line is one draw of the rank sampler, so a
// word's load is its exact sampling probability (rankLoads); each word
// costs count and sink the same. With rotating active blocks the loads are
// those of the first block (ranks 0..B-1): later blocks draw the same
// ranks shifted through the vocabulary, so their busiest instance takes a
// share like the first's but not necessarily the same one.
func (w *wordcount) KeyLoads(_ *engine.CostModel, stage string) iter.Seq2[uint64, float64] {
	if stage != "count" && stage != "sink" {
		return nil
	}
	if w.active != nil {
		return rankLoads(w.active)
	}
	return rankLoads(w.full)
}

// rankLoads yields every rank a sampler draws with a weight proportional
// to its probability, in rank order, without materialising a table.
func rankLoads(r rankSampler) iter.Seq2[uint64, float64] {
	return func(yield func(uint64, float64) bool) {
		switch r := r.(type) {
		case tableSampler:
			// The table is sorted by rank: count each run of equal entries.
			for i := 0; i < len(r); {
				j := i
				for j < len(r) && r[j] == r[i] {
					j++
				}
				if !yield(uint64(r[i]), float64(j-i)) {
					return
				}
				i = j
			}
		case uniformSampler:
			for k := range int(r) {
				if !yield(uint64(k), 1) {
					return
				}
			}
		case *zipfSampler:
			// Rank k-1 is drawn with probability proportional to 1/k^s.
			for k := 1; k <= int(r.n); k++ {
				if !yield(uint64(k-1), r.h(float64(k))) {
					return
				}
			}
		}
	}
}

// KeyLoads: payers are uniform over the accounts, and so (by symmetry)
// are payees. The debit stage receives each transfer under its payer; the
// credit stage receives the debit effect under DebitKey(payer) (passed
// through: RecordCPU) and the credit under CreditKey(payee) (applied:
// StateCPU), each also sent on; the sink writes both alike.
func (b *Bank) KeyLoads(c *engine.CostModel, stage string) iter.Seq2[uint64, float64] {
	if b.p2p {
		return nil
	}
	var debitW, creditW float64
	switch stage {
	case "debit":
		debitW = 1
	case "credit":
		send := float64(c.SendCost(effectBytes))
		debitW, creditW = float64(c.RecordCPU)+send, float64(c.StateCPU)+send
	case "sink":
		debitW, creditW = 1, 1
	default:
		return nil
	}
	return func(yield func(uint64, float64) bool) {
		for a := range b.accounts {
			if stage == "debit" {
				if !yield(uint64(a), debitW) {
					return
				}
				continue
			}
			if !yield(DebitKey(a), debitW) || !yield(CreditKey(a), creditW) {
				return
			}
		}
	}
}
