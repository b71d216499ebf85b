package barrier

import (
	"ftbench/engine"
	"ftbench/systems/internal/checkpoint"
	"ftbench/systems/internal/stream"
	"ftbench/workloads"
)

// sink makes effects visible. Plain: on arrival. Two-phase commit (Flink's
// TwoPhaseCommitSinkFunction over a Kafka-like transactional store):
// effects go into the open transaction; the snapshot for checkpoint n
// pre-commits it (a durable pending transaction in the external system,
// txnKey) and records it as pending in the snapshot; when n completes every
// pending transaction up to n commits.
//
// Committing is idempotent: a commit makes the transaction's effects
// visible and deletes its pending key in one step (one Handle, which no
// crash can split), as a transactional store's commit marker does. A
// restore commits the restored snapshot's pending transactions whose keys
// still exist, so a transaction is never committed twice, nor lost when the
// completion notice died with the sink.
//
// Fencing is Kafka's (KIP-98): the sink's transactional id (one per sink
// subtask, as Flink derives it from a prefix and the subtask index) has a
// producer epoch, kept by the broker (epochKey); every transaction records
// the epoch it was opened with, and a commit carrying an older epoch than
// the broker's is refused. A deployed sink first re-commits the restored
// checkpoint's pre-committed transactions with their stored epoch (Flink's
// recoverAndCommit, resumeTransaction) and only then bumps the epoch
// (initTransactions), which fences every older attempt (a zombie).
//
// The broker also aborts a transaction open longer than its timeout: the
// producer's transaction.timeout.ms (--txn-timeout, Flink's 1 h), capped by
// the broker's transaction.max.timeout.ms (--broker-txn-timeout, Kafka's
// 15 min). A commit that reaches an aborted transaction loses its effects:
// Flink's documented pitfall, reported as the loss it is.
type sink struct {
	twoPC bool
	stage *workloads.Stage
	// timeout is how long the broker keeps a transaction open (0: forever).
	timeout engine.Time
	open    txnEffects
	opened  engine.Time // when the open transaction's first effect arrived
	// epoch is this attempt's producer epoch (0 until initTransactions).
	epoch int64
	// txns are the pre-committed transactions; a checkpoint that lists
	// one is acknowledged only once its record is durable.
	txns checkpoint.Precommitted[txnRecord]
}

// txnRecord is a pre-committed transaction as the external system holds
// it: the producer epoch and the time it was opened with (what the broker
// fences and times out by), and its effects.
type txnRecord struct {
	Epoch   int64
	Opened  engine.Time
	Effects txnEffects
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
	epochBytes     = 16
)

// write is the sink's input: charged at costs, its operator's model.
func (s *sink) write(ctx engine.Ctx, m engine.Msg, costs *engine.CostModel) {
	ctx.Work(s.stage.Cost(costs, m))
	c := stream.CommitOf(m)
	if !s.twoPC {
		ctx.Commit(c)
		return
	}
	n := len(s.open)
	if n == 0 {
		s.opened = ctx.Now() // Kafka starts the transaction's timer here
	}
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
		r := txnRecord{Epoch: s.epoch, Opened: s.opened, Effects: s.open}
		putTxn(ctx, n, r)
		s.txns.Add(n, r)
		s.open = nil
	}
	return s.txns.IDs(), bytes
}

// putTxn writes transaction n's record: its handle, what a pre-commit
// makes durable.
func putTxn(ctx engine.Ctx, n int64, r txnRecord) {
	ctx.Store().Put(txnKey(ctx.Self(), n), r, txnHandleBytes, txnToken(n))
}

// commitThrough commits every pending transaction up to checkpoint n
// that the broker still holds open for this attempt's epoch.
func (s *sink) commitThrough(ctx engine.Ctx, n int64) {
	s.txns.CommitThrough(n, func(t checkpoint.Txn[txnRecord]) {
		if s.committable(ctx, t.ID, t.Effects) {
			commitTxn(ctx, t.ID, t.Effects.Effects, true)
		}
	})
}

// committable is the broker's answer to a commit of transaction id, opened
// with r's epoch: refused if a newer epoch fenced it, or if the
// transaction timed out (the broker aborted it: its effects are lost).
func (s *sink) committable(ctx engine.Ctx, id int64, r txnRecord) bool {
	if s.fenced(ctx, id, r.Epoch) {
		return false
	}
	if s.timeout > 0 && ctx.Now()-r.Opened > s.timeout {
		// Kafka's transaction coordinator aborted it; the records are
		// gone and the commit fails. Flink's sink logs this and carries
		// on, so the effects are lost.
		ctx.Store().Delete(txnKey(ctx.Self(), id))
		ctx.Count("barrier_sink_txns_timed_out", 1)
		ctx.Record(engine.Event{Kind: "sink_txn_timed_out", ID: id, Value: int64(ctx.Now() - r.Opened)})
		return false
	}
	return true
}

// fenced reports whether a commit of transaction id, opened with epoch,
// is refused. It is Kafka's producer fencing as Flink's sink meets it: a
// newer attempt of this sink (deployed elsewhere while this one was cut
// off by a partition) called initTransactions, bumping the epoch past the
// transaction's (the broker's epoch, or this very attempt's own: a commit
// after its own bump); or it restored a checkpoint and committed the
// transaction, deleting its record. A commit notice that reaches the old
// attempt late is then refused (the store is engine.KeyChecker; a store
// that cannot tell has no zombies). The ftbench_mutant_unfenced_zombie
// build skips the check.
func (s *sink) fenced(ctx engine.Ctx, id, epoch int64) bool {
	kc, ok := ctx.Store().(engine.KeyChecker)
	if !ok || mutantUnfencedZombie {
		return false
	}
	var why string
	switch {
	case s.epoch > epoch || kc.Has(epochKey(ctx.Self(), epoch+1)):
		why = "epoch" // Kafka's ProducerFencedException
	case !kc.Has(txnKey(ctx.Self(), id)):
		why = "committed" // the record is gone: a newer attempt committed it
	default:
		return false
	}
	ctx.Count("barrier_sink_fenced_commits", 1)
	ctx.Record(engine.Event{Kind: "sink_commit_fenced", ID: id, Value: epoch, Note: why})
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
	ctx.Record(engine.Event{Kind: checkpoint.EventSinkCommit, ID: id})
}

// recover is a deployed sink's start (Flink's initializeState): it
// re-commits the restored checkpoint's pending transactions that no
// incarnation committed yet (their records are still there) with their
// stored epoch, then opens its producer, bumping the epoch. The order
// matters: bumped first, the broker would fence the re-commits and the
// pre-committed data would be lost (the ftbench_mutant_epoch_first build).
func (s *sink) recover(ctx engine.Ctx, ids []int64) {
	if !s.twoPC {
		return
	}
	if mutantEpochFirst {
		s.initTransactions(ctx)
	}
	for _, id := range ids {
		v, ok := ctx.Store().Get(txnKey(ctx.Self(), id))
		if !ok {
			continue // committed before the failure
		}
		r := v.(txnRecord)
		if !s.committable(ctx, id, r) {
			continue
		}
		commitTxn(ctx, id, r.Effects, false)
		ctx.Count("barrier_sink_recovered_commits", 1)
	}
	if !mutantEpochFirst {
		s.initTransactions(ctx)
	}
}

// initTransactions bumps the broker's producer epoch of this sink's
// transactional id and takes the new one: from now on every commit of an
// older epoch is refused. The broker's epoch is the highest epochKey
// present; the bump is a write (a round trip to the broker, durable a
// store latency later; this attempt fences its own older transactions at
// once through s.epoch).
func (s *sink) initTransactions(ctx engine.Ctx) {
	e := int64(1)
	if kc, ok := ctx.Store().(engine.KeyChecker); ok {
		for kc.Has(epochKey(ctx.Self(), e)) {
			e++
		}
	}
	s.epoch = max(e, s.epoch+1)
	ctx.Store().Put(epochKey(ctx.Self(), s.epoch), s.epoch, epochBytes, epochToken)
	ctx.Record(engine.Event{Kind: "sink_epoch", Value: s.epoch})
}
