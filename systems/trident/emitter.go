package trident

import (
	"strconv"

	"ftbench/engine"
	"ftbench/systems/internal/storm"
	"ftbench/systems/internal/stream"
	"ftbench/workloads"
)

// span is the emitter metadata of one batch of one partition: the source
// offsets [from, to) it holds (what the Kafka Trident emitters store per
// txid).
type span struct{ from, to int64 }

// job is a batch the emitter was asked for: its attempt, the batch tuple
// it anchors its tuples on, the records to emit and how far it got.
type job struct {
	tx    txAttempt
	start engine.Time // when the coordinator started the attempt
	in    storm.Input
	offs  []int64 // non-transactional: the offsets, replays first
	sp    span    // otherwise: the span
	next  int     // records emitted so far
	sent  []int64 // tuples sent to each task of the next stage
}

// emitter is one partition's Trident spout emitter, one of three kinds
// (--spout):
//
//   - transactional (PartitionedTridentSpoutExecutor with a
//     RotatingTransactionalState): a txid's span is decided once, written
//     to the durable store before any of it is emitted, and read back for
//     every later attempt of that txid, so a replay is the same batch;
//   - opaque (OpaquePartitionedTridentSpoutExecutor, a committer): a
//     batch starts where the previous txid's batch ended (the stored
//     metadata of the last committed txid, or the batch this incarnation
//     emitted before) and takes what the partition has then; its span is
//     stored only when its commit tuple arrives, so a replay may carry more
//     records than the failed attempt;
//   - non-transactional (RichSpoutBatchExecutor over a Kafka spout): a
//     batch is the replays of failed tuples and then new records; a
//     replayed txid gets its old tuples failed back to the spout, which
//     emits them again later; the spout persists its lowest unacknowledged
//     offset every offset-commit-interval and a restart resumes there, so
//     a crash re-emits what was already committed downstream.
//
// Every batch takes the records appended up to the coordinator's start of
// the attempt (at most max-batch-records), so a replay of an opaque batch
// extends the failed attempt's records and never reorders them.
type emitter struct {
	t      *topo
	part   int32
	router *stream.Router
	col    storm.Collector
	next   []engine.ProcID       // the first stage's tasks
	index  map[engine.ProcID]int // position in next
	jobs   []*job                // batches to emit, in arrival order
	busy   bool                  // a poll timer is set
	// writing: the job at the head waits for its metadata write.
	writing bool
	token   int64
	scratch []engine.ProcID

	metas map[int64]span // spans of txids this incarnation knows
	// opaque: the last committed txids' spans, as stored.
	spans []txSpan
	// non-transactional: per txid the offsets emitted; replays to emit
	// first; acknowledgement bookkeeping as stormack's spout.
	ids       map[int64][]int64
	replays   []int64
	nextOff   int64
	base      int64
	acked     []bool
	committed int64
	storing   bool
	// opaque: commit tuples waiting for their metadata write, by token.
	commits map[int64]storm.Input
}

const (
	tickEmit = iota + 1
	tickOffsetCommit
)

// emitChunk is how many records one emit timer sends, so backpressure can
// stop the emitter inside a batch.
const emitChunk = 32

// keptSpans is how many committed txids' spans an opaque emitter stores.
const keptSpans = 3

func newEmitter(t *topo, i int) *emitter {
	e := &emitter{
		t: t, part: int32(i), router: t.g.Router(-1, i), col: storm.Collector{Ackers: t.ackers},
		metas: map[int64]span{}, ids: map[int64][]int64{}, commits: map[int64]storm.Input{},
	}
	e.next, e.index = t.downstream(-1)
	return e
}

func (e *emitter) key(what string) string {
	return "trident/" + what + "/" + strconv.Itoa(int(e.part))
}

func (e *emitter) Init(ctx engine.Ctx) {
	switch e.t.spout {
	case spoutOpaque:
		if v, ok := ctx.Store().Get(e.key("opaque")); ok {
			for _, m := range v.([]txSpan) {
				e.spans = append(e.spans, m)
				e.metas[m.txid] = m.sp
			}
			ctx.Count(cEmitterRestarts, 1)
		}
	case spoutNonTransactional:
		if v, ok := ctx.Store().Get(e.key("offset")); ok {
			e.committed = v.(int64)
			ctx.Count(cEmitterRestarts, 1)
		}
		e.nextOff, e.base = e.committed, e.committed
		ctx.After(e.t.commitEvery, tickOffsetCommit)
	}
}

// txSpan is an opaque emitter's durable metadata for one committed txid:
// its span. The emitter keeps the last few (Storm's RotatingTransactionalState
// keeps a window of txids), because a replay of the txid it committed last
// (the coordinator had not yet stored its own commit) starts where the one
// before ended.
type txSpan struct {
	txid int64
	sp   span
}

func (e *emitter) Handle(ctx engine.Ctx, _ engine.ProcID, m engine.Msg) {
	switch m.Kind {
	case kindBatch:
		b := m.Body.(*txMsg)
		e.batch(ctx, b)
	case kindCommit:
		e.commit(ctx, m.Body.(*txMsg))
	case kindSuccess:
		e.success(ctx, int64(m.Key))
	case engine.KindStoreDone, engine.KindStoreFailed:
		e.stored(ctx, m)
	}
}

// stored handles a store write's completion or failure: the
// non-transactional spout's offset commit, a transactional batch's span
// (the batch may go out; if the write failed it is not emitted, times out
// at the coordinator and is replayed), an opaque commit (acked once
// durable, failed otherwise).
func (e *emitter) stored(ctx engine.Ctx, m engine.Msg) {
	ok := m.Kind == engine.KindStoreDone
	if key, _ := m.Body.(string); key == e.key("offset") {
		e.storing = false
		if ok {
			e.committed = max(e.committed, m.Val)
		}
		return
	}
	if in, found := e.commits[m.Val]; found {
		delete(e.commits, m.Val)
		if ok {
			e.col.Ack(ctx, &in)
		} else {
			e.col.Fail(ctx, &in)
		}
		return
	}
	if m.Val == e.token && e.writing {
		e.writing = false
		if !ok {
			e.jobs = e.jobs[1:]
		}
		e.kick(ctx)
	}
}

// batch queues the batch tuple of b. A later attempt of a txid replaces
// any queued earlier one (downstream drops the old attempt anyway).
func (e *emitter) batch(ctx engine.Ctx, b *txMsg) {
	for i, j := range e.jobs {
		if j.tx.txid == b.tx.txid && i > 0 {
			e.jobs = append(e.jobs[:i], e.jobs[i+1:]...)
			break
		}
	}
	e.jobs = append(e.jobs, &job{tx: b.tx, start: b.at, in: storm.Input{Edges: b.edges}, sp: span{-1, -1}, sent: make([]int64, len(e.next))})
	e.kick(ctx)
}

func (e *emitter) kick(ctx engine.Ctx) {
	if !e.busy && !e.writing && len(e.jobs) > 0 {
		e.busy = true
		ctx.After(0, tickEmit)
	}
}

func (e *emitter) Timer(ctx engine.Ctx, id int64) {
	if id == tickOffsetCommit {
		e.commitOffset(ctx)
		ctx.After(e.t.commitEvery, tickOffsetCommit)
		return
	}
	e.busy = false
	if e.writing || len(e.jobs) == 0 {
		return
	}
	j := e.jobs[0]
	if j.sp.from < 0 && j.offs == nil {
		if e.needsPartition(j) && e.down(ctx) {
			// source-down: the batch cannot go out without this
			// partition's records (needsPartition). The emitter, and with
			// it every batch, waits until the partition is back.
			_, until := e.t.job.Log.Down(e.part, ctx.Now())
			e.busy = true
			ctx.After(until-ctx.Now(), tickEmit)
			return
		}
		if !e.plan(ctx, j) {
			e.jobs = e.jobs[1:] // cannot be emitted: it times out and is replayed
			e.kick(ctx)
			return
		}
		if e.writing {
			return // the metadata write's completion kicks the emitter
		}
	}
	e.emitSome(ctx, j)
}

// needsPartition reports whether j cannot be emitted without records of
// the emitter's partition, so that it waits while the partition is down:
//
//   - transactional: always. A txid's batch is exactly reproducible, so a
//     new txid's span needs the partition's latest offset and a replay its
//     records (trident-state.html: the transactional spout halts while a
//     partition is down).
//   - opaque: a replay whose failed attempt may have carried records of the
//     partition (it did, or this incarnation does not know: the span of an
//     uncommitted txid is not stored). That attempt may have been committed
//     at some state partitions; OpaqueMap re-applies a replayed txid to the
//     previous value only for the keys the replay carries, so an empty
//     replay would leave the other keys counting records that then come
//     again in a later txid. storm-kafka's TridentKafkaEmitter does emit
//     such a replay empty (emitNewPartitionBatch on a failed fetch):
//     docs/trident.md has the duplicates that follows. A new txid, or a
//     replay of an empty one, goes out without the partition (plan).
//   - non-transactional: never; it promises nothing.
func (e *emitter) needsPartition(j *job) bool {
	switch e.t.spout {
	case spoutTransactional:
		return true
	case spoutOpaque:
		if j.tx.attempt == 0 {
			return false
		}
		sp, known := e.metas[j.tx.txid]
		return !known || sp.to > sp.from
	}
	return false
}

// cut is the end of a batch from offset from whose attempt the coordinator
// started at at: every partition cuts at that instant, so a later attempt's
// extra records were all appended after every record of the earlier one.
func (e *emitter) cut(from int64, at engine.Time) int64 {
	to := max(from, e.t.job.Log.Appended(at))
	if e.t.maxBatch > 0 {
		to = min(to, from+int64(e.t.maxBatch))
	}
	return to
}

// plan decides the records of j (the emitter's emitBatch). It returns
// false when the batch cannot be emitted: the span of the previous txid is
// unknown to a transactional emitter, which only happens to a batch that
// overtook a replay and will itself be failed and replayed.
//
// While the partition is down (source-down) the opaque and
// non-transactional emitters fetch nothing and emit this partition's part
// of the batch empty, so the batch goes on without it: the opaque span
// starts and ends where the previous txid's ended (storm-kafka's
// TridentKafkaEmitter.emitNewPartitionBatch on a failed fetch) and its
// records go to a later batch; the non-transactional spout keeps its
// failed tuples for a later batch. (The transactional emitter waits
// instead: Timer.)
func (e *emitter) plan(ctx engine.Ctx, j *job) bool {
	txid := j.tx.txid
	down := !e.needsPartition(j) && e.down(ctx)
	switch e.t.spout {
	case spoutTransactional:
		if sp, ok := e.metas[txid]; ok {
			j.sp = sp
			return true
		}
		if v, ok := ctx.Store().Get(e.metaKey(txid)); ok && !mutantNoEmitterMeta {
			j.sp = v.(span)
			e.metas[txid] = j.sp
			return true
		}
		from := int64(0)
		if txid > 1 {
			prev, ok := e.metas[txid-1]
			if !ok {
				v, found := ctx.Store().Get(e.metaKey(txid - 1))
				if !found {
					return false
				}
				prev = v.(span)
			}
			from = prev.to
		}
		j.sp = span{from, e.cut(from, j.start)}
		e.metas[txid] = j.sp
		// The span is durable before any of the batch is emitted
		// (RotatingTransactionalState.getStateOrCreate writes it).
		e.writing = true
		e.token++
		ctx.Store().Put(e.metaKey(txid), j.sp, 16, e.token)
		ctx.Count(cStoreRoundTrips, 1)
	case spoutOpaque:
		// getPreviousState: the span of the latest txid before this one
		// that this incarnation emitted or that is stored.
		from, best := int64(0), int64(0)
		for tx, sp := range e.metas { // the maximum, whatever the order
			if tx < txid && tx > best {
				from, best = sp.to, tx
			}
		}
		j.sp = span{from, e.cut(from, j.start)}
		if down {
			j.sp.to = from
		}
		e.metas[txid] = j.sp
	case spoutNonTransactional:
		if old, ok := e.ids[txid]; ok {
			// A replayed txid: its tuples are failed back to the spout,
			// which emits them again (before new records).
			delete(e.ids, txid)
			e.replays = append(e.replays, old...)
		}
		if down {
			e.ids[txid] = nil
			j.offs = nil
			return true
		}
		end := e.cut(e.nextOff, j.start)
		offs := append([]int64(nil), e.replays...)
		e.replays = e.replays[:0]
		for o := e.nextOff; o < end; o++ {
			offs = append(offs, o)
		}
		e.nextOff = max(e.nextOff, end)
		for _, o := range offs {
			for e.base+int64(len(e.acked)) <= o {
				e.acked = append(e.acked, false)
			}
		}
		j.offs = offs
		e.ids[txid] = offs
	}
	return true
}

// down reports whether the emitter's partition cannot be read now
// (source-down), recording it when it cannot.
func (e *emitter) down(ctx engine.Ctx) bool {
	d, _ := workloads.SourceDown(ctx, e.t.job.Log, e.part)
	return d
}

func (e *emitter) metaKey(txid int64) string {
	return e.key("meta") + "/" + strconv.FormatInt(txid, 10)
}

// emitSome emits the next chunk of j's records; once all are out it sends
// each task of the first stage the count of the batch's tuples it got,
// anchored on the batch tuple, and acks the batch tuple.
func (e *emitter) emitSome(ctx engine.Ctx, j *job) {
	n := j.len()
	for k := 0; k < emitChunk && j.next < n; k++ {
		off := j.at(j.next)
		j.next++
		m := e.t.job.Workload.Record(e.part, off)
		m.Born = e.t.job.Log.BornAt(off)
		ctx.Work(ctx.Cost().SourceRecord)
		for _, to := range e.t.targets(-1, e.router, &m, &e.scratch) {
			ctx.Send(to, withTx(m, j.tx))
			j.sent[e.index[to]]++
			ctx.Count(cTuplesEmitted, 1)
		}
	}
	if j.next >= n {
		b := &tracked{tx: j.tx, coords: []*storm.Input{&j.in}, sent: j.sent}
		(&tracker{batches: map[int64]*tracked{j.tx.txid: b}}).finish(ctx, &e.col, b, e.next)
		e.jobs = e.jobs[1:]
	}
	e.kick(ctx)
}

func (j *job) len() int {
	if j.offs != nil {
		return len(j.offs)
	}
	return int(j.sp.to - j.sp.from)
}

func (j *job) at(k int) int64 {
	if j.offs != nil {
		return j.offs[k]
	}
	return j.sp.from + int64(k)
}

// commit is the opaque emitter's commit (it is a committer): the span it
// emitted for this txid becomes the stored metadata the next batch starts
// from. A restarted emitter that did not emit this attempt cannot commit
// it (Storm's cached metadata is gone): the commit fails and the batch is
// replayed.
func (e *emitter) commit(ctx engine.Ctx, b *txMsg) {
	in := storm.Input{Edges: b.edges}
	sp, ok := e.metas[b.tx.txid]
	if !ok {
		e.col.Fail(ctx, &in)
		return
	}
	e.spans = append(e.spans, txSpan{txid: b.tx.txid, sp: sp})
	if n := len(e.spans); n > keptSpans {
		e.spans = append([]txSpan(nil), e.spans[n-keptSpans:]...)
	}
	e.token++
	e.commits[e.token] = in
	ctx.Store().Put(e.key("opaque"), append([]txSpan(nil), e.spans...), int64(24*len(e.spans)), e.token)
	ctx.Count(cStoreRoundTrips, 1)
}

// success is the $success stream: txid is committed. The transactional and
// opaque emitters forget older spans; the non-transactional one acks the
// batch's tuples at its spout (the offsets its next commit may pass).
func (e *emitter) success(ctx engine.Ctx, txid int64) {
	for tx := range e.metas { // deleting in any order gives the same map
		if tx < txid {
			delete(e.metas, tx)
		}
	}
	offs, ok := e.ids[txid]
	if !ok {
		return
	}
	delete(e.ids, txid)
	ctx.Work(ctx.Cost().StateCPU)
	for _, o := range offs {
		if o >= e.base {
			e.acked[o-e.base] = true
		}
	}
	n := 0
	for n < len(e.acked) && e.acked[n] {
		n++
	}
	e.base += int64(n)
	e.acked = e.acked[n:]
}

// commitOffset persists the non-transactional spout's lowest
// unacknowledged offset (the Kafka spout's periodic commit).
func (e *emitter) commitOffset(ctx engine.Ctx) {
	if e.storing || e.base <= e.committed {
		return
	}
	e.storing = true
	ctx.Store().Put(e.key("offset"), e.base, 8, e.base)
	ctx.Count(cStoreRoundTrips, 1)
}
