package lineage

import (
	"fmt"

	"ftbench/engine"
)

// recovery is the recomputation after one executor loss.
type recovery struct {
	exec     int
	failedAt engine.Time
	at       engine.Time
	left     int
}

type prodKey struct {
	s, part int
	j       int64
}

// onFailure loses every executor of the failed worker.
func (d *driver) onFailure(f engine.Failure) {
	if !f.Back {
		d.down[f.Worker] = true
	}
	var lost []int
	for _, x := range d.e.onWorker(f.Worker) {
		if f.FailedAt < d.ex[x].upAt || !d.ex[x].alive {
			continue // already handled when the executor re-registered
		}
		lost = append(lost, x)
	}
	d.loseAll(lost, f.FailedAt)
}

// onWorkerUp registers the worker's restarted executors. If the driver
// never heard of the crash (restart faster than detection), a fresh
// executor's arrival is the news: everything the old one held is gone.
func (d *driver) onWorkerUp(w int) {
	delete(d.down, w)
	var lost []int
	for _, x := range d.e.onWorker(w) {
		if d.ex[x].alive {
			lost = append(lost, x)
		}
	}
	d.loseAll(lost, d.ctx.Now())
	for _, x := range d.e.onWorker(w) {
		d.ex[x].alive = true
		d.ex[x].upAt = d.ctx.Now()
	}
	d.schedule()
}

// loseAll loses executors that died together (one worker's). All are
// marked dead before any recovery is planned, so that the recomputation of
// one is never placed on another that died with it.
func (d *driver) loseAll(xs []int, failedAt engine.Time) {
	for _, x := range xs {
		d.ex[x].alive = false
	}
	for _, x := range xs {
		d.lose(x, failedAt)
	}
}

// lose handles the loss of executor x: its running attempt is requeued,
// tasks elsewhere still waiting for its blocks fail (FetchFailed), and
// every partition it held since the last checkpoint — map outputs and
// cached state RDD partitions — is recomputed from lineage (lecture 21.3.2,
// recovery phase).
func (d *driver) lose(x int, failedAt engine.Time) {
	d.ex[x].alive = false
	d.ex[x].epoch++
	if a := d.ex[x].busy; a != nil {
		d.dropAttempt(a, true)
	}
	d.broadcast(kLost, int64(x), nil)
	rc := &recovery{exec: x, failedAt: failedAt, at: d.ctx.Now()}
	d.recs = append(d.recs, rc)
	work, lineage := d.markLost(int32(x))
	if d.e.cfg.upstream {
		d.handOver(x)
	}
	n := d.ensureProducers(rc)
	d.ctx.Record(engine.Event{Kind: "recovery_start", ID: int64(x), Value: int64(work),
		Note: fmt.Sprintf("failed_at=%d lost_batches=%d checkpoint=%d tasks=%d", failedAt, lineage, d.ckpt, n)})
	if rc.left == 0 {
		d.recoveryEnded(rc)
	}
	d.schedule()
}

// markLost forgets every block on x. It returns the CPU those partitions
// originally cost (the work lost) and the longest lost lineage in batches.
func (d *driver) markLost(x int32) (engine.Time, int64) {
	lost := map[prodKey]bool{}
	var work engine.Time
	add := func(s, part int, j int64) {
		k := prodKey{s, part, j}
		if lost[k] {
			return
		}
		lost[k] = true
		if w := d.work[s][j]; w != nil {
			work += w[part]
		}
	}
	var lineage int64
	for s := 0; s < d.e.last(); s++ {
		for j := d.ckpt + 1; j <= d.last; j++ {
			os := d.outs[s][j]
			if os == nil {
				continue
			}
			for q := range os.dests {
				// Buckets pushed to x died with it; its next incarnation
				// does not have them.
				for r, to := range os.dests[q] {
					if to == x {
						os.dests[q][r] = -1
					}
				}
			}
			for q, loc := range os.loc {
				if loc == x {
					os.loc[q] = -1
					os.missing++
					if os.dests != nil {
						os.dests[q] = nil
					}
					add(s, q, j)
					lineage = max(lineage, j-d.ckpt)
				}
			}
		}
	}
	for s := range d.e.stages {
		for part := range d.state[s] {
			st := &d.state[s][part]
			if st.exec != x {
				continue
			}
			st.exec = -1
			for j := d.ckpt + 1; j <= st.ver; j++ {
				add(s, part, j)
			}
			lineage = max(lineage, st.ver-d.ckpt)
		}
	}
	return work, lineage
}

// handOver gives x's partitions to the standby (upstream backup: one node
// takes over the failed node's work, replays it serially, then carries on
// with its share of new batches).
func (d *driver) handOver(x int) {
	sb := len(d.ex) - 1
	for p := range d.owner0 {
		if d.owner0[p] == x {
			d.owner0[p] = sb
		}
	}
	for r := range d.ownerR {
		if d.ownerR[r] == x {
			d.ownerR[r] = sb
		}
	}
	for _, t := range d.pending {
		if t.pref == x {
			t.pref = sb
		}
	}
}

// ensureProducers makes sure every missing block since the checkpoint has a
// task that will produce it, like Spark's DAGScheduler resubmitting missing
// parent stages. A lost state partition (and lost map outputs of a keyed
// stage) is recomputed by one chain task from the checkpoint; a lost output
// of a stateless stage by one task for its batch, reading only its own
// parent partitions (for stage 0: its own source partition).
func (d *driver) ensureProducers(rc *recovery) int {
	prod := map[prodKey]bool{}
	chainTo := map[[2]int]int64{}
	mark := func(t *task) {
		for j := t.from; j <= t.to; j++ {
			prod[prodKey{t.s, t.part, j}] = true
		}
		k := [2]int{t.s, t.part}
		if to, ok := chainTo[k]; t.rec != nil && (!ok || t.to > to) {
			chainTo[k] = t.to
		}
	}
	for _, t := range d.pending {
		mark(t)
	}
	for i := range d.ex {
		if a := d.ex[i].busy; a != nil && !a.t.done {
			mark(a.t)
		}
	}
	n := 0
	for s := range d.e.stages {
		st := &d.e.stages[s]
		for part := 0; part < d.e.parts[s]; part++ {
			need := int64(-1)
			if st.keyed {
				if sl := d.state[s][part]; sl.exec < 0 && sl.ver > d.ckpt {
					need = sl.ver
				}
			}
			if s < d.e.last() {
				for j := d.ckpt + 1; j <= d.last; j++ {
					os := d.outs[s][j]
					if os == nil || os.loc[part] >= 0 || prod[prodKey{s, part, j}] {
						continue
					}
					if st.keyed {
						need = max(need, j)
					} else {
						d.addRecovery(s, part, j, j, rc)
						n++
					}
				}
			}
			if to, ok := chainTo[[2]int{s, part}]; need > d.ckpt && (!ok || to < need) {
				from := d.ckpt + 1
				if mutantNoReplay {
					from = need // the mutant: only the last batch is recomputed
				}
				d.addRecovery(s, part, from, need, rc)
				n++
			}
		}
	}
	return n
}

func (d *driver) addRecovery(s, part int, from, to int64, rc *recovery) {
	t := d.newTask(s, part, from, to)
	t.rec = rc
	if d.e.cfg.upstream {
		t.pref, t.pinned = len(d.ex)-1, true
	}
	rc.left++
	d.pending = append(d.pending, t)
}

func (d *driver) recoveryTaskDone(t *task) {
	rc := t.rec
	rc.left--
	if rc.left == 0 {
		d.recoveryEnded(rc)
	}
}

func (d *driver) recoveryEnded(rc *recovery) {
	d.ctx.Record(engine.Event{Kind: "recovery_recomputed", ID: int64(rc.exec), Value: int64(d.ctx.Now() - rc.at)})
}

// blockLost handles a FetchFailed: if the driver still thinks the block is
// where the fetch failed, it is lost, and must be recomputed.
func (d *driver) blockLost(ref blockRef) {
	if ref.exec < 0 {
		return
	}
	if ref.state {
		st := &d.state[ref.s][ref.part]
		if st.exec != ref.exec || st.ver != ref.j {
			return
		}
		st.exec = -1
	} else if os := d.outs[ref.s][ref.j]; os != nil && os.loc[ref.part] == ref.exec {
		os.loc[ref.part] = -1
		os.missing++
		if os.dests != nil {
			os.dests[ref.part] = nil
		}
	} else {
		return
	}
	rc := &recovery{exec: int(ref.exec), failedAt: d.ctx.Now(), at: d.ctx.Now()}
	if len(d.recs) > 0 {
		rc = d.recs[len(d.recs)-1]
	} else {
		d.recs = append(d.recs, rc)
	}
	d.ensureProducers(rc)
}
