package kstreams

import (
	"ftbench/engine"
	"ftbench/keyed"
	"ftbench/systems/internal/stream"
	"ftbench/workloads"
)

// Task states.
type taskState uint8

const (
	tsOffsets   taskState = iota // waiting for its committed offset (require_stable)
	tsRestoring                  // replaying its changelog
	tsRunning
)

// task is a StreamTask (or, standby set, a StandbyTask): one
// sub-topology's processors for one partition, with its state store. The
// store's updates are folded per key in the record cache (store.Changed)
// until a commit or an eviction flushes them to the changelog.
type task struct {
	id      taskID
	sub     *subTopology
	state   taskState
	standby bool
	ops     []*stream.Operator // one per non-sink stage of the sub-topology
	store   *stream.Operator   // the keyed stage's operator (ops[0]), nil when stateless
	src     *stream.SourceReader
	pos     int64 // next input offset
	// clFrom is where the store is consistent with the changelog: a
	// restore reads from there (0: from the start, a wiped store).
	clFrom int64
	// undo (KIP-892, --transactional-stores) holds each key's value before
	// the open transaction's first write, so an abort rolls the store
	// back instead of wiping it.
	undo map[uint64]undoVal

	restoreBegan engine.Time
	from         string // where its store comes from: changelog, standby or local
	restored     int64
	restoring    bool // a restore fetch outstanding
}

type undoVal struct {
	v   int64
	had bool
}

// newTask builds task id's processors; emit and sink hand their outputs
// to the thread.
func (th *thread) newTask(id taskID) *task {
	p := th.p
	sub := &p.subs[p.subOf(id)]
	t := &task{id: id, sub: sub}
	for k, si := range sub.stages {
		st := &p.plan.Stages[si]
		if st.Sink {
			break
		}
		k := k
		op := stream.NewOperator(st, func(m engine.Msg) { th.emit(t, k, m) })
		t.ops = append(t.ops, op)
		if st.Keyed() {
			t.store = op
			op.Changed = keyed.NewSet()
		}
	}
	if p.subOf(id) == 0 {
		t.src = &stream.SourceReader{W: p.w, Log: p.log, Part: int32(p.partOf(id))}
	}
	return t
}

// input runs one input record through the task's first processor.
func (th *thread) input(t *task, m engine.Msg) {
	if len(t.ops) == 0 {
		th.emit(t, -1, m)
		return
	}
	if t.store != nil && t.undo != nil {
		if _, ok := t.undo[m.Key]; !ok {
			v, had := t.store.State.Lookup(m.Key)
			t.undo[m.Key] = undoVal{v, had}
		}
	}
	th.octx[t.sub.stages[0]].Ctx = th.ctx
	t.ops[0].Process(&th.octx[t.sub.stages[0]], m)
	if t.store != nil && t.store.Changed.Len() > th.cachePerTask {
		// The record cache is full: evicted entries go to the changelog
		// now (modelled as flushing the task's dirty keys).
		th.flushCache(t)
	}
}

// emit hands processor k's output on: to processor k+1, to the sink
// (the output topic) or to the repartition topic of the next sub-topology.
func (th *thread) emit(t *task, k int, m engine.Msg) {
	p := th.p
	next := k + 1
	if next < len(t.ops) {
		si := t.sub.stages[next]
		th.octx[si].Ctx = th.ctx
		t.ops[next].Process(&th.octx[si], m)
		return
	}
	if next < len(t.sub.stages) { // the sink
		si := t.sub.stages[next]
		c := th.octx[si].c
		th.ctx.Work(p.plan.Stages[si].Cost(c, m) + c.SendCost(m.Size))
		th.output(stream.CommitOf(m))
		th.bufBytes += int64(c.WireBytes(m.Size))
		return
	}
	// Produce to the repartition topic read by sub-topology sub+1.
	sub := p.subOf(t.id) + 1
	c := th.srcCost // a sub-topology that only repartitions the source
	if last := t.lastStage(); last >= 0 {
		c = th.octx[last].c
	}
	th.ctx.Work(c.SendCost(m.Size))
	e := entryOf(m)
	switch t.sub.out {
	case workloads.Broadcast:
		for part := 0; part < p.parts; part++ {
			th.acc.add(sub, part, e)
		}
	case workloads.Rebalance:
		th.rr++
		th.acc.add(sub, th.rr%p.parts, e)
	default:
		th.acc.add(sub, stream.KeyPartition(m.Key, p.parts), e)
	}
	th.bufBytes += int64(c.WireBytes(m.Size))
	th.repBytes += int64(c.WireBytes(m.Size))
}

func (t *task) lastStage() int {
	if len(t.sub.stages) == 0 {
		return -1
	}
	return t.sub.stages[len(t.sub.stages)-1]
}

// flushCache writes the task's cached (dirty) keys to its changelog, in
// the order they were first dirtied since the last flush. NamedCache.flush
// writes them in the order they were last updated (its put moves a key to
// the end of dirtyKeys); the order within one flush moves no figure, since
// the changelog keeps each key's latest value and a restore replays them
// all, and keeping it costs a probe per record instead of one per key.
func (th *thread) flushCache(t *task) {
	if t.store == nil || t.store.Changed.Len() == 0 {
		return
	}
	keys := t.store.Changed.Keys()
	c := th.octx[t.sub.store].c
	acc := &th.acc
	if mutantChangelogAfterCommit && th.p.eos {
		acc = &th.late
	}
	sub, part := th.p.subOf(t.id), th.p.partOf(t.id)
	for _, k := range keys {
		v, _ := t.store.State.Lookup(k)
		th.ctx.Work(c.SendCost(16))
		acc.addKV(sub, part, stream.KV{Key: k, Val: v})
		th.bufBytes += int64(c.WireBytes(16))
	}
	th.ctx.Count(cChangelogBytes, int64(len(keys)*c.WireBytes(16)))
	t.store.Changed.Clear()
}

// opCtx is a thread's Ctx as one operator's processors see it: the
// operator's own cost model (--cost OP.NAME=VALUE), since a thread runs
// every operator of its tasks.
type opCtx struct {
	engine.Ctx
	c *engine.CostModel
}

func (o *opCtx) Cost() *engine.CostModel { return o.c }
