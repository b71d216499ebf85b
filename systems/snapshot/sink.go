package snapshot

import (
	"fmt"

	"ftbench/engine"
	"ftbench/systems/internal/checkpoint"
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

type sinkTxns struct {
	self    engine.ProcID
	pending []engine.Commit // the open transaction
	// txns are the pre-committed transactions; the snapshots that list one
	// wait for its record to be durable.
	txns checkpoint.Precommitted[[]engine.Commit]
	// mutant holds the commits and record deletions in flight of the
	// ftbench_mutant_sink_delete_before_commit build (empty in every other).
	mutant mutantCommits
}

// timerTxnRetry is the sink task's only timer (timerMutantCommit and
// timerMutantDelete are the mutant's).
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
		s.put(ctx, n, e)
		s.txns.Add(n, e)
		// sink_precommit ... sink_commit: a pending transaction (torture's
		// coverage of crashes during a 2PC commit).
		ctx.Record(engine.Event{Kind: "sink_precommit", ID: n, Bytes: int64(len(e)) * effectBytes})
	}
	return s.txns.IDs()
}

// put writes transaction n's record: its effects, not yet visible.
func (s *sinkTxns) put(ctx engine.Ctx, n int64, e []engine.Commit) {
	ctx.Store().Put(txnKey(s.self, n), e, int64(len(e))*effectBytes, txnToken+n)
}

// commit makes every transaction up to checkpoint n visible, if it is still
// pending in the external system: a newer attempt of this sink, deployed
// while this one was cut off by a partition, may have restored and
// committed it (Kafka fences the older producer; engine.KeyChecker).
func (s *sinkTxns) commit(ctx engine.Ctx, n int64) {
	kc, check := ctx.Store().(engine.KeyChecker)
	s.txns.CommitThrough(n, func(t checkpoint.Txn[[]engine.Commit]) {
		if check && !kc.Has(txnKey(s.self, t.ID)) {
			ctx.Count("snapshot_sink_fenced_commits", 1)
			ctx.Record(engine.Event{Kind: "sink_commit_fenced", ID: t.ID})
			return
		}
		if mutantSinkDeleteBeforeCommit {
			s.mutant.send(ctx, t)
			return
		}
		engine.CommitAll(ctx, t.Effects)
		ctx.Store().Delete(txnKey(s.self, t.ID))
		ctx.Record(engine.Event{Kind: checkpoint.EventSinkCommit, ID: t.ID})
	})
}

// restore commits the transactions of a restored checkpoint that are still
// pre-committed; their effects were never visible.
func (s *sinkTxns) restore(ctx engine.Ctx, ids []int64) {
	s.pending, s.txns = nil, checkpoint.Precommitted[[]engine.Commit]{}
	for _, id := range ids {
		v, ok := ctx.Store().Get(txnKey(s.self, id))
		if !ok {
			ctx.Count(cntTxnsDone, 1)
			continue // committed before the failure
		}
		ctx.Count(cntTxnsRecommitted, 1)
		engine.CommitAll(ctx, v.([]engine.Commit))
		ctx.Store().Delete(txnKey(s.self, id))
		ctx.Record(engine.Event{Kind: checkpoint.EventSinkCommit, ID: id})
	}
}

// The ftbench_mutant_sink_delete_before_commit build's sink
// (mutant_sink_delete_before_commit_off.go): a commit and the deletion of
// its transaction's record are sent to the output system together, and
// land after different delays.
const (
	// mutantCommitLatency: a commit lands (its effects become visible)
	// this long after it is sent: the output system's commit round trip,
	// its commit markers replicated.
	mutantCommitLatency = 1500 * engine.Microsecond
	timerMutantCommit   = 2
	timerMutantDelete   = 3
)

// mutantCommits are the mutant sink's commits and record deletions in
// flight, oldest first (each kind has one delay, so its timers fire in the
// order they were set).
type mutantCommits struct {
	commits [][]engine.Commit
	deletes []int64
}

// send starts committing transaction t: the deletion of its record lands a
// network round trip from now, the commit mutantCommitLatency from now.
func (m *mutantCommits) send(ctx engine.Ctx, t checkpoint.Txn[[]engine.Commit]) {
	ctx.Record(engine.Event{Kind: checkpoint.EventSinkCommit, ID: t.ID})
	m.deletes = append(m.deletes, t.ID)
	ctx.After(2*ctx.Cost().NetLatency, timerMutantDelete)
	m.commits = append(m.commits, t.Effects)
	ctx.After(mutantCommitLatency, timerMutantCommit)
}

// timer lands the oldest deletion or commit in flight.
func (m *mutantCommits) timer(ctx engine.Ctx, sink engine.ProcID, id int64) {
	switch {
	case id == timerMutantDelete && len(m.deletes) > 0:
		ctx.Store().Delete(txnKey(sink, m.deletes[0]))
		m.deletes = m.deletes[1:]
	case id == timerMutantCommit && len(m.commits) > 0:
		engine.CommitAll(ctx, m.commits[0])
		m.commits[0] = nil
		m.commits = m.commits[1:]
	}
}
