package kstreams

import "ftbench/engine"

// cluster is what the Kafka cluster keeps durably: the partition logs of
// the repartition and changelog topics, the committed offsets (the
// __consumer_offsets topic), the producer epochs and open transactions
// (__transaction_state) and the group's membership and assignment. Every
// change to it is made by the broker process after the store write that
// models its acks=all replication is durable, so it survives a master
// crash as replicated logs survive a leader's: the new broker process
// finds it as the old one left it. Only the broker process touches it.
type cluster struct {
	rep       [][]*plog // [sub][part]: the repartition topic sub-topology sub reads (sub >= 1)
	chg       []*plog   // [task]: the task's changelog partition (stateful tasks)
	committed []int64   // [task]: the committed offset of the task's input partition
	epoch     []int64   // [thread]: producer epoch of the thread's transactional id
	open      []*txn    // [thread]: its transaction in progress, nil when none
	lastSeq   []int64   // [thread]: idempotent producer: the last sequence appended

	gen      int64         // the group generation
	member   []bool        // [thread]: in the group
	active   []int         // [task]: owner thread, -1 when none
	standby  [][]int       // [task]: threads holding a standby (or warm-up) copy
	standAt  [][]int64     // [task]: each standby's changelog position, as last fetched
	warm     []int         // [task]: the thread of standby[task] that is a warm-up (KIP-441), -1 when none
	revoking []int         // [task]: a live member revoking it for a move (cooperative), -1 when none
	planned  []bool        // [task]: moved off a live owner, not yet assigned to its new one
	holds    []bool        // [thread]: holds the tasks it was assigned (false from a fresh JoinGroup to its next assignment)
	ran      []bool        // [task]: eager: its owner ran it before revoking it for the rebalance in progress
	pending  int           // tasks the last assignment left off their target instance (KIP-441 movements)
	probeSeq int64         // the probing rebalance armed last (earlier timers are void)
	probing  bool          // the rebalance in progress is a probing one
	away     []bool        // [thread]: failed, not yet removed (static members keep their tasks)
	joinedAt []engine.Time // [thread]: its last JoinGroup
	aborted  int64         // transactions aborted (metrics come from events; kept for tests)
	commits  int64         // transactions committed
	nextTok  int64         // store-write tokens
	txns     []*txn        // every transaction still undecided, oldest first
	// byID is every transaction ever begun: txn.id-1 indexes it. Log
	// batches name their transaction by id, so that their records hold no
	// pointers and the garbage collector need not scan them.
	byID    []*txn
	cleaned engine.Time // the log cleaner's last pass
}

func newCluster(p *params) *cluster {
	c := &cluster{
		rep:       make([][]*plog, len(p.subs)),
		chg:       make([]*plog, p.nTasks()),
		committed: make([]int64, p.nTasks()),
		epoch:     make([]int64, p.nThreads()),
		open:      make([]*txn, p.nThreads()),
		lastSeq:   make([]int64, p.nThreads()),
		member:    make([]bool, p.nThreads()),
		away:      make([]bool, p.nThreads()),
		joinedAt:  make([]engine.Time, p.nThreads()),
		active:    make([]int, p.nTasks()),
		standby:   make([][]int, p.nTasks()),
		standAt:   make([][]int64, p.nTasks()),
		warm:      make([]int, p.nTasks()),
		revoking:  make([]int, p.nTasks()),
		planned:   make([]bool, p.nTasks()),
		holds:     make([]bool, p.nThreads()),
		ran:       make([]bool, p.nTasks()),
	}
	for s := 1; s < len(p.subs); s++ {
		for i := 0; i < p.parts; i++ {
			c.rep[s] = append(c.rep[s], &plog{txns: &c.byID})
		}
	}
	for t := range c.chg {
		c.active[t], c.warm[t], c.revoking[t] = -1, -1, -1
		if p.stateful(taskID(t)) {
			c.chg[t] = &plog{changelog: true, txns: &c.byID}
		}
	}
	return c
}

// txn is one transaction of a thread's producer (KIP-98), as the
// transaction coordinator and the partition leaders know it.
type txn struct {
	thread  int
	epoch   int64
	state   txnState
	parts   []*plog           // partitions it wrote to (AddPartitionsToTxn)
	output  [][]engine.Commit // its output-topic records, in the producers' pieces: visible when it commits
	offsets []offset          // consumed offsets (TxnOffsetCommit), committed with it
	began   engine.Time
	id      int32 // its index in cluster.byID, plus one
}

type txnState uint8

const (
	txnOpen      txnState = iota
	txnPreparing          // PREPARE_COMMIT being written
	txnPrepared           // PREPARE_COMMIT durable: decided, markers being written
	txnCommitted
	txnAborted
)

func (t *txn) decided() bool { return t == nil || t.state == txnCommitted || t.state == txnAborted }
