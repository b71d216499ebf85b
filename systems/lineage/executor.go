package lineage

import (
	"ftbench/engine"
	"ftbench/systems/internal/stream"
)

// chunk is the longest CPU slice a task burns before the executor looks at
// its inbox. Spark serves shuffle fetches on separate (netty) threads while
// task threads compute; a one-CPU process gets the same effect by burning a
// task's CPU in slices and handling fetch requests, pushes and cancels in
// between.
const chunk = 1 * engine.Millisecond

// Task phases.
const (
	phaseGather = iota // waiting for inputs
	phaseBurn          // charging the task's CPU
)

// executor is a single-core Spark executor: one task slot, a block manager
// holding the map outputs it computed (retained until the lineage is cut by
// a checkpoint), buckets pushed to it, and the state partitions it caches.
// A crash loses all of it.
type executor struct {
	e       *env
	idx     int
	ctx     engine.Ctx
	outputs map[outKey][][]rec
	inbox   map[inKey]*inboxEntry
	states  map[stKey][]stVer
	cur     *run
	queue   []*taskSpec
	writes  map[int64]*ckptAck // checkpoint writes in flight, by token
	store   retryingWriter     // the same writes, until durable
	gen     int64              // burn timer generation: stale timers are ignored
}

// run is the attempt in the slot.
type run struct {
	spec      *taskSpec
	phase     int
	blocks    [][][]rec // [j-from][q]
	have      [][]bool
	waiting   int
	waitOn    []int // outstanding inputs per executor
	state     []map[uint64]int64
	remaining engine.Time
	res       *taskResult
	outs      [][][]rec // per batch, buckets by next-stage partition
}

func newExecutor(e *env, idx int) *executor { return &executor{e: e, idx: idx} }

func (x *executor) Init(ctx engine.Ctx) {
	x.ctx = ctx
	x.outputs = map[outKey][][]rec{}
	x.inbox = map[inKey]*inboxEntry{}
	x.states = map[stKey][]stVer{}
	x.writes = map[int64]*ckptAck{}
}

func (x *executor) Handle(ctx engine.Ctx, from engine.ProcID, m engine.Msg) {
	x.ctx = ctx
	switch m.Kind {
	case kLaunch:
		sp := m.Body.(*taskSpec)
		if x.cur != nil {
			x.queue = append(x.queue, sp)
			return
		}
		x.start(sp)
	case kFetch:
		x.serve(from, m.Body.(*fetchReq))
	case kBlocks:
		x.received(m.Body.(*fetchResp))
	case kPush:
		x.pushed(m.Body.(*pushMsg))
	case kCancel:
		x.cancel(m.Val)
	case kLost:
		x.peerLost(int(m.Val))
	case kGC:
		x.gc(m.Body.(gcMsg))
	case engine.KindStoreFailed:
		x.store.failed(ctx, m.Val)
	case engine.KindStoreDone:
		x.store.done(m.Val)
		if a, ok := x.writes[m.Val]; ok {
			delete(x.writes, m.Val)
			x.ctx.Record(engine.Event{Kind: "snapshot_acked", ID: m.Val, Value: a.ver})
			x.ctx.Send(x.e.driver, ctrl(kCkpt, refBytes, a))
		}
	}
}

func (x *executor) Timer(ctx engine.Ctx, id int64) {
	x.ctx = ctx
	if id == timerStoreRetry {
		x.store.fire(ctx)
		return
	}
	if r := x.cur; r != nil && r.phase == phaseBurn && id == x.gen {
		x.burn()
	}
}

// start gathers the attempt's inputs: its state partition (cached here,
// fetched from its holder, or read from the checkpoint) and, after a
// shuffle, the buckets of every map output for its partition (pushed here
// by the map tasks, local, or fetched from the executors holding them).
func (x *executor) start(sp *taskSpec) {
	r := &run{spec: sp, waitOn: make([]int, len(x.e.execs))}
	x.cur = r
	refs := make([][]blockRef, len(x.e.execs))
	switch sp.state {
	case stateEmpty:
		r.state = newStates(x.e, sp.s)
	case stateCkpt:
		v, ok := x.ctx.Store().Get(ckptKey(sp.s, sp.part, sp.stVer))
		if !ok {
			x.fail(blockRef{state: true, s: int32(sp.s), part: int32(sp.part), j: sp.stVer, exec: -1})
			return
		}
		r.state = copyStates(v.([]map[uint64]int64))
	case stateMem:
		ref := blockRef{state: true, s: int32(sp.s), part: int32(sp.part), j: sp.stVer, exec: sp.stExec}
		if int(sp.stExec) == x.idx {
			v := x.stateAt(ref)
			if v == nil {
				x.fail(ref)
				return
			}
			r.state = copyStates(v)
		} else {
			refs[sp.stExec] = append(refs[sp.stExec], ref)
			r.waitOn[sp.stExec]++
			r.waiting++
		}
	}
	if sp.s > 0 {
		r.blocks = make([][][]rec, len(sp.in))
		r.have = make([][]bool, len(sp.in))
		for jj, locs := range sp.in {
			j := sp.from + int64(jj)
			r.blocks[jj] = make([][]rec, len(locs))
			r.have[jj] = make([]bool, len(locs))
			for q, loc := range locs {
				ref := blockRef{s: int32(sp.s - 1), part: int32(q), r: int32(sp.part), j: j, exec: loc}
				switch {
				case sp.pushed != nil && sp.pushed[jj][q]:
					if in := x.inbox[inKey{ref.s, ref.r, j}]; in != nil && in.have[q] {
						r.blocks[jj][q], r.have[jj][q] = in.blocks[q], true
					} else {
						r.waitOn[loc]++
						r.waiting++
					}
				case int(loc) == x.idx:
					out, ok := x.outputs[outKey{ref.s, ref.part, j}]
					if !ok {
						x.fail(ref)
						return
					}
					r.blocks[jj][q], r.have[jj][q] = out[sp.part], true
				default:
					refs[loc] = append(refs[loc], ref)
					r.waitOn[loc]++
					r.waiting++
				}
			}
		}
	}
	for ex, rs := range refs {
		if len(rs) > 0 {
			x.ctx.Send(x.e.execs[ex], ctrl(kFetch, int64(len(rs))*refBytes, &fetchReq{attempt: sp.attempt, refs: rs}))
		}
	}
	if r.waiting == 0 {
		x.compute()
	}
}

// compute runs the task's pipeline in Go at once (the result is a pure
// function of the inputs) and then charges its CPU in chunks; nothing is
// published before the CPU has been spent, so a crash meanwhile loses it.
func (x *executor) compute() {
	r, sp := x.cur, x.cur.spec
	n := int(sp.to - sp.from + 1)
	p := newPipeline(x.e, sp.s, r.state, sp.emit)
	res := &taskResult{attempt: sp.attempt, exec: x.idx, cpu: make([]engine.Time, n)}
	if sp.emit {
		res.effects = make([][]rec, n)
	}
	r.outs = make([][][]rec, n)
	for jj := 0; jj < n; jj++ {
		p.batch()
		if sp.s == 0 {
			res.records += p.source(sp.part, sp.src[jj][0], sp.src[jj][1])
		} else {
			res.records += p.shuffled(r.blocks[jj])
			r.blocks[jj] = nil
		}
		res.cpu[jj] = p.cpu
		r.outs[jj] = p.buckets
		if sp.emit {
			res.effects[jj] = p.effects
		}
	}
	// The launch overhead is paid once per task: a recovery chain over k
	// batches pays it once where the original batches paid it k times.
	res.cpu[0] += x.e.cfg.overhead
	if r.state != nil {
		res.keys = stateKeys(r.state)
		if sp.checkpoint {
			res.ckpt = stream.StateBytes(res.keys)
			res.cpu[n-1] += engine.Time(res.ckpt) * x.e.stateCost(sp.s).SerdePerByte
		}
	}
	for _, c := range res.cpu {
		r.remaining += c
	}
	r.res, r.phase = res, phaseBurn
	x.burn()
}

func (x *executor) burn() {
	r := x.cur
	d := min(r.remaining, chunk)
	x.ctx.Work(d)
	x.ctx.Count("lineage.executor_busy_ns", int64(d))
	r.remaining -= d
	if r.remaining > 0 {
		// 1 ns, not 0: a timer due at the slice's end would run before the
		// messages that arrived during the slice.
		x.gen++
		x.ctx.After(1, x.gen)
		return
	}
	x.publish()
}

// publish makes the task's outputs available: map outputs are retained
// until the next checkpoint (they are the lineage's shuffle files), buckets
// are pushed to the executors that will reduce them, the new state version
// is cached, and a checkpoint batch's state is written to durable storage.
func (x *executor) publish() {
	r, sp := x.cur, x.cur.spec
	if sp.s < x.e.last() {
		for jj, b := range r.outs {
			x.outputs[outKey{int32(sp.s), int32(sp.part), sp.from + int64(jj)}] = b
		}
		if sp.dests != nil {
			x.push(sp, r.outs[0])
		}
	}
	if r.state != nil {
		x.putState(stKey{int32(sp.s), int32(sp.part)}, stVer{ver: sp.to, maps: r.state})
		if sp.checkpoint {
			// Asynchronous, as D-Streams checkpoints: the slot is free at
			// once and the driver hears when the write is durable. A crash
			// before that loses the write, and that checkpoint never
			// completes.
			x.writes[sp.attempt] = &ckptAck{s: sp.s, part: sp.part, ver: sp.to, bytes: r.res.ckpt}
			// snapshot_write ... snapshot_acked (by attempt) is the window in
			// which a crash of this executor loses the write (torture's
			// coverage).
			x.ctx.Record(engine.Event{Kind: "snapshot_write", ID: sp.attempt, Value: sp.to, Bytes: r.res.ckpt})
			x.store.put(x.ctx, ckptKey(sp.s, sp.part, sp.to), r.state, r.res.ckpt, sp.attempt)
		}
	}
	x.finish(r.res)
}

func (x *executor) finish(res *taskResult) {
	size := int64(resultBytes)
	for _, e := range res.effects {
		size += blockBytes(e)
	}
	x.ctx.Send(x.e.driver, ctrl(kResult, size, res))
	x.cur = nil
	x.gen++
	if len(x.queue) > 0 {
		sp := x.queue[0]
		x.queue = x.queue[1:]
		x.start(sp)
	}
}

func (x *executor) fail(ref blockRef) {
	x.finish(&taskResult{attempt: x.cur.spec.attempt, exec: x.idx, status: statusFetchFailed, failed: ref})
}

func (x *executor) cancel(attempt int64) {
	if r := x.cur; r != nil && r.spec.attempt == attempt {
		x.finish(&taskResult{attempt: attempt, exec: x.idx, status: statusCancelled})
		return
	}
	for i, sp := range x.queue {
		if sp.attempt == attempt {
			x.queue = append(x.queue[:i], x.queue[i+1:]...)
			x.ctx.Send(x.e.driver, ctrl(kResult, resultBytes, &taskResult{attempt: attempt, exec: x.idx, status: statusCancelled}))
			return
		}
	}
}

// peerLost fails the attempt if it still waits for an input from the lost
// executor: Spark's FetchFailed, which sends the driver back to the lineage.
func (x *executor) peerLost(y int) {
	r := x.cur
	if r == nil || r.phase != phaseGather || r.waitOn[y] == 0 {
		return
	}
	sp := r.spec
	if sp.state == stateMem && int(sp.stExec) == y && r.state == nil {
		x.fail(blockRef{state: true, s: int32(sp.s), part: int32(sp.part), j: sp.stVer, exec: int32(y)})
		return
	}
	for jj, locs := range sp.in {
		for q, loc := range locs {
			if int(loc) == y && !r.have[jj][q] {
				x.fail(blockRef{s: int32(sp.s - 1), part: int32(q), r: int32(sp.part), j: sp.from + int64(jj), exec: loc})
				return
			}
		}
	}
}
