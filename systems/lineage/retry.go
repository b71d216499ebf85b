package lineage

import "ftbench/engine"

// storeRetryDelay is how long a process waits before writing again what the
// store failed (engine.KindStoreFailed): HDFS and object-store clients retry
// a failed write after a short back-off.
const storeRetryDelay = 100 * engine.Millisecond

// timerStoreRetry is the retry timer's id in the driver and the executors
// (negative: the executors' burn timers use generations from 0 up).
const timerStoreRetry int64 = -1

// retryingWriter keeps every durable write of one process until the store
// acknowledges it, and writes again, after storeRetryDelay, what the store
// failed. It models the retries of Spark's checkpoint writer and of the
// HDFS client under a checkpoint-storage outage: a write is late, never
// lost, so the driver's batch log and commit records and the executors'
// state checkpoints all become durable once the store is back. (Spark gives
// up on a task after spark.task.maxFailures attempts and fails the job;
// that limit is not modelled.)
//
// Invariant: every token in unacked has a write in flight or queued for
// retry, never both.
type retryingWriter struct {
	unacked map[int64]storeWrite
	retry   []int64 // tokens to write again when the retry timer fires
	armed   bool
}

type storeWrite struct {
	key  string
	val  any
	size int64
}

// put writes val durably under token.
func (w *retryingWriter) put(ctx engine.Ctx, key string, val any, size, token int64) {
	if w.unacked == nil {
		w.unacked = map[int64]storeWrite{}
	}
	w.unacked[token] = storeWrite{key, val, size}
	ctx.Store().Put(key, val, size, token)
}

// done forgets an acknowledged write.
func (w *retryingWriter) done(token int64) { delete(w.unacked, token) }

// failed queues a failed write for the retry timer.
func (w *retryingWriter) failed(ctx engine.Ctx, token int64) {
	if _, ok := w.unacked[token]; !ok {
		return
	}
	w.retry = append(w.retry, token)
	if !w.armed {
		w.armed = true
		ctx.After(storeRetryDelay, timerStoreRetry)
	}
}

// fire writes the queued writes again.
func (w *retryingWriter) fire(ctx engine.Ctx) {
	w.armed = false
	tokens := w.retry
	w.retry = nil
	for _, t := range tokens {
		if sw, ok := w.unacked[t]; ok {
			ctx.Record(engine.Event{Kind: "store_write_retry", ID: t, Note: sw.key})
			ctx.Store().Put(sw.key, sw.val, sw.size, t)
		}
	}
}
