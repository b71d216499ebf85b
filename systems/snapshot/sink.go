package snapshot

import (
	"fmt"

	"ftbench/engine"
)

// The sink's two-phase commit (Flink's TwoPhaseCommitSinkFunction): effects
// processed between two cuts form a transaction. At its cut for checkpoint
// n the sink pre-commits the open transaction — writes it to the external
// system under txnKey, not yet visible — and lists every pre-committed,
// uncommitted transaction in its snapshot. When checkpoint n completes, it
// commits every transaction up to n. Records the sink processes after its
// cut (including its recorded channel state) go into the next transaction,
// so a rollback to n replays exactly what n's transactions do not hold.
//
// Committing must be idempotent across a crash, as Kafka's transactional
// commit is: a transaction's commit makes its effects visible and deletes
// its pre-committed record in one step (one Handle, which nothing can
// interrupt). On restore from n the sink commits the transactions n lists
// whose record still exists — completed checkpoints' transactions it had
// not committed yet — and no others.

// txnToken tags the store writes of transactions, so that their completion
// is not taken for a checkpoint's.
const txnToken = 1 << 62

const effectBytes = 32 // effect id, key, value

type txn struct {
	id      int64
	effects []engine.Commit
	stored  bool // its record is durable
}

type sinkTxns struct {
	self    engine.ProcID
	pending []engine.Commit // the open transaction
	open    []txn           // pre-committed, ascending id
	retry   []int64         // transactions whose record the store failed, to write again
}

// txnRetryDelay is how long a sink waits before writing again a transaction
// record the store failed: the store client's retry back-off.
const txnRetryDelay = 100 * engine.Millisecond

// timerTxnRetry is the sink task's only timer.
const timerTxnRetry = 1

func txnKey(sink engine.ProcID, n int64) string { return fmt.Sprintf("snapshot/txn/%d/%d", sink, n) }

// precommit closes the open transaction as checkpoint n's and returns the
// ids of every pre-committed transaction (the sink's state for n).
func (s *sinkTxns) precommit(ctx engine.Ctx, n int64) []int64 {
	if len(s.pending) > 0 {
		e := s.pending
		// e is handed to the store: never modified again. The next
		// transaction is about as large; sizing it so saves re-copying a
		// slice of hundreds of thousands of effects as it grows.
		s.pending = make([]engine.Commit, 0, len(e)+len(e)/8)
		ctx.Store().Put(txnKey(s.self, n), e, int64(len(e))*effectBytes, txnToken+n)
		s.open = append(s.open, txn{id: n, effects: e})
		// sink_precommit ... sink_commit: a pending transaction (torture's
		// coverage of crashes during a 2PC commit).
		ctx.Record(engine.Event{Kind: "sink_precommit", ID: n, Bytes: int64(len(e)) * effectBytes})
	}
	ids := make([]int64, len(s.open))
	for i, t := range s.open {
		ids[i] = t.id
	}
	return ids
}

// stored marks transaction n's record durable.
func (s *sinkTxns) stored(n int64) {
	for i := range s.open {
		if s.open[i].id == n {
			s.open[i].stored = true
		}
	}
}

// failed queues transaction n's record, which the store failed, to be
// written again after txnRetryDelay; the snapshots that list it wait for it
// (durableThrough).
func (s *sinkTxns) failed(ctx engine.Ctx, n int64) {
	if len(s.retry) == 0 {
		ctx.After(txnRetryDelay, timerTxnRetry)
	}
	s.retry = append(s.retry, n)
}

// rewrite writes the queued transaction records again.
func (s *sinkTxns) rewrite(ctx engine.Ctx) {
	ids := s.retry
	s.retry = nil
	for _, n := range ids {
		for _, t := range s.open {
			if t.id == n {
				ctx.Store().Put(txnKey(s.self, n), t.effects, int64(len(t.effects))*effectBytes, txnToken+n)
				ctx.Record(engine.Event{Kind: "sink_txn_rewrite", ID: n})
			}
		}
	}
}

// durableThrough says whether every pre-committed transaction up to n has a
// durable record.
func (s *sinkTxns) durableThrough(n int64) bool {
	for _, t := range s.open {
		if t.id <= n && !t.stored {
			return false
		}
	}
	return true
}

// commit makes every transaction up to checkpoint n visible, if it is still
// pending in the external system: a newer attempt of this sink, deployed
// while this one was cut off by a partition, may have restored and
// committed it (Kafka fences the older producer; engine.KeyChecker).
func (s *sinkTxns) commit(ctx engine.Ctx, n int64) {
	kc, check := ctx.Store().(engine.KeyChecker)
	for len(s.open) > 0 && s.open[0].id <= n {
		t := s.open[0]
		s.open = s.open[1:]
		if check && !kc.Has(txnKey(s.self, t.id)) {
			ctx.Count("snapshot_sink_fenced_commits", 1)
			ctx.Record(engine.Event{Kind: "sink_commit_fenced", ID: t.id})
			continue
		}
		engine.CommitAll(ctx, t.effects)
		ctx.Store().Delete(txnKey(s.self, t.id))
		ctx.Record(engine.Event{Kind: "sink_commit", ID: t.id})
	}
}

// restore commits the transactions of a restored checkpoint that are still
// pre-committed; their effects were never visible.
func (s *sinkTxns) restore(ctx engine.Ctx, ids []int64) {
	s.pending, s.open, s.retry = nil, nil, nil
	for _, id := range ids {
		v, ok := ctx.Store().Get(txnKey(s.self, id))
		if !ok {
			ctx.Count(cntTxnsDone, 1)
			continue // committed before the failure
		}
		ctx.Count(cntTxnsRecommitted, 1)
		engine.CommitAll(ctx, v.([]engine.Commit))
		ctx.Store().Delete(txnKey(s.self, id))
		ctx.Record(engine.Event{Kind: "sink_commit", ID: id})
	}
}
