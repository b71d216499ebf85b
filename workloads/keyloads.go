package workloads

import (
	"iter"

	"ftbench/engine"
)

// The exact key distributions of the keyed workloads, for the capacity
// bound (KeySkewed): which keys their hash-partitioned stages receive and
// how much of each stage's CPU each key's records take.

// KeyLoads: every word of a line is one lookup in the Zipf table, so word
// rank r is drawn with probability (entries of the table equal to r) /
// 2^16, exactly; each word costs count and sink the same.
func (w *wordcount) KeyLoads(_ *engine.CostModel, stage string) iter.Seq2[uint64, float64] {
	if stage != "count" && stage != "sink" {
		return nil
	}
	return func(yield func(uint64, float64) bool) {
		// The table is sorted by rank: count each run of equal entries.
		for i := 0; i < len(w.table); {
			j := i
			for j < len(w.table) && w.table[j] == w.table[i] {
				j++
			}
			if !yield(uint64(w.table[i]), float64(j-i)) {
				return
			}
			i = j
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
