package checkpoint

import (
	"slices"

	"ftbench/engine"
)

// TxnRetryDelay is how long a two-phase-commit sink waits before writing
// again a transaction record the store failed: the store client's retry
// back-off.
const TxnRetryDelay = 100 * engine.Millisecond

// Txn is one pre-committed transaction of a two-phase-commit sink, with
// its effects as the sink keeps them.
type Txn[E any] struct {
	ID      int64
	Effects E
	Stored  bool // its record in the store is durable
}

// Precommitted is a two-phase-commit sink's pre-committed transactions,
// oldest first, and the bookkeeping of their records in the store. A
// checkpoint that lists a transaction is acknowledged only once the
// record is durable (DurableThrough): a restore must find the record to
// commit it. A record the store failed is written again after
// TxnRetryDelay. How a record is written and how a transaction commits
// are the sink's own.
type Precommitted[E any] struct {
	Txns  []Txn[E]
	retry []int64 // transactions whose record the store failed, to write again
}

// Add appends transaction id, just pre-committed.
func (p *Precommitted[E]) Add(id int64, effects E) {
	p.Txns = append(p.Txns, Txn[E]{ID: id, Effects: effects})
}

// IDs lists the pre-committed transactions, oldest first: what a sink's
// snapshot records.
func (p *Precommitted[E]) IDs() []int64 {
	ids := make([]int64, len(p.Txns))
	for i, t := range p.Txns {
		ids[i] = t.ID
	}
	return ids
}

// Stored marks transaction n's record durable.
func (p *Precommitted[E]) Stored(n int64) {
	for i := range p.Txns {
		if p.Txns[i].ID == n {
			p.Txns[i].Stored = true
		}
	}
}

// Failed queues transaction n's record, which the store failed, to be
// written again when timer fires, TxnRetryDelay from the first failure
// queued.
func (p *Precommitted[E]) Failed(ctx engine.Ctx, n, timer int64) {
	if len(p.retry) == 0 {
		ctx.After(TxnRetryDelay, timer)
	}
	p.retry = append(p.retry, n)
}

// Rewrite writes the queued records again with put, for the transactions
// still pre-committed: none can have committed, since no checkpoint
// listing one is acknowledged before its record is durable.
func (p *Precommitted[E]) Rewrite(ctx engine.Ctx, put func(ctx engine.Ctx, n int64, effects E)) {
	ids := p.retry
	p.retry = nil
	for _, n := range ids {
		for _, t := range p.Txns {
			if t.ID == n {
				put(ctx, n, t.Effects)
				ctx.Record(engine.Event{Kind: "sink_txn_rewrite", ID: n})
			}
		}
	}
}

// DurableThrough says whether every pre-committed transaction up to n has
// a durable record.
func (p *Precommitted[E]) DurableThrough(n int64) bool {
	for _, t := range p.Txns {
		if t.ID <= n && !t.Stored {
			return false
		}
	}
	return true
}

// CommitThrough hands every pre-committed transaction up to checkpoint n,
// oldest first, to commit (checkpoint n completed) and forgets them.
func (p *Precommitted[E]) CommitThrough(n int64, commit func(Txn[E])) {
	k := 0
	for k < len(p.Txns) && p.Txns[k].ID <= n {
		commit(p.Txns[k])
		k++
	}
	p.Txns = slices.Delete(p.Txns, 0, k) // zeroes the tail: no stale effects kept alive
}
