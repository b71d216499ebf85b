package trident

import (
	"ftbench/engine"
	"ftbench/systems/internal/storm"
)

// Data tuples are not tracked one by one: Trident's bolts emit them
// unanchored (BatchOutputCollectorImpl). A batch is tracked through the
// acker by its coordination tuples alone, as CoordinatedBolt and
// TridentBoltExecutor do: the coordinator's batch tuple is the root, each
// task that finished its part of a batch sends every task of the next
// stage a count tuple ("I sent you n tuples of this batch") anchored on the
// count tuples (or the batch tuple) it received, and acks those. A task has
// finished a batch when every upstream task reported and it received as
// many tuples as they reported, so the tree completes exactly when every
// task has processed the whole batch, whatever the order the network
// delivered data and counts in.

// kindCount is a count tuple (Body *countMsg). It is an ordinary tuple on
// its channel, behind the data it counts.
const kindCount = kindSuccess + 1

// countMsg is a count tuple: the batch, the number of tuples sent to the
// receiver, and its message id in the batch's tree.
type countMsg struct {
	tx    txAttempt
	n     int64
	edges []storm.Edge
}

// countBytes is a count tuple's payload: batch id, task id, count.
const countBytes = txBytes + 12

// tracked is one batch at one task (TridentBoltExecutor's TrackedBatch).
type tracked struct {
	tx       txAttempt
	reports  int   // upstream tasks that sent their count
	expected int64 // tuples they reported
	received int64
	coords   []*storm.Input // the count tuples (or batch tuple) to ack when finished
	sent     []int64        // tuples sent to each task of the next stage
}

// tracker keeps a task's batches in progress. Only the newest attempt of
// a txid is kept: tuples and counts of older attempts are dropped, as
// downstream tasks "clear out state for old attempts as soon as they see a
// higher attempt id" (MasterBatchCoordinator).
type tracker struct {
	upstream int // tasks that report to this one
	out      int // tasks of the next stage (0: none, persist)
	batches  map[int64]*tracked
}

func newTracker(upstream, out int) tracker {
	return tracker{upstream: upstream, out: out, batches: map[int64]*tracked{}}
}

// get returns the batch of tx, nil if tx is an older attempt than one seen.
func (k *tracker) get(tx txAttempt) *tracked {
	b := k.batches[tx.txid]
	if b == nil || b.tx.attempt < tx.attempt {
		b = &tracked{tx: tx, sent: make([]int64, k.out)}
		k.batches[tx.txid] = b
	}
	if b.tx.attempt != tx.attempt {
		return nil
	}
	return b
}

// count records an upstream task's count tuple.
func (k *tracker) count(c *countMsg) *tracked {
	b := k.get(c.tx)
	if b == nil {
		return nil
	}
	b.reports++
	b.expected += c.n
	b.coords = append(b.coords, &storm.Input{Edges: c.edges})
	return b
}

// finished reports whether b has all its tuples.
func (k *tracker) finished(b *tracked) bool {
	return b != nil && b.reports == k.upstream && b.received == b.expected
}

// finish ends b at this task: a count tuple to every task of next (the
// next stage's tasks, in order), anchored on every count tuple b received,
// then acks of those.
func (k *tracker) finish(ctx engine.Ctx, col *storm.Collector, b *tracked, next []engine.ProcID) {
	for i, to := range next {
		ctx.Send(to, engine.Msg{Kind: kindCount, Size: countBytes + storm.IDBytes(1),
			Body: &countMsg{tx: b.tx, n: b.sent[i], edges: col.Anchor(ctx, b.coords...)}})
	}
	for _, in := range b.coords {
		col.Ack(ctx, in)
	}
	delete(k.batches, b.tx.txid)
}

// withTx makes m a data tuple of batch tx.
func withTx(m engine.Msg, tx txAttempt) engine.Msg {
	m.Kind = storm.KindTuple
	m.Body = tx
	m.Size += txBytes
	return m
}

// untag strips a received data tuple back to the plan's record.
func untag(m engine.Msg) (engine.Msg, txAttempt) {
	tx := m.Body.(txAttempt)
	m.Body = nil
	m.Kind = 0
	m.Size -= txBytes
	return m, tx
}
