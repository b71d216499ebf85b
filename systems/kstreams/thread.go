package kstreams

import (
	"ftbench/engine"
	"ftbench/systems/internal/stream"
)

// Thread timers.
const (
	tPoll int64 = iota + 1
	tCommit
	tLinger
	tStandby
	tHeartbeat
)

// Commit phases of a thread (its commit blocks processing, as
// commitTransaction and commitSync block a StreamThread).
type phase uint8

const (
	phIdle    phase = iota
	phOffsets       // EOS: TxnOffsetCommit sent (the caches flushed into the producer)
	phFlush         // waiting for every produced batch to be acknowledged
	phEnd           // EOS: EndTxn sent / at-least-once: OffsetCommit sent
)

// thread is a StreamThread: a consumer in the group (one member), a
// producer (under exactly-once v2 one transactional producer for all its
// tasks, KIP-447), and the tasks assigned to it. Its loop polls records
// for its running tasks, processes each through its task's processors,
// and every commit.interval.ms commits: the caches are flushed to the
// changelogs, the consumed offsets are added to the transaction, the
// producer is flushed and the transaction committed; at-least-once
// flushes, then commits the offsets. Invariant: a task's input offset is
// committed only with (EOS: in the same transaction as) every changelog
// write and output its records made.
type thread struct {
	p       *params
	idx     int
	ctx     engine.Ctx
	octx    []opCtx // per plan stage
	srcCost *engine.CostModel

	epoch    int64
	gen      int64
	ready    bool    // has a producer id and an assignment
	rebal    bool    // a rebalance is in progress
	rebalGen int64   // the generation the rebalance in progress started from
	revoke   bool    // eager: revoke everything once the commit ends
	tasks    []*task // [taskID]: active tasks
	standby  []*task // [taskID]: standby tasks
	local    []*task // [taskID]: stores of closed tasks still in the state directory
	paused   engine.Time
	revoking []taskID // cooperative: tasks revoked for a move, given up after the next commit (handover.go)
	handover []bool   // [taskID]: assigned as a planned move, its start recorded as a handover
	dropped  bool     // cooperative: the assignment took a task that had not started running

	ph        phase
	commitReq bool
	inflight  *produce
	seq       int64
	acc       accumulator
	late      accumulator       // mutant: changelog records held until after the commit
	out       [][]engine.Commit // output-topic records not sent yet, in the runtime's pieces
	bufBytes  int64
	rr        int
	fetching  bool
	fetchSeq  int64
	stash     []fetched // records fetched while the thread was blocked
	stashBufs [][]entry // the fetch buffers stash's records are in
	fetchBufs [][]entry // fetch buffers free for the next fetches
	offReq    any       // the commit request outstanding (re-sent to a new broker)
	began     engine.Time
	lingering bool
	polling   bool
	// Set as a poll or a drain begins, for the records it processes (their
	// processing changes no task): the record cache's share of each
	// stateful task, and the repartition bytes they produced, counted
	// once they are processed (one counter update, not one a record).
	cachePerTask int
	repBytes     int64
}

func newThread(p *params, idx int) *thread {
	th := &thread{p: p, idx: idx, octx: make([]opCtx, len(p.plan.Stages)), srcCost: p.cost.For(p.plan.Source)}
	for i, st := range p.plan.Stages {
		th.octx[i].c = p.cost.For(st.Name)
	}
	th.tasks = make([]*task, p.nTasks())
	th.standby = make([]*task, p.nTasks())
	th.local = make([]*task, p.nTasks())
	th.handover = make([]bool, p.nTasks())
	th.acc.init(p)
	th.late.init(p)
	return th
}

func (th *thread) send(kind uint16, size int64, body any) {
	th.ctx.Send(th.p.broker, engine.Msg{Kind: kind, Ctrl: true, Size: int32(min(size, 1<<30)), Body: body})
}

func (th *thread) Init(ctx engine.Ctx) {
	th.ctx = ctx
	th.start()
	// commit.interval.ms runs from each thread's own last commit, and
	// threads start at different moments: their commits are not in step
	// (in step, a record would wait a whole interval at every hop).
	ctx.After(1+engine.Time(ctx.Rand().Int64N(int64(th.p.commitInterval))), tCommit)
	ctx.After(th.p.sessionTimeout/3, tHeartbeat)
	ctx.After(standbyPoll, tStandby)
}

// start gets a producer id (InitProducerId: the idempotent producer's
// epoch, and under EOS the fence of any older producer of this thread's
// transactional id), then joins the group.
func (th *thread) start() {
	th.ready = false
	th.seq = 0
	th.revoking = nil // a fresh member holds no task
	th.ctx.Send(th.p.broker, engine.Msg{Kind: kInitPid, Ctrl: true, Size: requestBytes, Val: int64(th.idx)})
}

func (th *thread) Handle(ctx engine.Ctx, from engine.ProcID, m engine.Msg) {
	th.ctx = ctx
	switch m.Kind {
	case kPid:
		th.epoch = m.Body.(int64)
		th.send(kJoin, requestBytes, join{thread: th.idx})
	case kRebalance:
		th.rebalance(m.Body.(int64))
	case kAssign:
		th.assigned(m.Body.(assignment))
	case kProduceAck:
		th.produced(m.Body.(produceAck))
	case kTxnOffsetsAck:
		th.txnOffsetsAcked(m.Body.(txnReply))
	case kEndTxnAck, kOffsetCommitAck:
		th.committed(m.Body.(txnReply))
	case kOffset:
		th.offsetFetched(m.Body.(offset))
	case kRecords:
		r := m.Body.(records)
		if r.seq != th.fetchSeq {
			th.fetchBufs = append(th.fetchBufs, r.buf[:0])
			return // answers a fetch a newer one replaced
		}
		th.fetching = false
		th.stash = append(th.stash, r.recs...)
		th.stashBufs = append(th.stashBufs, r.buf)
		th.drain()
	case kRestoreChunk:
		th.restoreChunk(m.Body.(restoreChunk))
	case kBrokerUp:
		th.resend()
	case kRejoin:
		th.fenced("unknown member")
	}
}

func (th *thread) Timer(ctx engine.Ctx, id int64) {
	th.ctx = ctx
	switch id {
	case tPoll:
		th.polling = false
		th.poll()
	case tCommit:
		ctx.After(th.p.commitInterval, tCommit)
		th.commitReq = true
		th.maybeCommit()
	case tHeartbeat:
		// The consumer's heartbeat thread: it beats while the thread
		// processes; a paused (or crashed) process stops beating.
		ctx.Send(th.p.broker, engine.Msg{Kind: kHeartbeat, Ctrl: true, Size: requestBytes, Val: int64(th.idx)})
		ctx.After(th.p.sessionTimeout/3, tHeartbeat)
	case tLinger:
		th.lingering = false
		th.flush()
	case tStandby:
		// A caught-up standby polls its changelog again.
		for id, t := range th.standby {
			if t != nil && !t.restoring {
				th.requestRestore(t, taskID(id))
			}
		}
		ctx.After(standbyPoll, tStandby)
	}
}

// blocked: the thread is committing, has no assignment yet, or (eager)
// has revoked its tasks for a rebalance.
func (th *thread) blocked() bool {
	return !th.ready || th.ph != phIdle || (th.rebal && th.p.eager)
}

// poll reads the source topic's partitions of the running source tasks,
// up to max.poll.records in all, and processes them.
func (th *thread) poll() {
	if th.blocked() {
		return
	}
	th.cachePerTask = th.p.cacheEntries / max(1, th.statefulTasks())
	budget := maxPollRecords
	wait := engine.Time(-1)
	for _, t := range th.tasks {
		if t == nil || t.src == nil || t.state != tsRunning || budget == 0 {
			continue
		}
		t.src.Next, t.src.Batch = t.pos, budget
		n0 := t.src.Next
		again, done := t.src.Poll(th.ctx, func(m engine.Msg) { th.input(t, m) })
		t.pos = t.src.Next
		budget -= int(t.pos - n0)
		if !done && (wait < 0 || again < wait) {
			wait = again
		}
	}
	th.afterProcessing()
	if wait >= 0 {
		// At least a microsecond: the runtime fires a due timer before it
		// delivers input, and a StreamThread handles its clients'
		// responses between two polls.
		th.armPoll(max(wait, engine.Microsecond))
	}
}

func (th *thread) armPoll(d engine.Time) {
	if !th.polling {
		th.polling = true
		th.ctx.After(d, tPoll)
	}
}

// drain processes stashed fetched records unless blocked, then fetches
// again.
func (th *thread) drain() {
	if th.blocked() {
		return
	}
	th.cachePerTask = th.p.cacheEntries / max(1, th.statefulTasks())
	stash := th.stash
	th.stash = nil
	for _, f := range stash {
		t := th.tasks[f.task]
		if t == nil || t.state != tsRunning || f.from != t.pos {
			continue // revoked or moved meanwhile
		}
		for i := range f.recs {
			th.input(t, f.recs[i].msg())
		}
		t.pos = f.next
	}
	for _, buf := range th.stashBufs {
		th.fetchBufs = append(th.fetchBufs, buf[:0])
	}
	clear(th.stashBufs)
	th.stashBufs = th.stashBufs[:0]
	th.afterProcessing()
	th.fetch()
}

// fetch sends a long-poll Fetch for the running repartition-fed tasks,
// unless one is outstanding; refetch replaces an outstanding one (a task
// started running: the parked fetch does not name its partition).
func (th *thread) fetch() {
	if th.fetching {
		return
	}
	th.refetch()
}

func (th *thread) refetch() {
	// A new sequence number voids the outstanding fetch's answer; when
	// blocked, the thread fetches again once it resumes.
	th.fetchSeq++
	th.fetching = false
	if th.blocked() {
		return
	}
	f := &fetch{thread: th.idx, seq: th.fetchSeq}
	for id, t := range th.tasks {
		if t != nil && t.src == nil && t.state == tsRunning {
			f.reqs = append(f.reqs, fetchReq{task: taskID(id), from: t.pos})
		}
	}
	if len(f.reqs) == 0 {
		th.fetching = false
		return
	}
	if n := len(th.fetchBufs); n > 0 {
		f.buf, th.fetchBufs = th.fetchBufs[n-1], th.fetchBufs[:n-1]
	} else {
		f.buf = make([]entry, 0, maxPollRecords)
	}
	th.fetching = true
	th.send(kFetch, requestBytes, f)
}

// afterProcessing sends a full batch, or arms the linger timer.
func (th *thread) afterProcessing() {
	if th.repBytes > 0 {
		th.ctx.Count(cRepartitionBytes, th.repBytes)
		th.repBytes = 0
	}
	if th.bufBytes >= batchBytes {
		th.flush()
	} else if !th.acc.empty() || len(th.out) > 0 {
		if !th.lingering {
			th.lingering = true
			th.ctx.After(linger, tLinger)
		}
	}
	th.maybeCommit()
}

// flush sends what the producer holds, one request in flight at a time.
func (th *thread) flush() {
	if th.inflight != nil || (th.acc.empty() && len(th.out) == 0) {
		return
	}
	th.seq++
	pr := &produce{thread: th.idx, epoch: th.epoch, seq: th.seq, batches: th.acc.take(), out: th.out, bytes: th.bufBytes + requestBytes}
	th.out, th.bufBytes = nil, 0
	th.inflight = pr
	th.send(kProduce, pr.bytes, pr)
}

// outPiece is the output records of one of the runtime's pieces.
const outPiece = 512

// output adds an output-topic record. Output records gather in pieces
// taken from the runtime (engine.CommitBuffer), which the transaction
// keeps whole and hands back when it commits (engine.CommitOwned): the
// runtime reuses them instead of the event loop allocating and copying a
// second's output per second.
func (th *thread) output(c engine.Commit) {
	n := len(th.out)
	if n == 0 || len(th.out[n-1]) == cap(th.out[n-1]) {
		th.out = append(th.out, engine.CommitBuffer(th.ctx, outPiece))
		n++
	}
	th.out[n-1] = append(th.out[n-1], c)
}

// accumulator is the producer's record accumulator: the records not sent
// yet, by partition, in batches of at most batchRecords records (Kafka's
// RecordAccumulator closes a batch at batch.size bytes and opens the
// next), and the partitions in the order they got their first record. A
// request takes every batch (the log keeps each whole), and a partition
// goes on in an array of a batch some log dropped, which the broker handed
// back with an acknowledgement. Every array holds batchRecords, so any
// spare fits any partition of its kind: after the first commits the
// producer allocates nothing (arrays grown record by record, or sized to a
// whole cache flush, were a fifth of the event loop's time and most of a
// fresh process's page faults).
type accumulator struct {
	nTasks, parts int
	recs          [][]entry     // by repartition partition (slot): its open batch
	kvs           [][]stream.KV // by changelog partition (slot): its open batch
	order         []int         // the slots with records, first-come
	closed        []prodBatch   // full batches, oldest first
	spare         [][]entry     // empty arrays for the next batches
	spareKV       [][]stream.KV
}

// batchRecords bounds a batch: 512 records of a word (about 30 bytes on
// the wire each) are batch.size's 16 KB. How records split into batches
// moves no figure: a request carries them all, and offsets, transactions
// and bytes are the records'.
const batchRecords = 512

func (a *accumulator) init(p *params) {
	a.nTasks, a.parts = p.nTasks(), p.parts
	a.recs = make([][]entry, 2*p.nTasks())
	a.kvs = make([][]stream.KV, p.nTasks())
}

// add appends a record for partition part of sub's repartition topic.
func (a *accumulator) add(sub, part int, e entry) {
	s := a.nTasks + sub*a.parts + part
	if full := appendTo(a, a.recs, &a.spare, s, e); full != nil {
		a.closed = append(a.closed, a.batchOf(s, full, nil))
	}
}

// addKV appends a store update for the changelog of task (sub, part).
func (a *accumulator) addKV(sub, part int, kv stream.KV) {
	s := sub*a.parts + part
	if full := appendTo(a, a.kvs, &a.spareKV, s, kv); full != nil {
		a.closed = append(a.closed, a.batchOf(s, nil, full))
	}
}

// appendTo appends x to slot s's open batch, open[s]. When that batch is
// full, x starts the next one in a spare array, and appendTo returns the
// full one for the caller to close.
func appendTo[E any](a *accumulator, open [][]E, spare *[][]E, s int, x E) (full []E) {
	r := open[s]
	if len(r) == 0 { // nothing of s is waiting: not even a closed batch
		a.order = append(a.order, s)
	}
	if len(r) == cap(r) {
		if len(r) > 0 {
			full = r
		}
		r = takeSpare(spare)
	}
	open[s] = append(r, x)
	return full
}

// takeSpare is an empty array for a partition's next batch: one the
// broker handed back, or a new one.
func takeSpare[E any](spare *[][]E) []E {
	n := len(*spare)
	if n == 0 {
		return make([]E, 0, batchRecords)
	}
	arr := (*spare)[n-1]
	(*spare)[n-1] = nil
	*spare = (*spare)[:n-1]
	return arr
}

// batchOf is slot s's batch: slots number the changelogs first, by task,
// then the repartition topics' partitions.
func (a *accumulator) batchOf(s int, recs []entry, kvs []stream.KV) prodBatch {
	b := prodBatch{changelog: s < a.nTasks, recs: recs, kvs: kvs}
	q := s
	if !b.changelog {
		q -= a.nTasks
	}
	b.sub, b.part = q/a.parts, q%a.parts
	return b
}

func (a *accumulator) empty() bool { return len(a.order) == 0 }

// take hands over every batch, each partition's in order, and empties the
// accumulator.
func (a *accumulator) take() []prodBatch {
	bs := make([]prodBatch, 0, len(a.closed)+len(a.order))
	bs = append(bs, a.closed...)
	clear(a.closed)
	a.closed = a.closed[:0]
	for _, s := range a.order {
		if s < a.nTasks {
			bs = append(bs, a.batchOf(s, nil, a.kvs[s]))
			a.kvs[s] = nil
		} else {
			bs = append(bs, a.batchOf(s, a.recs[s], nil))
			a.recs[s] = nil
		}
	}
	a.order = a.order[:0]
	return bs
}

// reset drops the records not sent yet (an aborted transaction's).
func (a *accumulator) reset() {
	for _, b := range a.closed {
		a.recycle(b)
	}
	clear(a.closed)
	a.closed = a.closed[:0]
	for _, s := range a.order {
		if s < a.nTasks {
			a.kvs[s] = a.kvs[s][:0]
		} else {
			a.recs[s] = a.recs[s][:0]
		}
	}
	a.order = a.order[:0]
}

// recycle keeps the array of a batch no log took.
func (a *accumulator) recycle(b prodBatch) {
	if b.kvs != nil {
		a.spareKV = append(a.spareKV, b.kvs[:0])
	} else {
		a.spare = append(a.spare, b.recs[:0])
	}
}

func (th *thread) produced(a produceAck) {
	if th.inflight == nil || a.seq != th.inflight.seq {
		return
	}
	th.inflight = nil
	th.acc.spare = append(th.acc.spare, a.spare...)
	th.acc.spareKV = append(th.acc.spareKV, a.spareKV...)
	if a.fenced {
		th.fenced("produce fenced")
		return
	}
	th.flush()
	th.stepCommit()
}

// ---- commits ----

// maybeCommit starts a commit when one is due. Under cooperative
// rebalancing no commit starts while a rebalance is in progress (Streams
// skips it: the offsets could not be committed with a stale generation).
func (th *thread) maybeCommit() {
	if !th.commitReq || !th.ready || th.ph != phIdle || (th.rebal && !th.revoke) {
		return
	}
	th.commitReq = false
	th.began = th.ctx.Now()
	for _, t := range th.tasks {
		if t != nil {
			th.flushCache(t)
		}
	}
	th.flush()
	if th.p.eos {
		th.ph = phOffsets
		th.offReq = txnOffsets{thread: th.idx, epoch: th.epoch, gen: th.gen, offsets: th.offsets()}
		th.send(kTxnOffsets, requestBytes, th.offReq)
		return
	}
	th.ph = phFlush
	th.stepCommit()
}

// offsets lists every running task's next input offset.
func (th *thread) offsets() []offset {
	var offs []offset
	for id, t := range th.tasks {
		if t != nil && t.state == tsRunning {
			offs = append(offs, offset{task: taskID(id), off: t.pos})
		}
	}
	return offs
}

func (th *thread) txnOffsetsAcked(r txnReply) {
	if th.ph != phOffsets {
		return
	}
	if r.fenced {
		th.fenced("txn offsets: " + r.reason)
		return
	}
	th.ctx.Record(engine.Event{Kind: evTxnOffsets, ID: int64(th.idx)})
	th.ph = phFlush
	th.stepCommit()
}

// stepCommit ends the transaction (or commits the offsets) once every
// batch is acknowledged.
func (th *thread) stepCommit() {
	if th.ph != phFlush || th.inflight != nil || !th.acc.empty() || len(th.out) > 0 {
		return
	}
	th.ph = phEnd
	if th.p.eos {
		th.offReq = endTxn{thread: th.idx, epoch: th.epoch, commit: true}
		th.send(kEndTxn, requestBytes, th.offReq)
		return
	}
	th.offReq = &offsetCommit{thread: th.idx, gen: th.gen, offsets: th.offsets()}
	th.send(kOffsetCommit, requestBytes, th.offReq)
}

func (th *thread) committed(r txnReply) {
	if th.ph != phEnd {
		return
	}
	th.ph, th.offReq = phIdle, nil
	if r.fenced {
		th.fenced("commit: " + r.reason)
		return
	}
	for _, e := range r.ends {
		// Only a running task's store is consistent with its changelog's
		// end; one still waiting or restoring has not caught up yet.
		if t := th.tasks[e.task]; t != nil && t.state == tsRunning {
			t.clFrom = e.off
			if t.undo != nil {
				clear(t.undo)
			}
		}
	}
	if !th.late.empty() { // mutant: the changelog after the commit
		for _, b := range th.late.take() {
			for _, kv := range b.kvs {
				th.acc.addKV(b.sub, b.part, kv)
			}
			th.late.recycle(b)
		}
		th.flush()
	}
	th.releaseRevoked()
	if th.revoke {
		th.revokeAll()
	}
	th.resume()
}

// resume restarts processing after a block.
func (th *thread) resume() {
	if th.blocked() {
		return
	}
	th.armPoll(0)
	th.drain()
	th.maybeCommit()
}

// fenced: the thread was fenced (a zombie) — Streams' TaskMigratedException.
// Its transaction is aborted, its tasks are closed dirty (under EOS a
// non-transactional store is wiped; a KIP-892 store rolls back), and it
// rejoins with a fresh producer.
func (th *thread) fenced(why string) {
	th.ctx.Record(engine.Event{Kind: evFenced, ID: int64(th.idx), Note: why})
	for id, t := range th.tasks {
		if t != nil {
			th.closeDirty(t)
			th.tasks[id] = nil
		}
	}
	th.acc.reset()
	th.late.reset()
	th.out, th.bufBytes, th.stash, th.stashBufs = nil, 0, nil, nil
	th.fetchSeq++
	th.fetching = false
	th.ph, th.offReq, th.inflight, th.rebal, th.revoke = phIdle, nil, nil, false, false
	th.start()
}

// closeDirty closes a task after an abort: its store is kept in the state
// directory only where it is still consistent with a changelog offset.
func (th *thread) closeDirty(t *task) {
	switch {
	case t.store == nil:
		return
	case !th.p.eos:
		// At-least-once: the store is kept as it is, possibly ahead of
		// its checkpointed changelog offset.
	case t.undo != nil:
		for k, u := range t.undo { // restoring any key's old value; order is irrelevant
			if u.had {
				t.store.State.Set(k, u.v)
			} else {
				t.store.State.Set(k, 0)
			}
		}
		clear(t.undo)
	default:
		return // wiped: TaskCorruptedException under EOS
	}
	t.store.Changed.Clear()
	th.local[t.id] = t
}

// ---- rebalances ----

func (th *thread) rebalance(gen int64) {
	th.rebal, th.rebalGen = true, gen
	if !th.p.eager {
		th.send(kJoined, requestBytes, join{thread: th.idx, gen: gen, owned: th.owned()})
		return
	}
	// Eager: commit, then revoke every task, then rejoin.
	th.revoke = true
	th.paused = th.ctx.Now()
	if !th.ready {
		th.revokeAll() // nothing assigned yet: nothing to commit
		return
	}
	th.commitReq = true
	if th.ph == phIdle {
		th.maybeCommit()
	}
}

// revokeAll closes every task cleanly after the eager rebalance's commit
// (its store stays in the state directory) and rejoins.
func (th *thread) revokeAll() {
	th.revoke = false
	var ran []taskID // committed running: a move of one is a handover (assign.go)
	for id, t := range th.tasks {
		if t != nil {
			if t.state == tsRunning {
				ran = append(ran, taskID(id))
				if t.store != nil {
					th.local[id] = t
				}
			}
			th.tasks[id] = nil
		}
	}
	th.fetching = false
	th.send(kJoined, requestBytes, join{thread: th.idx, gen: th.rebalGen, ran: ran})
}

func (th *thread) assigned(a assignment) {
	th.gen, th.rebal, th.ready = a.gen, false, true
	now := th.ctx.Now()
	want := make([]bool, th.p.nTasks())
	for _, id := range a.active {
		want[id] = true
	}
	for id, t := range th.tasks {
		if t != nil && !want[id] && !th.keepRevoked(t) {
			th.tasks[id] = nil // revoked (eager: already committed)
		}
	}
	wantSB := make([]bool, th.p.nTasks())
	for _, id := range a.standby {
		wantSB[id] = true
	}
	th.markHandover(a)
	th.rejoinAfterDrops()
	for _, id := range a.active {
		if th.tasks[id] != nil {
			continue
		}
		t := th.standby[id]
		th.standby[id] = nil
		from := "standby"
		if t != nil {
			t.standby = false
		} else if t = th.local[id]; t != nil {
			th.local[id], from = nil, "local"
		} else {
			t, from = th.newTask(id), "changelog"
		}
		t.from = from
		if t.store != nil && th.p.eos && th.p.txnStores {
			t.undo = map[uint64]undoVal{}
		}
		if th.p.eager && th.paused > 0 {
			th.ctx.Record(engine.Event{Kind: evPaused, ID: int64(id), Value: int64(now - th.paused)})
		}
		t.state, t.restoreBegan, t.restored = tsOffsets, now, 0
		th.tasks[id] = t
		th.send(kOffsetFetch, requestBytes, offsetFetch{thread: th.idx, task: id})
	}
	th.paused = 0
	for id, t := range th.standby {
		if t != nil && !wantSB[id] {
			th.standby[id] = nil
		}
	}
	for _, id := range a.standby {
		if th.standby[id] == nil {
			t := th.newTask(id)
			t.standby = true
			th.standby[id] = t
			th.requestRestore(t, id)
		}
	}
	th.resume()
}

func (th *thread) offsetFetched(o offset) {
	t := th.tasks[o.task]
	if t == nil || t.state != tsOffsets {
		return
	}
	t.pos = o.off
	if t.store == nil {
		// A stateless task has nothing to restore: it passes through
		// RESTORING at once.
		th.ctx.Record(engine.Event{Kind: th.startKind(o.task), ID: int64(o.task), Value: int64(th.ctx.Now() - t.restoreBegan), Note: "from=none"})
		th.running(t)
		return
	}
	t.state = tsRestoring
	th.requestRestore(t, o.task)
}

func (th *thread) requestRestore(t *task, id taskID) {
	t.restoring = true
	th.send(kRestore, requestBytes, restoreReq{thread: th.idx, task: id, from: t.clFrom, standby: t.standby})
}

// restoreChunk applies changelog records to a restoring or standby task's
// store: the restore consumer's put of each record.
func (th *thread) restoreChunk(c restoreChunk) {
	t := th.tasks[c.task]
	if c.standby {
		t = th.standby[c.task]
	}
	if t == nil || (!c.standby && t.state != tsRestoring) {
		return
	}
	t.restoring = false
	cost := th.octx[t.sub.store].c.StateCPU
	th.ctx.Work(engine.Time(len(c.kvs)) * cost)
	t.store.Apply(c.kvs)
	t.restored += int64(len(c.kvs))
	if c.standby {
		th.ctx.Count(cStandbyRecords, int64(len(c.kvs)))
	}
	t.clFrom = c.next
	switch {
	case c.standby && c.done:
		// Caught up: the standby timer polls again.
	case !c.done:
		th.requestRestore(t, c.task)
	default:
		th.ctx.Record(engine.Event{Kind: th.startKind(c.task), ID: int64(c.task), Value: int64(th.ctx.Now() - t.restoreBegan), Bytes: t.restored, Note: "from=" + t.from})
		th.running(t)
	}
}

func (th *thread) running(t *task) {
	t.state = tsRunning
	if t.src != nil {
		th.armPoll(0)
	} else {
		th.refetch()
	}
}

func (th *thread) statefulTasks() int {
	n := 0
	for _, t := range th.tasks {
		if t != nil && t.store != nil {
			n++
		}
	}
	return n
}

// resend: a new broker after a master crash lost every request in flight.
func (th *thread) resend() {
	if th.inflight != nil {
		th.send(kProduce, th.inflight.bytes, th.inflight)
	}
	switch r := th.offReq.(type) {
	case txnOffsets:
		th.send(kTxnOffsets, requestBytes, r)
	case endTxn:
		th.send(kEndTxn, requestBytes, r)
	case *offsetCommit:
		th.send(kOffsetCommit, requestBytes, r)
	}
	th.fetching = false
	for id, t := range th.tasks {
		if t == nil {
			continue
		}
		switch t.state {
		case tsOffsets:
			th.send(kOffsetFetch, requestBytes, offsetFetch{thread: th.idx, task: taskID(id)})
		case tsRestoring:
			th.requestRestore(t, taskID(id))
		}
	}
	for id, t := range th.standby {
		if t != nil {
			th.requestRestore(t, taskID(id))
		}
	}
	if !th.ready {
		th.start()
	}
	th.fetch()
}
