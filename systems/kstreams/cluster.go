package kstreams

import (
	"slices"

	"ftbench/engine"
	"ftbench/systems/internal/stream"
)

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
	// entries name their transaction by id, so that a log holds no
	// pointers and the garbage collector need not scan it.
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
	parts   []*plog         // partitions it wrote to (AddPartitionsToTxn)
	output  []engine.Commit // its output-topic records: visible when it commits
	offsets []offset        // consumed offsets (TxnOffsetCommit), committed with it
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

// entry is one record of a partition log: a data message's typed fields
// (data records carry no Body) and its transaction. It holds no pointer,
// so the collector never scans the logs, which hold every record between
// two purges or compactions.
type entry struct {
	key  uint64
	val  int64
	id   engine.EffectID
	born engine.Time
	size int32
	kind uint16
	txn  int32 // the transaction's id; 0: written outside one (at-least-once)
}

func entryOf(m engine.Msg, t *txn) entry {
	e := entry{key: m.Key, val: m.Val, id: m.ID, born: m.Born, size: m.Size, kind: m.Kind}
	if t != nil {
		e.txn = t.id
	}
	return e
}

// msg is the record as a consumer receives it.
func (e *entry) msg() engine.Msg {
	return engine.Msg{Kind: e.kind, Size: e.size, Key: e.key, Val: e.val, ID: e.id, Born: e.born}
}

// plog is one partition. Offsets count records; recs[i] is at offset
// start+i. stable is the last stable offset: every record below it is
// committed, aborted or non-transactional (read_committed reads up to
// it); the high watermark is end(). A repartition partition is purged
// below its committed offset (Streams' deleteRecords after a commit); a
// changelog partition is compacted: the cleaner folds its decided records
// into base, the last committed value of each key with its offset.
type plog struct {
	start, stable int64
	recs          []entry // the live records: buf[head:]
	buf           []entry
	head          int
	changelog     bool
	base          []based // compacted records, by offset
	txns          *[]*txn // the cluster's byID
}

// txnOf is the transaction that wrote e, nil when none did.
func (l *plog) txnOf(e *entry) *txn {
	if e.txn == 0 {
		return nil
	}
	return (*l.txns)[e.txn-1]
}

type based struct {
	kv  stream.KV
	off int64
}

func (l *plog) end() int64 { return l.start + int64(len(l.recs)) }

// advance moves the last stable offset past decided records.
func (l *plog) advance() {
	for l.stable < l.end() && l.txnOf(&l.recs[l.stable-l.start]).decided() {
		l.stable++
	}
}

// readable is how far a consumer may read: the LSO under read_committed.
func (l *plog) readable(committed bool) int64 {
	if committed {
		return l.stable
	}
	return l.end()
}

// visible reports whether the record at off is one a consumer returns:
// not part of an aborted transaction.
func (l *plog) visible(off int64) bool {
	t := l.txnOf(&l.recs[off-l.start])
	return t == nil || t.state != txnAborted
}

// purge drops the decided records below off (a repartition topic's records
// once their consumer committed past them).
func (l *plog) purge(off int64) {
	off = min(off, l.stable)
	if off <= l.start {
		return
	}
	l.drop(off - l.start)
	l.start = off
}

// push appends a record.
func (l *plog) push(e entry) {
	l.buf = append(l.buf, e)
	l.recs = l.buf[l.head:]
}

// drop forgets the first n records. They stay in the array until they
// are more than the live ones, which then move to its front: a purge
// after every commit copies nothing, and the array keeps its capacity
// (re-slicing it away made every purged log grow, and copy, again).
func (l *plog) drop(n int64) {
	l.head += int(n)
	if l.head > len(l.buf)/2 {
		k := copy(l.buf, l.buf[l.head:])
		clear(l.buf[k:]) // let the collector have the dropped records' bodies
		l.buf, l.head = l.buf[:k], 0
	}
	l.recs = l.buf[l.head:]
}

// compact is one log-cleaner pass over a changelog partition: when the
// decided records since the last pass are at least as many as the live
// keys (min.cleanable.dirty.ratio 0.5), they are folded into base, which
// keeps each key's last committed value and drops aborted records. It
// returns the records removed.
func (l *plog) compact() int64 {
	dirty := l.stable - l.start
	if dirty == 0 || dirty < int64(len(l.base)) {
		return 0
	}
	last := map[uint64]based{}
	for _, b := range l.base {
		last[b.kv.Key] = b
	}
	for off := l.start; off < l.stable; off++ {
		e := &l.recs[off-l.start]
		if t := l.txnOf(e); t == nil || t.state == txnCommitted {
			last[e.key] = based{stream.KV{Key: e.key, Val: e.val}, off}
		}
	}
	before := int64(len(l.base)) + dirty
	base := make([]based, 0, len(last))
	for _, b := range last {
		base = append(base, b)
	}
	slices.SortFunc(base, func(a, b based) int { return int(a.off - b.off) })
	l.base = base
	l.drop(dirty)
	l.start = l.stable
	return before - int64(len(base))
}

// readChangelog returns up to n visible records at offsets from `from` up
// to limit (base first, then the log), and the offset to read next.
func (l *plog) readChangelog(from, limit int64, n int) ([]stream.KV, int64) {
	var kvs []stream.KV
	next := from
	if from < l.start {
		i, _ := slices.BinarySearchFunc(l.base, from, func(b based, off int64) int { return int(b.off - off) })
		for ; i < len(l.base) && len(kvs) < n; i++ {
			kvs = append(kvs, l.base[i].kv)
			next = l.base[i].off + 1
		}
		if len(kvs) == n {
			return kvs, next
		}
		next = l.start
	}
	for ; next < limit && len(kvs) < n; next++ {
		if l.visible(next) {
			e := &l.recs[next-l.start]
			kvs = append(kvs, stream.KV{Key: e.key, Val: e.val})
		}
	}
	return kvs, next
}
