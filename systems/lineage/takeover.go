package lineage

import (
	"fmt"

	"ftbench/engine"
)

// Driver recovery after a master crash (crash@T:master), as Spark
// Streaming's: the driver's loss takes its executors with it (an executor
// exits when its driver disconnects: the runtime kills them with the
// master, engine.ProcSpec.MasterBound), and a new driver restarts from the
// metadata checkpoint and the write-ahead log of batches, and gets new
// executors a task-restart delay later (StreamingContext.getOrCreate,
// JobGenerator.restart, which reschedules the batches pending at the crash
// and those of the down time).
//
// What the store holds for it:
//
//   - lineage/batch/b, the batch log (the write-ahead log of offsets): batch
//     b's offset ranges, written at its cut before it may run, and deleted
//     in the step that makes its output visible. So it exists exactly for
//     the batches cut and not yet visible.
//   - lineage/commit/b, the output commit record, written once the batch is
//     computed (its effects become visible when it is durable): it keeps
//     the batch's ranges for recomputing the state since the checkpoint.
//   - lineage/meta, the metadata checkpoint (driverMeta): the last complete
//     state checkpoint and the batch up to which nothing needs looking at.
//
// The new driver reads the metadata, then the log from the batch after
// its base on: a batch with a log record is re-run and committed (its
// output was not visible; if its commit record was already durable, the
// old driver died before making it visible), a batch with only a commit
// record is committed and its state is recomputed from the checkpoint
// through lineage, and the first batch with neither (or whose ranges do not
// follow the previous batch's, an orphan left by a retried write) ends the
// log. Batches are then cut as before, from where the log ends.

const (
	metaKey = "lineage/meta"
	// tokenMeta is the metadata write's store token (batch log and commit
	// records use 2b and 2b+1).
	tokenMeta int64 = -2
)

func batchKey(b int64) string  { return fmt.Sprintf("lineage/batch/%d", b) }
func commitKey(b int64) string { return fmt.Sprintf("lineage/commit/%d", b) }

// driverMeta is the driver's metadata checkpoint.
type driverMeta struct {
	ckpt int64   // last complete state checkpoint; -1: none
	base int64   // every batch up to base is committed and folded into ckpt; -1: none
	hi   []int64 // batch base's end offset per source partition
}

// metaLog writes the metadata one record at a time, newest last: a record
// queued while one is in flight replaces any older queued one, so a stale
// record never overwrites a newer durable one.
type metaLog struct {
	durable  driverMeta  // the last record known durable
	inFlight *driverMeta // being written
	queued   *driverMeta // to write next
	stale    []int64     // superseded checkpoints whose files are still kept
}

// writeMeta records m durably (after the record in flight, if any).
func (d *driver) writeMeta(m driverMeta) {
	if mutantEarlyWALClean {
		// The mutant: the commit records m covers go now, while a new
		// driver would still read the previous metadata (metaWritten
		// deletes them once m is durable).
		for j := d.meta.durable.base + 1; j <= m.base; j++ {
			d.ctx.Store().Delete(commitKey(j))
		}
	}
	if d.meta.inFlight != nil {
		d.meta.queued = &m
		return
	}
	d.meta.inFlight = &m
	d.store.put(d.ctx, metaKey, m, int64(16+8*len(m.hi)), tokenMeta)
}

// metaWritten: the record in flight is durable. The checkpoints it
// supersedes and the commit records it covers are not needed by any
// future driver now.
func (d *driver) metaWritten() {
	m := d.meta.inFlight
	if m == nil {
		return
	}
	d.meta.inFlight = nil
	old := d.meta.durable
	keep := d.meta.stale[:0]
	for _, c := range d.meta.stale {
		if c >= m.ckpt {
			keep = append(keep, c)
			continue
		}
		for s := range d.e.stages {
			if d.e.stages[s].keyed {
				for p := 0; p < d.e.parts[s]; p++ {
					d.ctx.Store().Delete(ckptKey(s, p, c))
				}
			}
		}
	}
	d.meta.stale = keep
	for j := old.base + 1; j <= m.base; j++ {
		d.ctx.Store().Delete(commitKey(j))
	}
	d.meta.durable = *m
	if q := d.meta.queued; q != nil {
		d.meta.queued = nil
		d.writeMeta(*q)
	}
}

// ranges is the batch's offset range per source partition.
func (b *batch) ranges() [][2]int64 {
	r := make([][2]int64, len(b.lo))
	for p := range b.lo {
		r[p] = [2]int64{b.lo[p], b.hi[p]}
	}
	return r
}

// takeOver is a new driver's start after a master crash (see the top of
// the file).
func (d *driver) takeOver() {
	ctx, e := d.ctx, d.e
	m := driverMeta{ckpt: -1, base: -1}
	if v, ok := ctx.Store().Get(metaKey); ok {
		m = v.(driverMeta)
	}
	d.meta.durable = m
	d.ckpt = m.ckpt
	P := e.parts[0]
	hi := m.hi
	if hi == nil {
		hi = make([]int64, P)
	}
	for b := int64(0); b <= m.base; b++ {
		d.batches = append(d.batches, &batch{id: b, ready: true, done: true})
	}
	if m.base >= 0 {
		d.batches[m.base].hi = hi
	}
	committed, pending := m.base, 0
	for b := m.base + 1; ; b++ {
		v, logged := ctx.Store().Get(batchKey(b))
		if !logged {
			if v, ok := ctx.Store().Get(commitKey(b)); ok && pending == 0 {
				if r := v.([][2]int64); follows(r, hi) {
					d.batches = append(d.batches, recovered(b, r, true))
					committed, hi = b, d.batches[b].hi
					continue
				}
			}
			break
		}
		r := v.([][2]int64)
		if !follows(r, hi) {
			break // an orphan: an earlier batch's log write never became durable
		}
		d.batches = append(d.batches, recovered(b, r, false))
		hi = d.batches[b].hi
		pending++
	}
	d.nextJob, d.last = committed+1, committed
	// Everything the executors held is gone: the state since the
	// checkpoint is recomputed from it through the committed batches'
	// lineage (their map outputs too, when a keyed stage needs them).
	if e.stateful() {
		for j := m.ckpt + 1; j <= committed; j++ {
			for s := range e.stages {
				if s < e.last() {
					os := newOutSet(e.parts[s])
					os.dests = nil
					d.outs[s][j] = os
				}
				d.work[s][j] = make([]engine.Time, e.parts[s])
			}
		}
		for s := range e.stages {
			for p := range d.state[s] {
				d.state[s][p] = stLoc{exec: -1, ver: max(committed, m.ckpt)}
			}
		}
	}
	// The executors died with the old driver (engine.ProcSpec.MasterBound)
	// and new ones start a task-restart delay after the master is back:
	// they register then (executorsUp); those of a worker that is down
	// come with it.
	for i := range e.execs {
		d.ex[i].alive = false
	}
	ctx.After(ctx.Cost().TaskRestart+engine.Millisecond, timerExecutorsUp)
	rc := &recovery{exec: engine.MasterNode, failedAt: ctx.Now(), at: ctx.Now()}
	d.recs = append(d.recs, rc)
	n := d.ensureProducers(rc)
	ctx.Record(engine.Event{Kind: "leader_takeover", ID: m.ckpt,
		Note: fmt.Sprintf("committed_through=%d pending_batches=%d", committed, pending)})
	ctx.Record(engine.Event{Kind: "recovery_start", ID: engine.MasterNode,
		Note: fmt.Sprintf("failed_at=%d lost_batches=%d checkpoint=%d tasks=%d", ctx.Now(), committed-m.ckpt, m.ckpt, n)})
	if rc.left == 0 {
		d.recoveryEnded(rc)
	}
	// Batch b is cut at (b+1) intervals; missed cuts come at once (Spark
	// generates the batches of the time the driver was down on restart).
	next := engine.Time(len(d.batches)+1) * e.cfg.interval
	ctx.After(max(next-ctx.Now(), 0), timerCut)
	d.maybeStart()
}

// follows reports whether ranges r start where the previous batch ended.
func follows(r [][2]int64, hi []int64) bool {
	if len(r) != len(hi) {
		return false
	}
	for p := range r {
		if r[p][0] != hi[p] {
			return false
		}
	}
	return true
}

// recovered is a batch read back from the log.
func recovered(id int64, r [][2]int64, done bool) *batch {
	b := &batch{id: id, lo: make([]int64, len(r)), hi: make([]int64, len(r)), ready: true, done: done}
	for p := range r {
		b.lo[p], b.hi[p] = r[p][0], r[p][1]
	}
	return b
}

// executorsUp registers the new driver's executors, except those of a
// worker that is down (they register when it is back: onWorkerUp).
func (d *driver) executorsUp() {
	for i := range d.ex {
		if w := d.workerOf(i); w < 0 || !d.down[w] {
			d.ex[i].alive = true
			d.ex[i].upAt = d.ctx.Now()
		}
	}
	d.schedule()
}

// workerOf is the worker executor i runs on (-1: the standby, on the
// master node).
func (d *driver) workerOf(i int) int {
	if i >= d.e.workers {
		return engine.MasterNode
	}
	return i % d.e.nodes
}
