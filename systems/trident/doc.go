// Package trident is Storm Trident's exactly-once processing: transactional
// batches with increasing transaction ids, tracked through Storm's acker
// trees, whose state updates are committed strictly in txid order to an
// external store under the txid check. It runs on the Storm runtime that
// systems/stormack uses (systems/internal/storm: message ids, the
// anchoring collector, ackers; engine.Deployment.LocalTransfer between
// executors of a worker). docs/trident.md gives the sources (Storm's
// "Trident tutorial", "Trident state", "Trident spouts", "Transactional
// topologies"; MasterBatchCoordinator, TridentBoltExecutor,
// TransactionalMap, OpaqueMap) and what is simplified.
//
// Processes: the master batch coordinator ("mbc/0", a spout on worker 0),
// one emitter per source partition, a bolt per plan stage before the sink,
// persistentAggregate (the plan's keyed stage fused with the sink; grep's
// plain sink puts records by key), and the ackers.
//
// Protocol, one batch (txid n, attempt a):
//
//  1. The coordinator may start n when fewer than max-batches-pending
//     batches are active and batch-emit-interval has passed since it last
//     started one. It writes its state (the lowest uncommitted txid and
//     the attempt numbers) to the store, waits until it is durable, and
//     sends the batch tuple (n, a) to every emitter, as the root of a new
//     acker tree.
//  2. An emitter decides its batch: transactional, the span stored for n,
//     or a new span [end of n-1's, what the partition had appended when
//     the coordinator started the attempt), stored before any record is
//     emitted; opaque, the same cut but stored only at commit, so a replay
//     may differ; non-transactional, failed-back tuples then new records.
//     It emits the records unanchored, then sends every task of the first
//     stage a count tuple (how many records it sent it) anchored on the
//     batch tuple, and acks the batch tuple.
//  3. Each task processes the records of (n, a) it receives; when every
//     upstream task has reported and it has received as many records as
//     reported, it sends its own counts to the next stage, anchored on the
//     count tuples it received, and acks those. persistentAggregate buffers
//     the records; it does not touch state yet.
//  4. The tree completes when every task has finished the batch: the
//     coordinator marks n processed. When n is the lowest uncommitted txid
//     (never before: commits are ordered), it sends the commit tuple (n, a)
//     to the committers — persistentAggregate's partitions and, for an
//     opaque spout, the emitters — as a new tree.
//  5. A partition of persistentAggregate reads its keys (one multi-get, a
//     store round trip) and writes them (one multi-put); when the write is
//     durable the store applies it under the state's rule and the outputs
//     are committed: transactional state skips a key whose stored txid is
//     n (or later: a zombie's late write is fenced), opaque state applies
//     n again to the stored previous value, non-transactional applies
//     every time. Then it acks the commit tuple. An opaque emitter stores
//     n's span and acks.
//  6. The commit tree completes: the coordinator tells the emitters ($success)
//     and stores n+1 as the lowest uncommitted txid.
//
// Failures. A tree that fails or does not complete within ack-timeout
// fails its batch and every later active one; they are started again with
// new attempt numbers, and every task drops what it holds of older
// attempts. A worker crash loses the tuples and trees it held, so its
// batch times out and replays with the same txid; a crash of worker 0
// restarts the coordinator from its stored txid. A failed state write
// fails the commit tree (the batch replays); the coordinator retries its
// own writes. The harness drains ack-timeout longer (DrainExtra).
//
// Claim: Trident's spout × state matrix (system.go, Claim). A plan with a
// keyed stage that does not feed the sink (bank's debit) runs it in a
// bolt's memory and claims nothing.
package trident
