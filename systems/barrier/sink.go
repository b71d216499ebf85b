package barrier

import (
	"ftbench/engine"
	"ftbench/systems/internal/checkpoint"
	"ftbench/systems/internal/stream"
	"ftbench/workloads"
)

// sink makes effects visible. Plain: on arrival. Two-phase commit (Flink's
// TwoPhaseCommitSinkFunction): effects go into the open transaction; the
// snapshot for checkpoint n pre-commits it (a durable pending transaction
// in the external system, txnKey) and records it as pending in the
// snapshot; when n completes every pending transaction up to n commits.
//
// Committing is idempotent: a commit makes the transaction's effects
// visible and deletes its pending key in one step (one Handle, which no
// crash can split), as a transactional store's commit marker does. A
// restore commits the restored snapshot's pending transactions whose keys
// still exist, so a transaction is never committed twice, nor lost when the
// completion notice died with the sink.
type sink struct {
	twoPC bool
	stage *workloads.Stage
	open  txnEffects
	// txns are the pre-committed transactions; a checkpoint that lists
	// one is acknowledged only once its record is durable.
	txns checkpoint.Precommitted[txnEffects]
}

// txnEffects is a transaction's effects in arrival order, in pieces of
// txnPiece: a transaction holds a second of effects or more, and growing
// one slice to that size copies it over and over. Pieces come from the
// runtime (engine.CommitBuffer) and go back to it when their transaction
// commits (engine.CommitOwned): once committed and deleted from the store
// nothing of the sink's refers to them, and the simulator reuses them
// instead of allocating and zeroing a second of effects per checkpoint.
type txnEffects [][]engine.Commit

const txnPiece = 4096

func (e txnEffects) len() int {
	n := 0
	for _, p := range e {
		n += len(p)
	}
	return n
}

// commitBytes is the size of one effect in a transaction (id, key, value,
// time); txnHandleBytes is what a pre-commit writes durably. As with
// Flink's Kafka sink, a transaction's records stream to the external system
// as they arrive (the sink's per-record cost); the pre-commit only flushes
// and records the transaction handle, so the data volume is reported
// (sink_precommit_bytes) but not charged to the checkpoint store.
const (
	commitBytes    = 40
	txnHandleBytes = 64
)

func (s *sink) write(ctx engine.Ctx, m engine.Msg) {
	ctx.Work(s.stage.Cost(ctx.Cost(), m))
	c := stream.CommitOf(m)
	if !s.twoPC {
		ctx.Commit(c)
		return
	}
	n := len(s.open)
	if n == 0 || len(s.open[n-1]) == txnPiece {
		s.open = append(s.open, engine.CommitBuffer(ctx, txnPiece))
		n++
	}
	s.open[n-1] = append(s.open[n-1], c)
}

// precommit closes the open transaction as transaction n, writes it
// durably and returns every pending transaction id (for the snapshot) and
// the bytes written (0: nothing to write).
func (s *sink) precommit(ctx engine.Ctx, n int64) (ids []int64, bytes int64) {
	if !s.twoPC {
		return nil, 0
	}
	if len(s.open) > 0 && mutantEarlyCommit {
		// The deliberate bug: visible before checkpoint n completes.
		commitTxn(ctx, n, s.open, true)
		s.open = nil
	}
	if len(s.open) > 0 {
		bytes = int64(s.open.len()) * commitBytes
		putTxn(ctx, n, s.open)
		s.txns.Add(n, s.open)
		s.open = nil
	}
	return s.txns.IDs(), bytes
}

// putTxn writes transaction n's record: its handle, what a pre-commit
// makes durable.
func putTxn(ctx engine.Ctx, n int64, effects txnEffects) {
	ctx.Store().Put(txnKey(ctx.Self(), n), effects, txnHandleBytes, txnToken(n))
}

// commitThrough commits every pending transaction up to checkpoint n that
// is still pending in the external system (fenced).
func (s *sink) commitThrough(ctx engine.Ctx, n int64) {
	s.txns.CommitThrough(n, func(t checkpoint.Txn[txnEffects]) {
		if !fenced(ctx, t.ID) {
			commitTxn(ctx, t.ID, t.Effects, true)
		}
	})
}

// fenced reports whether transaction id of this sink is no longer pending
// in the external system, so that committing it must do nothing. It is
// Kafka's producer fencing as Flink's sink meets it: a newer attempt of
// this sink (deployed elsewhere while this one was cut off by a partition)
// restored a checkpoint and committed the transaction, deleting its
// record; a commit notice that reaches this old attempt late finds it gone
// (the store is engine.KeyChecker; a store that cannot tell has no
// zombies). The ftbench_mutant_unfenced_zombie build skips the check.
func fenced(ctx engine.Ctx, id int64) bool {
	kc, ok := ctx.Store().(engine.KeyChecker)
	if !ok || mutantUnfencedZombie || kc.Has(txnKey(ctx.Self(), id)) {
		return false
	}
	ctx.Count("barrier_sink_fenced_commits", 1)
	ctx.Record(engine.Event{Kind: "sink_commit_fenced", ID: id})
	return true
}

// commitTxn makes transaction id's effects visible and deletes its record.
// own says the effects are this incarnation's own pending transaction,
// which it hands over to the runtime for reuse; a restored record's pieces
// may still be a cut-off older attempt's (a zombie's pending transaction),
// so a restore only reads them.
func commitTxn(ctx engine.Ctx, id int64, effects txnEffects, own bool) {
	for _, p := range effects {
		if own && !mutantDoubleCommit { // the mutant's store keeps the record, and with it the pieces
			engine.CommitOwned(ctx, p)
		} else {
			engine.CommitAll(ctx, p)
		}
	}
	if !mutantDoubleCommit { // the mutant keeps the record, so a restore commits it again
		ctx.Store().Delete(txnKey(ctx.Self(), id))
	}
	ctx.Count("barrier_sink_commits", 1)
	// sink_precommit ... sink_commit is the window of a pending
	// transaction: a crash in it must neither lose nor repeat it.
	ctx.Record(engine.Event{Kind: "sink_commit", ID: id})
}

// recover commits the restored checkpoint's pending transactions that no
// incarnation committed yet (their keys are still there).
func (s *sink) recover(ctx engine.Ctx, ids []int64) {
	for _, id := range ids {
		v, ok := ctx.Store().Get(txnKey(ctx.Self(), id))
		if !ok {
			continue // committed before the failure
		}
		commitTxn(ctx, id, v.(txnEffects), false)
		ctx.Count("barrier_sink_recovered_commits", 1)
	}
}
