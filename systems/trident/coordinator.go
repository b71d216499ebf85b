package trident

import (
	"slices"

	"ftbench/engine"
	"ftbench/systems/internal/storm"
)

// attemptStatus is MasterBatchCoordinator's AttemptStatus.
type attemptStatus uint8

const (
	processing attemptStatus = iota // the batch's tuples are being processed
	processed                       // the batch tree completed; waits for its turn to commit
	committing                      // the commit tuple is out
)

// active is one transaction the coordinator has in flight (Storm's
// TransactionStatus), with the tree it waits on and that tree's deadline.
type active struct {
	tx       txAttempt
	status   attemptStatus
	root     uint64      // the batch tree's root, then the commit tree's
	deadline engine.Time // the tree times out then (topology.message.timeout.secs)
	startAt  engine.Time // when the attempt started
	commitAt engine.Time // when the commit tuple went out
}

// coordState is what the coordinator keeps in the durable store (Storm's
// TransactionalState in ZooKeeper: CURRENT_TX and CURRENT_ATTEMPTS).
type coordState struct {
	curr     int64
	attempts map[int64]int32
}

// coordinator is Trident's MasterBatchCoordinator: a spout (here on
// worker 0) that starts batches with increasing txids, at most one per
// batch-emit-interval (WindowedTimeThrottler) and at most
// max-batches-pending at once (topology.max.spout.pending, 1 when unset),
// tracks each batch and then its commit through an acker tree, and commits
// strictly in txid order: only the batch of currTransaction, the lowest
// uncommitted txid, is ever sent the commit tuple.
//
// Invariants: curr only grows, by one per committed batch, and is durable
// before the next batch's commit tuple can go out (every store write
// blocks the coordinator, as ZooKeeper's synchronous setData blocks the
// spout's thread); an attempt number is durable before the attempt is
// emitted, so a restarted coordinator never reuses one; a failed attempt
// fails every later active batch with it (activeTx.tailMap(txid).clear()).
type coordinator struct {
	t      *topo
	st     coordState
	active map[int64]*active
	roots  map[uint64]int64 // tree root -> txid
	// firstStart is when each active txid's first attempt started (batch
	// latency), kept across its attempts.
	firstStart map[int64]engine.Time

	writing  bool        // a state write is in progress (the spout blocks)
	afterPut func()      // what the write unblocks
	waiting  []func()    // what later writes, queued behind it, unblock
	lastEmit engine.Time // the throttler's last event
	emitted  bool        // lastEmit is set
	syncAt   engine.Time // a sync timer is set for then (0: none)
	// fails counts failed attempts: a start whose state write was in
	// flight when a batch failed is dropped (its attempt number is burnt),
	// so batches always go out from currTransaction up, as Storm's
	// synchronous sync() emits them.
	fails     int
	nextToken int64
}

const (
	tickSync = iota + 1
	tickTimeout
	tickRetryWrite
)

// coordKey is the coordinator's store key.
const coordKey = "trident/coordinator"

// writeRetry is how long the coordinator waits to write its state again
// after the store failed the write (ZooKeeper's client retries).
const writeRetry = 100 * engine.Millisecond

func newCoordinator(t *topo) *coordinator {
	return &coordinator{
		t: t, st: coordState{curr: 1, attempts: map[int64]int32{}},
		active: map[int64]*active{}, roots: map[uint64]int64{}, firstStart: map[int64]engine.Time{},
	}
}

// Init reads the stored txid and attempts (getStoredCurrTransaction,
// getStoredCurrAttempts): a restarted coordinator resumes at the lowest
// uncommitted txid and gives each replayed batch a fresh attempt number.
func (c *coordinator) Init(ctx engine.Ctx) {
	if v, ok := ctx.Store().Get(coordKey); ok {
		s := v.(coordState)
		c.st = coordState{curr: s.curr, attempts: map[int64]int32{}}
		for tx, a := range s.attempts {
			if tx >= s.curr && tx < s.curr+int64(c.t.maxPending) {
				c.st.attempts[tx] = a
			}
		}
		ctx.Record(engine.Event{Kind: evCoordResume, ID: c.st.curr})
		ctx.Count(cCoordRestarts, 1)
	}
	c.sync(ctx)
}

func (c *coordinator) Timer(ctx engine.Ctx, id int64) {
	switch id {
	case tickSync:
		c.syncAt = 0
		c.sync(ctx)
	case tickTimeout:
		c.expire(ctx)
	case tickRetryWrite:
		c.write(ctx)
	}
}

// put writes the coordinator's state and blocks until it is durable; then
// runs next. A put while a write is in progress waits for it, and the
// puts that waited share one write of the state as it then is.
func (c *coordinator) put(ctx engine.Ctx, next func()) {
	if c.writing {
		c.waiting = append(c.waiting, next)
		return
	}
	c.writing, c.afterPut = true, next
	c.write(ctx)
}

// write issues the store write of the current state.
func (c *coordinator) write(ctx engine.Ctx) {
	s := coordState{curr: c.st.curr, attempts: make(map[int64]int32, len(c.st.attempts))}
	for tx, a := range c.st.attempts {
		s.attempts[tx] = a
	}
	c.nextToken++
	ctx.Store().Put(coordKey, s, int64(8+12*len(s.attempts)), c.nextToken)
	ctx.Count(cStoreRoundTrips, 1)
}

func (c *coordinator) Handle(ctx engine.Ctx, _ engine.ProcID, m engine.Msg) {
	switch m.Kind {
	case engine.KindStoreDone:
		if m.Val != c.nextToken {
			return
		}
		c.writing = false
		next := c.afterPut
		c.afterPut = nil
		next()
		if ws := c.waiting; len(ws) > 0 {
			c.waiting = nil
			c.put(ctx, func() {
				for _, w := range ws {
					w()
				}
			})
		}
		c.sync(ctx)
	case engine.KindStoreFailed:
		if m.Val == c.nextToken {
			ctx.After(writeRetry, tickRetryWrite)
		}
	case storm.KindDone:
		ctx.Work(ctx.Cost().StateCPU)
		c.ack(ctx, m.Key)
	case storm.KindFailed:
		ctx.Work(ctx.Cost().StateCPU)
		if txid, ok := c.roots[m.Key]; ok && c.active[txid] != nil && c.active[txid].root == m.Key {
			c.fail(ctx, txid)
		}
	}
}

// ack is MasterBatchCoordinator.ack: a batch tree completing makes the
// batch PROCESSED; a commit tree completing commits the transaction:
// currTransaction moves to the next txid, durably, and the emitters are
// told ($success).
func (c *coordinator) ack(ctx engine.Ctx, root uint64) {
	txid, ok := c.roots[root]
	if !ok {
		return
	}
	delete(c.roots, root)
	a := c.active[txid]
	if a == nil || a.root != root {
		return
	}
	switch a.status {
	case processing:
		a.status = processed
	case committing:
		delete(c.active, txid)
		delete(c.st.attempts, txid)
		ctx.Count(cBatchesCommitted, 1)
		ctx.Count(cCommitLatency, int64(ctx.Now()-a.commitAt))
		ctx.Count(cBatchLatency, int64(ctx.Now()-c.firstStart[txid]))
		delete(c.firstStart, txid)
		for _, e := range c.t.emitters {
			ctx.Send(e, engine.Msg{Kind: kindSuccess, Ctrl: true, Key: uint64(txid), Size: txBytes})
		}
		c.st.curr = txid + 1
		c.put(ctx, func() {
			ctx.Record(engine.Event{Kind: evBatchCommitted, ID: txid, Value: int64(a.tx.attempt)})
		})
		return
	}
	c.sync(ctx)
}

// fail is MasterBatchCoordinator.fail: the attempt and every later active
// batch are dropped, to be emitted again with new attempt numbers.
func (c *coordinator) fail(ctx engine.Ctx, txid int64) {
	for _, tx := range c.sortedActive() {
		if tx >= txid {
			a := c.active[tx]
			delete(c.roots, a.root)
			delete(c.active, tx)
			ctx.Count(cBatchesFailed, 1)
			c.fails++
			ctx.Record(engine.Event{Kind: evBatchFailed, ID: tx, Value: int64(a.tx.attempt)})
		}
	}
	c.sync(ctx)
}

// expire fails the trees whose deadline passed (the spout-side message
// timeout; an acker that crashed forgot them).
func (c *coordinator) expire(ctx engine.Ctx) {
	for _, tx := range c.sortedActive() {
		if a := c.active[tx]; a != nil && a.deadline <= ctx.Now() {
			ctx.Count(cBatchTimeouts, 1)
			c.fail(ctx, tx)
			return
		}
	}
}

func (c *coordinator) sortedActive() []int64 {
	txs := make([]int64, 0, len(c.active))
	for tx := range c.active {
		txs = append(txs, tx)
	}
	slices.Sort(txs)
	return txs
}

// sync is MasterBatchCoordinator.sync: send the commit tuple of
// currTransaction once its batch is processed (never of a later one: the
// commit phase is ordered by txid), then start batches while fewer than
// max-batches-pending are active and the throttler allows.
func (c *coordinator) sync(ctx engine.Ctx) {
	if c.writing {
		return
	}
	commitTx := c.st.curr
	if mutantCommitOutOfOrder {
		// The mutant: commit the latest processed batch, not the lowest
		// uncommitted txid.
		for _, tx := range c.sortedActive() {
			if c.active[tx].status == processed {
				commitTx = tx
			}
		}
	}
	if a := c.active[commitTx]; a != nil && a.status == processed {
		a.status = committing
		a.commitAt = ctx.Now()
		c.emitTree(ctx, a, kindCommit, c.t.committers)
	}
	if len(c.active) >= c.t.maxPending {
		return
	}
	for tx := c.st.curr; tx < c.st.curr+int64(c.t.maxPending); tx++ {
		if c.active[tx] != nil {
			continue
		}
		if c.emitted && ctx.Now() < c.lastEmit+c.t.interval {
			c.wake(ctx, c.lastEmit+c.t.interval)
			return
		}
		attempt, seen := c.st.attempts[tx]
		if seen {
			attempt++
		}
		c.st.attempts[tx] = attempt
		c.lastEmit, c.emitted = ctx.Now(), true
		// The attempt number is durable before the attempt goes out.
		fails := c.fails
		c.put(ctx, func() {
			if c.fails == fails {
				c.start(ctx, txAttempt{txid: tx, attempt: attempt})
			}
		})
		return
	}
}

// start emits the batch tuple of tx to every emitter.
func (c *coordinator) start(ctx engine.Ctx, tx txAttempt) {
	a := &active{tx: tx, status: processing, startAt: ctx.Now()}
	c.active[tx.txid] = a
	if _, ok := c.firstStart[tx.txid]; !ok {
		c.firstStart[tx.txid] = ctx.Now()
	}
	ctx.Count(cBatchesStarted, 1)
	if tx.attempt > 0 {
		ctx.Count(cBatchesReplayed, 1)
	}
	ctx.Record(engine.Event{Kind: evBatchStarted, ID: tx.txid, Value: int64(tx.attempt)})
	c.emitTree(ctx, a, kindBatch, c.t.emitters)
}

// emitTree sends one tuple of a new tree (a's batch or commit tuple) to
// each of to, tells the tree's acker the XOR of their ids, and arms the
// tree's timeout.
func (c *coordinator) emitTree(ctx engine.Ctx, a *active, kind uint16, to []engine.ProcID) {
	root := storm.NonZero(ctx)
	var init uint64
	for _, p := range to {
		id := storm.NonZero(ctx)
		init ^= id
		ctx.Send(p, engine.Msg{Kind: kind, Body: &txMsg{tx: a.tx, at: a.startAt, edges: []storm.Edge{{Root: root, ID: id}}}, Size: txBytes + storm.IDBytes(1)})
	}
	storm.SendAckStream(ctx, c.t.ackerOf(root), engine.Msg{Kind: storm.KindInit, Key: root, Val: int64(init), Size: storm.InitBytes})
	a.root = root
	c.roots[root] = a.tx.txid
	a.deadline = ctx.Now() + c.t.timeout
	ctx.After(c.t.timeout, tickTimeout)
}

// wake sets a sync timer for at (one at a time, the earliest).
func (c *coordinator) wake(ctx engine.Ctx, at engine.Time) {
	if c.syncAt != 0 && c.syncAt <= at {
		return
	}
	c.syncAt = at
	ctx.After(at-ctx.Now(), tickSync)
}
