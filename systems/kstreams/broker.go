package kstreams

import (
	"slices"

	"ftbench/engine"
	"ftbench/systems/internal/stream"
)

// Events the broker and the threads record (events.jsonl; Summarize and
// torture's coverage read them).
const (
	evTxnOffsets   = "ks_txn_offsets"     // a thread's TxnOffsetCommit accepted (ID: thread)
	evTxnCommitted = "ks_txn_committed"   // a transaction committed (ID: thread, Value: commit latency)
	evTxnAborted   = "ks_txn_aborted"     // a transaction aborted (ID: thread, Note: why)
	evFenced       = "ks_fenced"          // a request fenced (ID: thread, Note: generation or epoch)
	evRebalance    = "ks_rebalance"       // a rebalance starts (ID: the generation it will form)
	evAssigned     = "ks_assigned"        // a rebalance's assignment (ID: generation, Value: tasks moved)
	evStaticRejoin = "ks_static_rejoin"   // a static member back within the session timeout
	evPaused       = "ks_rebalance_pause" // a task's processing pause for a rebalance (Value: ns)
	evRestored     = "restore"            // a task restored (ID: task, Value: ns, Bytes: records)
	evStableWait   = "ks_stable_wait"     // an offset fetch that waited for a pending transaction
	evCompacted    = "ks_compacted"       // a log-cleaner pass (Value: records removed)
	evBrokerUp     = "ks_broker_up"       // a new broker process after a master crash
	evDetected     = "failure_detected"   // a worker's failure reached the group coordinator (ID: worker)
	evDeploy       = "deploy"             // an assignment after a failure (ID: generation)
)

// Store-write tokens: what a completed write was for.
type pending struct {
	kind  uint8 // pProduce, pCommit, pOffsets
	key   string
	size  int64
	prod  *produce
	txn   *txn
	oc    *offsetCommit
	began engine.Time
}

const (
	pProduce uint8 = iota
	pCommit        // PREPARE_COMMIT in the transaction log
	pMarkers       // the COMMIT markers on the transaction's partitions
	pOffsets
)

// sessionChecks is how often per session timeout the group coordinator
// looks for expired sessions: a session expires up to a tenth of the
// timeout late.
const sessionChecks = 10

// Broker timers.
const (
	tTxnTimeouts int64 = iota + 1
	tRemove            // + thread << 8: remove a failed member
	tRetry             // + token << 8: write a failed store write again
	tSession           // the sessions' expiry check, sessionChecks times a session timeout
	tProbe             // + sequence << 8: a probing rebalance (KIP-441)
)

// broker is the Kafka cluster: it appends produced batches to partition
// logs (a durable store write each, acks=all), serves fetches up to the
// high watermark or, read_committed, the last stable offset, and runs the
// group coordinator (membership, generations, assignment) and the
// transaction coordinator (producer epochs, commit and abort markers). It
// runs on the master node, so a master crash is their failover.
type broker struct {
	p  *params
	c  *cluster
	wr map[int64]*pending // store writes in flight, by token

	fetches  map[int]*fetch   // parked long-poll fetches, by thread
	beat     []engine.Time    // by thread: its last heartbeat
	writing  map[int][2]int64 // by thread: the epoch and sequence of its latest batch being written
	stables  []offsetFetch    // parked require_stable offset fetches
	joining  map[int]bool     // members a rebalance waits for
	rebal    bool             // a rebalance in progress
	again    bool             // another rebalance once this one ends
	rebStart engine.Time
	// spare holds arrays of dropped batches until a produce
	// acknowledgement hands them back to a producer (memory reused, not
	// state: a new broker starts without).
	spare   [][]entry
	spareKV [][]stream.KV
}

// maxSpare bounds the arrays the broker keeps for producers.
const maxSpare = 256

// reuse takes the arrays of the batches log l dropped.
func (b *broker) reuse(l *plog) {
	keep(&b.spare, &l.dropped)
	keep(&b.spareKV, &l.droppedKV)
}

func keep[E any](pool, dropped *[][]E) {
	for _, a := range *dropped {
		if len(*pool) < maxSpare {
			*pool = append(*pool, a)
		}
	}
	clear(*dropped)
	*dropped = (*dropped)[:0]
}

// spares is the acknowledgement of produce pr, with as many arrays of each
// kind as pr's batches took, when the broker has them.
func (b *broker) spares(pr *produce) produceAck {
	var recs, kvs int
	for _, pb := range pr.batches {
		if pb.kvs != nil {
			kvs++
		} else {
			recs++
		}
	}
	return produceAck{seq: pr.seq, spare: handOut(&b.spare, recs), spareKV: handOut(&b.spareKV, kvs)}
}

func handOut[E any](pool *[][]E, n int) [][]E {
	n = min(n, len(*pool))
	if n == 0 {
		return nil
	}
	p := *pool
	out := slices.Clone(p[len(p)-n:])
	clear(p[len(p)-n:])
	*pool = p[:len(p)-n]
	return out
}

func newBroker(p *params, c *cluster) *broker {
	return &broker{p: p, c: c, wr: map[int64]*pending{}, fetches: map[int]*fetch{}, writing: map[int][2]int64{}, joining: map[int]bool{}}
}

func (b *broker) Init(ctx engine.Ctx) {
	ctx.After(engine.Second, tTxnTimeouts)
	b.beat = make([]engine.Time, b.p.nThreads())
	for th := range b.beat {
		b.beat[th] = ctx.Now() // a new coordinator gives every member a full session
	}
	ctx.After(b.p.sessionTimeout/sessionChecks, tSession)
	if b.c.gen == 0 && b.c.nextTok == 0 {
		return // the first broker: nothing is outstanding
	}
	// A new broker after a master crash: requests in flight died with the
	// old one; every client re-sends what it is waiting for.
	ctx.Record(engine.Event{Kind: evBrokerUp})
	// A PREPARE_COMMIT whose write died with the old broker was never
	// durable: the transaction is still ongoing, and its producer's
	// retried EndTxn writes it again.
	for _, t := range slices.Clone(b.c.txns) {
		switch t.state {
		case txnPreparing:
			t.state = txnOpen
		case txnPrepared:
			// Decided: the new coordinator completes it (its marker
			// writes are not modelled again).
			b.complete(ctx, t, txnCommitted, "")
		}
	}
	for _, id := range b.p.thread {
		ctx.Send(id, engine.Msg{Kind: kBrokerUp, Ctrl: true, Size: requestBytes})
	}
	if b.c.gen > 0 {
		b.startRebalance(ctx)
	}
}

func (b *broker) send(ctx engine.Ctx, th int, kind uint16, size int64, body any) {
	ctx.Send(b.p.thread[th], engine.Msg{Kind: kind, Ctrl: true, Size: int32(min(size, 1<<30)), Body: body})
}

func (b *broker) put(ctx engine.Ctx, key string, size int64, w *pending) {
	b.c.nextTok++
	w.began, w.key, w.size = ctx.Now(), key, size
	b.wr[b.c.nextTok] = w
	ctx.Store().Put(key, struct{}{}, size, b.c.nextTok)
}

func (b *broker) Handle(ctx engine.Ctx, from engine.ProcID, m engine.Msg) {
	switch m.Kind {
	case engine.KindStoreDone:
		b.written(ctx, m.Val)
	case engine.KindStoreFailed:
		// The leader could not reach its replicas: the produce is retried
		// (the producer's retries, within delivery.timeout.ms).
		ctx.After(retryBackoff, tRetry+m.Val<<8)
	case engine.KindFailure:
		b.failed(ctx, m.Body.(engine.Failure))
	case engine.KindWorkerUp:
	case kHeartbeat:
		b.heartbeat(ctx, int(m.Val))
	case kInitPid:
		b.initPid(ctx, int(m.Val))
	case kJoin:
		b.join(ctx, m.Body.(join))
	case kJoined:
		b.joined(ctx, m.Body.(join))
	case kProduce:
		b.produce(ctx, m.Body.(*produce))
	case kTxnOffsets:
		b.txnOffsets(ctx, m.Body.(txnOffsets))
	case kEndTxn:
		b.endTxn(ctx, m.Body.(endTxn))
	case kOffsetCommit:
		b.offsetCommit(ctx, m.Body.(*offsetCommit))
	case kOffsetFetch:
		b.offsetFetch(ctx, m.Body.(offsetFetch))
	case kFetch:
		f := m.Body.(*fetch)
		if !b.serve(ctx, f) {
			b.fetches[f.thread] = f
		}
	case kRestore:
		b.restore(ctx, m.Body.(restoreReq))
	}
}

func (b *broker) Timer(ctx engine.Ctx, id int64) {
	switch {
	case id == tTxnTimeouts:
		b.expireTxns(ctx)
		b.clean(ctx)
		ctx.After(engine.Second, tTxnTimeouts)
	case id&0xff == tRemove:
		b.remove(ctx, int(id>>8))
	case id == tSession:
		for th := range b.beat {
			b.sessionCheck(ctx, th)
		}
		ctx.After(b.p.sessionTimeout/sessionChecks, tSession)
	case id&0xff == tProbe:
		b.probe(ctx, id>>8)
	case id&0xff == tRetry:
		tok := id >> 8
		if w, ok := b.wr[tok]; ok {
			ctx.Store().Put(w.key, struct{}{}, w.size, tok)
		}
	}
}
