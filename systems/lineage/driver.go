package lineage

import (
	"slices"

	"ftbench/engine"
	"ftbench/workloads"
)

// Driver timers.
const (
	timerCut int64 = iota + 1
	timerSpeculate
	timerExecutorsUp // a new driver's executors are registered (takeover.go)
)

// pipelineDepth is how many batches may run at once. D-Streams' timestep
// pipelining lets the next batch's tasks start while the current batch's
// last tasks finish; commits stay in batch order. Without it every stage
// barrier and straggler idles the executors, and a backlog drains slower
// than the cluster's spare capacity allows.
const pipelineDepth = 2

// speculationInterval is how often the driver looks for stragglers
// (spark.speculation.interval).
const speculationInterval = 100 * engine.Millisecond

// driverTaskCPU is the driver's CPU to schedule one task attempt (pick an
// executor, serialise the task). It is small next to the executors'
// --task-overhead, but it is serial: it is what limits a single driver's
// task rate.
const driverTaskCPU = 50 * engine.Microsecond

type execInfo struct {
	alive bool
	busy  *attempt
	upAt  engine.Time // last restart the driver heard of
	epoch int         // losses so far: tells incarnations apart
}

type attempt struct {
	id     int64
	t      *task
	exec   int
	start  engine.Time
	spec   *taskSpec
	epochs []int // every executor's epoch at launch
}

type task struct {
	id       int64
	s, part  int
	from, to int64
	job      *job      // the job of batch from (== to); nil for recovery tasks
	rec      *recovery // a recomputation task; nil for job tasks
	pref     int       // preferred executor (-1: any)
	pinned   bool      // may only run on pref (upstream: fixed ownership)
	attempts []*attempt
	done     bool
	dur      engine.Time
}

// outSet locates one stage's map outputs of one batch.
type outSet struct {
	loc     []int32 // executor holding partition q's output; -1 = missing
	missing int
	dests   [][]int32 // where the winning attempt of q pushed its buckets (running job only)
}

type stLoc struct {
	exec int32 // -1: lost (or never computed)
	ver  int64 // last batch folded into it
}

type batch struct {
	id      int64
	cutAt   engine.Time
	lo, hi  []int64 // offset range per source partition, recorded before computing
	ready   bool    // the offset ranges are durable
	results [][]rec // sink effects per result partition, until committed
	done    bool
}

type job struct {
	b        *batch
	tasks    [][]*task
	left     int
	startAt  engine.Time
	cpu      engine.Time
	finished bool
}

// ckptState tracks one checkpoint batch's writes.
type ckptState struct {
	durable [][]bool // per stage, per partition (keyed stages only)
	left    int
	bytes   int64
}

// driver is Spark's driver with the streaming JobGenerator: it cuts batches,
// keeps the lineage (block locations, state versions, the checkpoint),
// schedules tasks and commits each batch's output atomically.
type driver struct {
	e       *env
	ctx     engine.Ctx
	ex      []execInfo
	batches []*batch
	jobs    []*job // running or awaiting commit, in batch order
	nextJob int64
	commit  bool  // a commit record is being written
	last    int64 // last batch whose job started
	ckpt    int64 // last complete checkpoint; -1: none
	outs    []map[int64]*outSet
	work    []map[int64][]engine.Time // CPU of (stage, batch, partition) since the checkpoint
	state   [][]stLoc
	owner0  []int // executor owning each source partition's map tasks
	ownerR  []int // executor owning each later-stage partition
	pending []*task
	atts    map[int64]*attempt
	nextID  int64
	recs    []*recovery
	ckpts   map[int64]*ckptState // checkpoint batches not yet complete
	store   retryingWriter       // the batch log and commit records, until durable
	down    map[int]bool         // workers known to be down
	meta    metaLog              // the driver's metadata checkpoint (takeover.go)
}

func newDriver(e *env) *driver { return &driver{e: e} }

// Init starts the driver. An Init after time 0 is a new driver after a
// master crash: it recovers the job from the store (takeover.go).
func (d *driver) Init(ctx engine.Ctx) {
	d.ctx = ctx
	e := d.e
	d.down = map[int]bool{}
	d.meta = metaLog{durable: driverMeta{ckpt: -1, base: -1}}
	d.ex = make([]execInfo, len(e.execs))
	for i := range d.ex {
		d.ex[i].alive = true
	}
	d.ckpt, d.last = -1, -1
	d.atts = map[int64]*attempt{}
	d.ckpts = map[int64]*ckptState{}
	d.outs = make([]map[int64]*outSet, len(e.stages))
	d.work = make([]map[int64][]engine.Time, len(e.stages))
	d.state = make([][]stLoc, len(e.stages))
	for s := range e.stages {
		d.outs[s] = map[int64]*outSet{}
		d.work[s] = map[int64][]engine.Time{}
		if e.stages[s].keyed {
			d.state[s] = make([]stLoc, e.parts[s])
			for p := range d.state[s] {
				d.state[s][p] = stLoc{exec: -1, ver: -1}
			}
		}
	}
	d.owner0 = make([]int, e.parts[0])
	for p := range d.owner0 {
		d.owner0[p] = p % e.workers
	}
	d.ownerR = make([]int, e.cfg.shuffle)
	for r := range d.ownerR {
		d.ownerR[r] = r % e.workers
	}
	if ctx.Now() > 0 {
		d.takeOver()
	} else {
		ctx.After(e.cfg.interval, timerCut)
	}
	if e.cfg.speculate {
		ctx.After(speculationInterval, timerSpeculate)
	}
}

func (d *driver) Handle(ctx engine.Ctx, _ engine.ProcID, m engine.Msg) {
	d.ctx = ctx
	switch m.Kind {
	case engine.KindFailure:
		d.onFailure(m.Body.(engine.Failure))
	case engine.KindWorkerUp:
		d.onWorkerUp(int(m.Val))
	case engine.KindStoreFailed:
		d.store.failed(ctx, m.Val)
	case engine.KindStoreDone:
		d.store.done(m.Val)
		if m.Val == tokenMeta {
			d.metaWritten()
			return
		}
		b := m.Val >> 1
		if m.Val&1 == 0 {
			d.batches[b].ready = true
			d.maybeStart()
		} else {
			d.committed(b)
		}
	case kResult:
		d.onResult(m.Body.(*taskResult))
	case kCkpt:
		d.onCkpt(m.Body.(*ckptAck))
	}
}

func (d *driver) Timer(ctx engine.Ctx, id int64) {
	d.ctx = ctx
	switch id {
	case timerCut:
		d.cut()
	case timerStoreRetry:
		d.store.fire(ctx)
	case timerSpeculate:
		d.speculate()
		ctx.After(speculationInterval, timerSpeculate)
	case timerExecutorsUp:
		d.executorsUp()
	}
}

// cut closes batch b at time (b+1)*interval: its input is everything
// appended since the previous cut. The offset ranges are written to durable
// storage before the batch may run, so the batch can always be replayed.
//
// The ranges end at each partition's latest offset, which the driver asks
// the partition's leader for (DirectKafkaInputDStream.latestOffsets); while
// a partition is down (source-down) that request fails and is retried, so
// the cut, and every batch after it, waits until the partition is back and
// then takes what all partitions have appended by then.
func (d *driver) cut() {
	now := d.ctx.Now()
	P := d.e.parts[0]
	wait := now
	for p := 0; p < P; p++ {
		if down, until := workloads.SourceDown(d.ctx, d.e.log, int32(p)); down {
			wait = max(wait, until)
		}
	}
	if wait > now {
		d.ctx.After(wait-now, timerCut)
		return
	}
	b := &batch{id: int64(len(d.batches)), cutAt: now, lo: make([]int64, P), hi: make([]int64, P)}
	ranges := make([][2]int64, P)
	var n int64
	for p := 0; p < P; p++ {
		if b.id > 0 {
			b.lo[p] = d.batches[b.id-1].hi[p]
		}
		b.hi[p] = d.e.log.Appended(now)
		ranges[p] = [2]int64{b.lo[p], b.hi[p]}
		n += b.hi[p] - b.lo[p]
	}
	d.batches = append(d.batches, b)
	d.store.put(d.ctx, batchKey(b.id), ranges, int64(16*P+16), b.id<<1)
	d.ctx.Record(engine.Event{Kind: evBatchCut, ID: b.id, Value: n})
	next := engine.Time(b.id+2) * d.e.cfg.interval
	d.ctx.After(max(next-now, 0), timerCut)
}

// maybeStart starts ready batches in order while fewer than pipelineDepth
// are in flight, so a slow batch delays the ones behind it (scheduling
// delay).
func (d *driver) maybeStart() {
	for d.running() < pipelineDepth && d.nextJob < int64(len(d.batches)) && d.batches[d.nextJob].ready {
		d.startJob(d.batches[d.nextJob])
		d.nextJob++
	}
}

// running counts the jobs still computing (not those awaiting their commit).
func (d *driver) running() int {
	n := 0
	for _, jb := range d.jobs {
		if !jb.finished {
			n++
		}
	}
	return n
}

func (d *driver) startJob(b *batch) {
	e := d.e
	jb := &job{b: b, tasks: make([][]*task, len(e.stages)), startAt: d.ctx.Now()}
	for s := range e.stages {
		if s < e.last() {
			d.outs[s][b.id] = newOutSet(e.parts[s])
		}
		d.work[s][b.id] = make([]engine.Time, e.parts[s])
		for part := 0; part < e.parts[s]; part++ {
			t := d.newTask(s, part, b.id, b.id)
			t.job, t.pref, t.pinned = jb, d.prefFor(s, part), e.cfg.upstream
			jb.tasks[s] = append(jb.tasks[s], t)
			d.pending = append(d.pending, t)
		}
		jb.left += e.parts[s]
	}
	b.results = make([][]rec, e.parts[e.last()])
	if e.isCheckpoint(b.id) {
		cs := &ckptState{durable: make([][]bool, len(e.stages))}
		for s := range e.stages {
			if e.stages[s].keyed {
				cs.durable[s] = make([]bool, e.parts[s])
				cs.left += e.parts[s]
			}
		}
		d.ckpts[b.id] = cs
	}
	d.jobs = append(d.jobs, jb)
	d.last = b.id
	d.ctx.Record(engine.Event{Kind: "job_start", ID: b.id, Value: int64(jb.startAt - b.cutAt)})
	if e.stateful() {
		d.ctx.Record(engine.Event{Kind: "lineage_length", ID: b.id, Value: b.id - d.ckpt})
	}
	d.schedule()
}

func newOutSet(n int) *outSet {
	os := &outSet{loc: make([]int32, n), missing: n, dests: make([][]int32, n)}
	for i := range os.loc {
		os.loc[i] = -1
	}
	return os
}

func (d *driver) newTask(s, part int, from, to int64) *task {
	d.nextID++
	return &task{id: d.nextID, s: s, part: part, from: from, to: to, pref: -1}
}

// prefFor is where a job task would rather run: where its state partition
// is cached, else the partition's owner.
func (d *driver) prefFor(s, part int) int {
	if d.e.stages[s].keyed {
		if st := d.state[s][part]; d.alive(st.exec) {
			return int(st.exec)
		}
	}
	if s == 0 {
		return d.owner0[part]
	}
	return d.ownerR[part]
}

func (d *driver) alive(x int32) bool { return x >= 0 && d.ex[x].alive }

// jobSucceeded books a job task's result.
func (d *driver) jobSucceeded(t *task, res *taskResult) {
	jb := t.job
	jb.left--
	for _, c := range res.cpu {
		jb.cpu += c
	}
	if t.s == d.e.last() {
		jb.b.results[t.part] = res.effects[0]
	}
	if jb.left > 0 {
		return
	}
	b := jb.b
	now := d.ctx.Now()
	d.ctx.Record(engine.Event{Kind: "job_done", ID: b.id, Value: int64(now - jb.startAt)})
	d.ctx.Record(engine.Event{Kind: "batch_cpu", ID: b.id, Value: int64(jb.cpu)})
	jb.finished = true
	d.commitNext()
	d.maybeStart()
}

// commitNext writes the commit record of the oldest batch once it is
// computed. The output commit is one durable record keyed by the batch id:
// the batch's effects become visible together, once, when it is durable,
// and batches commit in order. The record keeps the batch's offset ranges,
// which a new driver needs to recompute the state since the checkpoint
// (takeover.go).
func (d *driver) commitNext() {
	if d.commit || len(d.jobs) == 0 || !d.jobs[0].finished {
		return
	}
	d.commit = true
	b := d.jobs[0].b
	d.store.put(d.ctx, commitKey(b.id), b.ranges(), int64(16*len(b.lo)+16), b.id<<1|1)
}

// committed makes batch b's effects visible. A batch commits at most once
// however often its partitions were computed: that, with replayable input
// and deterministic recomputation, is the exactly-once argument (seed
// 21.3.3).
func (d *driver) committed(id int64) {
	b := d.batches[id]
	if b.done {
		return
	}
	b.done = true
	// The batch log record goes in the same step as the effects become
	// visible, which no crash can split: a new driver finds it exactly for
	// the batches whose output is not visible yet (takeover.go).
	d.ctx.Store().Delete(batchKey(id))
	for _, effs := range b.results {
		for i := range effs {
			r := &effs[i]
			d.ctx.Commit(engine.Commit{ID: engine.EffectID{Part: r.part, Sub: r.sub, Off: r.off}, Key: r.key, Value: r.val, Born: d.e.log.BornAt(r.off)})
		}
	}
	b.results = nil
	d.ctx.Record(engine.Event{Kind: evBatchCommitted, ID: id, Value: int64(d.ctx.Now() - b.cutAt)})
	d.jobs = d.jobs[1:]
	d.maybeCheckpointed(id)
	for s := range d.outs {
		if os := d.outs[s][id]; os != nil {
			os.dests = nil
		}
	}
	d.broadcast(kGC, 0, gcMsg{committed: id, ckpt: d.ckpt})
	if !d.e.stateful() && (id+1)%int64(d.e.cfg.ckptEvery) == 0 {
		// Nothing to checkpoint but the progress: a new driver need not
		// look at the batches before this one.
		d.writeMeta(driverMeta{ckpt: -1, base: id, hi: slices.Clone(b.hi)})
	}
	d.commit = false
	d.commitNext()
	d.maybeStart()
}

// onCkpt books a durable checkpoint write.
func (d *driver) onCkpt(a *ckptAck) {
	cs := d.ckpts[a.ver]
	if cs == nil || cs.durable[a.s][a.part] {
		return
	}
	cs.durable[a.s][a.part] = true
	cs.left--
	cs.bytes += a.bytes
	d.maybeCheckpointed(a.ver)
}

// maybeCheckpointed completes checkpoint c once every state partition of c
// is durable and c is committed: every earlier batch is then committed too,
// so nothing still running needs the lineage before c.
func (d *driver) maybeCheckpointed(c int64) {
	cs := d.ckpts[c]
	if cs == nil || cs.left > 0 || !d.batches[c].done {
		return
	}
	delete(d.ckpts, c)
	if c > d.ckpt {
		d.checkpointed(c, cs.bytes)
	}
}

// checkpointed cuts the lineage at batch c: its state RDDs are durable, so
// the map outputs and recovery chains before it are forgotten and the
// previous checkpoint is deleted.
func (d *driver) checkpointed(c int64, bytes int64) {
	old := d.ckpt
	d.ckpt = c
	if old >= 0 {
		// Its files go once a newer checkpoint is in the durable metadata
		// (metaWritten): until then a new driver would restore from it.
		d.meta.stale = append(d.meta.stale, old)
	}
	d.writeMeta(driverMeta{ckpt: c, base: c, hi: slices.Clone(d.batches[c].hi)})
	for b := range d.ckpts {
		if b <= c {
			delete(d.ckpts, b) // an older checkpoint that lost a write: never needed now
		}
	}
	for s := range d.e.stages {
		for j := old + 1; j <= c; j++ {
			delete(d.outs[s], j)
			delete(d.work[s], j)
		}
	}
	keep := d.pending[:0]
	for _, t := range d.pending {
		if t.rec != nil && t.to <= c {
			t.done = true // obsolete: nothing before the checkpoint is needed
			d.recoveryTaskDone(t)
			continue
		}
		if t.rec != nil && t.from <= c {
			t.from = c + 1 // the chain restarts from the new checkpoint
		}
		keep = append(keep, t)
	}
	d.pending = keep
	d.ctx.Count("lineage.checkpoints", 1)
	d.ctx.Count("lineage.checkpoint_bytes", bytes)
	d.ctx.Record(engine.Event{Kind: evCheckpointDone, ID: c, Bytes: bytes})
}

func (d *driver) broadcast(kind uint16, val int64, body any) {
	for i, x := range d.ex {
		if x.alive {
			m := ctrl(kind, refBytes, body)
			m.Val = val
			d.ctx.Send(d.e.execs[i], m)
		}
	}
}

// The driver's milestones (Milestones): a batch cut, a batch committed, a
// metadata checkpoint done.
const (
	evBatchCut       = "batch_cut"
	evBatchCommitted = "batch_committed"
	evCheckpointDone = "checkpoint_done"
)
