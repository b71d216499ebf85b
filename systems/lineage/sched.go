package lineage

import (
	"fmt"
	"sort"
	"strings"

	"ftbench/engine"
)

// Speculation thresholds (lecture 21.5 and the D-Streams paper: a copy of any
// task slower than 1.4x its stage's median; Spark waits for 75% of the
// stage and ignores tasks under 100 ms).
const (
	specMultiplier = 1.4
	specQuantile   = 0.75
	specMinRuntime = 100 * engine.Millisecond
)

// schedule gives every idle executor one task: one slot per executor.
func (d *driver) schedule() {
	for i := range d.ex {
		if !d.ex[i].alive || d.ex[i].busy != nil {
			continue
		}
		if t := d.pick(i); t != nil {
			d.launch(t, i)
		}
	}
}

// pick chooses executor i's next task, Spark's FIFO scheduler with
// locality wait 0: recomputations first (the oldest batch waits for them);
// then map tasks reading the source (they depend on nothing, and running
// the next batch's ahead of the current batch's last reduce tasks is what
// timestep pipelining buys: its shuffle is ready when the current batch
// ends); then the oldest job's tasks — one whose state partition is cached
// on i if there is one, else (parallel variant) any ready one, wherever its
// state lives. In the upstream variant every task is pinned to its owner.
func (d *driver) pick(i int) *task {
	for _, t := range d.pending {
		if t.rec != nil && (!t.pinned || t.pref == i) && d.ready(t) {
			return t
		}
	}
	if t := d.pickJob(i, func(t *task) bool { return t.s == 0 }); t != nil {
		return t
	}
	return d.pickJob(i, func(t *task) bool { return t.s > 0 })
}

// pickJob returns, among the pending job tasks that pass filter, executor
// i's own ready task of the oldest job that has one, or failing that (and
// not pinned) any ready task of that job; a steal from an older job beats
// a local task of a newer one. The pending queue is in creation order, so
// jobs come oldest first.
func (d *driver) pickJob(i int, filter func(*task) bool) *task {
	var steal *task
	var jb *job
	for _, t := range d.pending {
		if t.rec != nil || !filter(t) {
			continue
		}
		if t.job != jb {
			if steal != nil {
				return steal
			}
			jb = t.job
		}
		if t.pref != i && (steal != nil || t.pinned) {
			continue
		}
		if d.ready(t) {
			if t.pref == i {
				return t
			}
			steal = t
		}
	}
	return steal
}

// ready reports whether a task's inputs exist: its state at batch from-1
// (cached on a live executor, in the checkpoint, or empty at the start) and
// every map output of the previous stage for its batches.
func (d *driver) ready(t *task) bool {
	if d.e.stages[t.s].keyed && d.stateSource(t) == nil {
		return false
	}
	if t.s > 0 {
		for j := t.from; j <= t.to; j++ {
			if os := d.outs[t.s-1][j]; os == nil || os.missing > 0 {
				return false
			}
		}
	}
	return true
}

// stateSource says where task t reads its state from; nil if nowhere yet.
func (d *driver) stateSource(t *task) *taskSpec {
	if mutantNoReplay && t.rec != nil && t.from > d.ckpt+1 {
		// The mutant restores the checkpoint (or empty state) as if it
		// were the state just before t.from, skipping the batches between.
		if d.ckpt >= 0 {
			return &taskSpec{state: stateCkpt, stVer: d.ckpt}
		}
		return &taskSpec{state: stateEmpty}
	}
	if t.from == 0 {
		return &taskSpec{state: stateEmpty}
	}
	if st := d.state[t.s][t.part]; d.alive(st.exec) && st.ver == t.from-1 {
		return &taskSpec{state: stateMem, stExec: st.exec, stVer: st.ver}
	}
	if d.ckpt >= 0 && t.from-1 == d.ckpt {
		return &taskSpec{state: stateCkpt, stVer: d.ckpt}
	}
	return nil
}

func (d *driver) launch(t *task, i int) {
	d.nextID++
	a := &attempt{id: d.nextID, t: t, exec: i, start: d.ctx.Now()}
	a.spec = d.spec(t, a)
	if a.spec.dests != nil {
		a.epochs = make([]int, len(d.ex))
		for k := range d.ex {
			a.epochs[k] = d.ex[k].epoch
		}
	}
	if len(t.attempts) == 0 {
		for k, p := range d.pending {
			if p == t {
				d.pending = append(d.pending[:k], d.pending[k+1:]...)
				break
			}
		}
	}
	t.attempts = append(t.attempts, a)
	d.atts[a.id] = a
	d.ex[i].busy = a
	d.ctx.Work(driverTaskCPU)
	d.ctx.Count("lineage.tasks", 1)
	size := int64(specBytes) + 4*int64(len(a.spec.src)+len(a.spec.dests))
	for _, in := range a.spec.in {
		size += 4 * int64(len(in))
	}
	d.ctx.Send(d.e.execs[i], ctrl(kLaunch, size, a.spec))
}

// spec fills in the attempt's inputs and outputs from the current lineage.
func (d *driver) spec(t *task, a *attempt) *taskSpec {
	e := d.e
	sp := &taskSpec{attempt: a.id, s: t.s, part: t.part, from: t.from, to: t.to, recompute: t.rec != nil}
	if e.stages[t.s].keyed {
		src := d.stateSource(t)
		sp.state, sp.stExec, sp.stVer = src.state, src.stExec, src.stVer
	}
	for j := t.from; j <= t.to; j++ {
		if t.s == 0 {
			b := d.batches[j]
			sp.src = append(sp.src, [2]int64{b.lo[t.part], b.hi[t.part]})
			continue
		}
		os := d.outs[t.s-1][j]
		sp.in = append(sp.in, append([]int32(nil), os.loc...))
		var pushed []bool
		for q := range os.loc {
			if os.dests != nil && os.dests[q] != nil && int(os.dests[q][t.part]) == a.exec {
				if pushed == nil {
					pushed = make([]bool, len(os.loc))
				}
				pushed[q] = true
			}
		}
		if pushed != nil && sp.pushed == nil {
			sp.pushed = make([][]bool, t.to-t.from+1)
		}
		if pushed != nil {
			sp.pushed[j-t.from] = pushed
		}
	}
	if sp.pushed != nil {
		for jj := range sp.pushed {
			if sp.pushed[jj] == nil {
				sp.pushed[jj] = make([]bool, e.parts[t.s-1])
			}
		}
	}
	if t.job != nil && t.s < e.last() {
		sp.dests = make([]int32, e.parts[t.s+1])
		for r := range sp.dests {
			sp.dests[r] = int32(d.prefFor(t.s+1, r))
			if !d.alive(sp.dests[r]) {
				sp.dests[r] = -1
			}
		}
	}
	sp.emit = t.job != nil && t.s == e.last()
	sp.checkpoint = t.job != nil && e.stages[t.s].keyed && e.isCheckpoint(t.from)
	return sp
}

func (d *driver) onResult(res *taskResult) {
	a := d.atts[res.attempt]
	if a == nil {
		// An attempt the driver dropped: cancelled, or run by an executor
		// it lost (a zombie cut off by a partition, whose result arrives
		// after the heal). One attempt per task counts, as Spark's
		// OutputCommitCoordinator authorises one per partition.
		d.ctx.Count("lineage.stale_results", 1)
		return
	}
	d.dropAttempt(a, false)
	t := a.t
	switch res.status {
	case statusOK:
		if !t.done {
			d.succeeded(t, a, res)
		}
	case statusFetchFailed:
		d.ctx.Count("lineage.fetch_failures", 1)
		// Requeue first: the pending task is the producer of its own
		// batch, so the recomputation planned next stops short of it.
		if !t.done && len(t.attempts) == 0 {
			d.requeue(t)
		}
		d.blockLost(res.failed)
	}
	d.schedule()
}

// dropAttempt forgets an attempt (it ended, or its executor is gone) and
// requeues its task if nothing else runs it.
func (d *driver) dropAttempt(a *attempt, requeue bool) {
	delete(d.atts, a.id)
	if d.ex[a.exec].busy == a {
		d.ex[a.exec].busy = nil
	}
	t := a.t
	for k, o := range t.attempts {
		if o == a {
			t.attempts = append(t.attempts[:k], t.attempts[k+1:]...)
			break
		}
	}
	if requeue && !t.done && len(t.attempts) == 0 {
		d.requeue(t)
	}
}

// requeue puts a task back in the pending queue in creation order.
func (d *driver) requeue(t *task) {
	k := sort.Search(len(d.pending), func(i int) bool { return d.pending[i].id > t.id })
	d.pending = append(d.pending, nil)
	copy(d.pending[k+1:], d.pending[k:])
	d.pending[k] = t
}

// succeeded registers the first successful attempt's outputs; later copies
// of the same task are cancelled (first result wins: recomputation is
// deterministic, so every copy computes the same partitions).
func (d *driver) succeeded(t *task, a *attempt, res *taskResult) {
	t.done = true
	t.dur = d.ctx.Now() - a.start
	for len(t.attempts) > 0 {
		o := t.attempts[0]
		d.ctx.Send(d.e.execs[o.exec], engine.Msg{Kind: kCancel, Ctrl: true, Val: o.id, Size: refBytes})
		// The copy's executor reports the cancel, which frees its slot;
		// the attempt itself no longer belongs to the task.
		t.attempts = t.attempts[1:]
	}
	x := int32(a.exec)
	for j := t.from; j <= t.to; j++ {
		if t.s < d.e.last() {
			if os := d.outs[t.s][j]; os != nil && os.loc[t.part] < 0 {
				os.loc[t.part] = x
				os.missing--
				if os.dests != nil {
					os.dests[t.part] = d.livePushes(a)
				}
			}
		}
		if w := d.work[t.s][j]; t.job != nil && w != nil {
			w[t.part] = res.cpu[j-t.from]
		}
	}
	if d.e.stages[t.s].keyed {
		if st := &d.state[t.s][t.part]; !d.alive(st.exec) || st.ver < t.to {
			*st = stLoc{exec: x, ver: t.to}
		}
	}
	if t.job != nil {
		d.jobSucceeded(t, res)
		return
	}
	d.ctx.Count("lineage.partitions_recomputed", t.to-t.from+1)
	d.ctx.Count("lineage.records_recomputed", res.records)
	d.ctx.Record(engine.Event{Kind: "recomputed", ID: int64(t.part), Value: res.records,
		Note: fmt.Sprintf("stage=%d from=%d to=%d exec=%d", t.s, t.from, t.to, a.exec)})
	for _, c := range res.cpu {
		d.ctx.Count("lineage.recompute_cpu_ns", int64(c))
	}
	d.recoveryTaskDone(t)
}

// livePushes is where a map attempt's pushes can still be: a destination
// lost since the launch (even if it has restarted since) has not got them.
func (d *driver) livePushes(a *attempt) []int32 {
	if a.spec.dests == nil {
		return nil
	}
	dests := append([]int32(nil), a.spec.dests...)
	for r, x := range dests {
		if x >= 0 && (!d.ex[x].alive || d.ex[x].epoch != a.epochs[x]) {
			dests[r] = -1
		}
	}
	return dests
}

// speculate launches a copy of every job task that runs longer than 1.4x
// the median of its stage's finished tasks, on an idle executor.
func (d *driver) speculate() {
	now := d.ctx.Now()
	for _, jb := range d.jobs {
		d.speculateJob(jb, now)
	}
}

func (d *driver) speculateJob(jb *job, now engine.Time) {
	for _, ts := range jb.tasks {
		var durs []engine.Time
		for _, t := range ts {
			if t.done {
				durs = append(durs, t.dur)
			}
		}
		if len(durs) == len(ts) || float64(len(durs)) < specQuantile*float64(len(ts)) {
			continue
		}
		sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
		threshold := max(engine.Time(specMultiplier*float64(durs[len(durs)/2])), specMinRuntime)
		for _, t := range ts {
			// A copy needs the inputs to still exist: the original may hold
			// them already while their holder has been lost since.
			if t.done || len(t.attempts) != 1 || now-t.attempts[0].start <= threshold || !d.ready(t) {
				continue
			}
			for i := range d.ex {
				if i != t.attempts[0].exec && d.ex[i].alive && d.ex[i].busy == nil {
					d.ctx.Count("lineage.speculative_tasks", 1)
					d.ctx.Record(engine.Event{Kind: "speculative_task", ID: t.from, Value: int64(now - t.attempts[0].start),
						Note: strings.Join(d.e.names(t.s), "+")})
					d.launch(t, i)
					break
				}
			}
		}
	}
}
