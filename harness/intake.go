package harness

import (
	"ftbench/check"
	"ftbench/engine"
)

// Commit intake: the runner's engine.Observer side of every commit. The
// event loop notes what quiescence and the bursts need, then either queues
// the commit on the commit pipe (commits.go) or, without the pipe, measures
// and checks it inline; measureCommit and checkCommit are the same work in
// both places. This is the simulator's hot path: one call per commit.

func (r *runner) Commit(at engine.Time, c engine.Commit) {
	if r.cfg.OnCommit != nil { // a recording hook (Config.OnCommit)
		r.cfg.OnCommit(at, c)
	}
	// A first commit raises its record's done time (duplicates must not
	// make a record look late); commits reach the harness out of time
	// order by up to a CPU slice, so the checker keeps the latest.
	r.lastCommit, r.anyCommit = max(r.lastCommit, at), true
	r.bursts.Commit(at)
	now := r.rt.Now()
	if r.pipe != nil {
		r.pipe.add(now, at, &c)
		return
	}
	r.measureCommit(now, at, c)
	r.checkCommit(now, at, c)
}

// CommitAll is Commit for each of cs, at one instant.
func (r *runner) CommitAll(at engine.Time, cs []engine.Commit) {
	if !r.batchCommit(at, cs) {
		return
	}
	now := r.rt.Now()
	for i := range cs {
		r.pipe.add(now, at, &cs[i])
	}
}

// CommitOwned is CommitAll, keeping cs (engine.BatchObserver): the commit
// pipe checks it where it is and hands it out again from CommitBuffer.
func (r *runner) CommitOwned(at engine.Time, cs []engine.Commit) {
	if r.batchCommit(at, cs) {
		r.pipe.addPiece(r.rt.Now(), at, cs)
	}
}

// batchCommit does for a batch of commits at one instant what Commit does
// for each before it queues it, and reports whether the batch is left for
// the commit pipe; without the pipe, or with a hook that must see every
// commit, it commits them one by one itself.
func (r *runner) batchCommit(at engine.Time, cs []engine.Commit) bool {
	if r.cfg.OnCommit != nil || r.pipe == nil {
		for _, c := range cs {
			r.Commit(at, c)
		}
		return false
	}
	if len(cs) == 0 {
		return false
	}
	r.lastCommit, r.anyCommit = max(r.lastCommit, at), true
	r.bursts.CommitN(at, len(cs))
	return true
}

// CommitBuffer is an empty slice for n commits, reused from the pieces the
// commit pipe has checked when it can be.
func (r *runner) CommitBuffer(n int) []engine.Commit {
	if r.pipe != nil {
		return r.pipe.buffer(n)
	}
	return make([]engine.Commit, 0, n)
}

// measureCommit adds a commit reported at instant now to the latency
// histogram and the time series (inline, or on the commit pipe's
// goroutine, which then owns both until the next sync). In the simulator a
// commit is reported at or before its own time (at >= now), so the buckets
// that ended a bucket before now are complete and keep only their
// quantiles (Series.Seal): the series of a long run stays small. A live
// run's clocks give no such bound to the harness, and it is short.
func (r *runner) measureCommit(now, at engine.Time, c engine.Commit) {
	lat := at - c.Born
	if r.seal {
		r.series.Seal(now - r.cfg.Bucket)
	}
	r.series.Commit(at, lat)
	r.latency.Add(lat)
}

// takeQueued is the commit pipe's checker: what the event loop queued, in
// the order it queued it.
func (r *runner) takeQueued(q *queuedCommit) {
	switch q.kind {
	case queuedSample:
		r.series.Lag(q.at, r.lag(q.at)+q.c.Value) // c.Value: the internal lag when queued
	case queuedCheckpoint:
		r.series.Checkpoint(q.at, engine.Time(q.c.Value))
	case queuedCommitKind:
		r.measureCommit(q.now, q.at, q.c)
		r.checkCommit(q.now, q.at, q.c)
	}
}

// takePiece is the commit pipe's checker for a 2PC piece handed over whole:
// each commit is measured and given to the delivery checker as takeQueued
// would, and the output store keeps the piece itself (reportPiece). It
// reports whether it took the piece; it does not when the store must see
// each commit's status (the observer).
func (r *runner) takePiece(now, at engine.Time, cs []engine.Commit) bool {
	if r.commitHook != nil || !r.store.holdsPieces() {
		return false
	}
	for i := range cs {
		r.measureCommit(now, at, cs[i])
		r.delivery.RecordAt(cs[i].ID, int64(at))
	}
	r.store.reportPiece(now, at, cs)
	return true
}

// checkCommit gives a commit to the delivery checker and the output store
// (inline, or on the commit pipe's goroutine).
func (r *runner) checkCommit(now, at engine.Time, c engine.Commit) {
	status := r.delivery.RecordAt(c.ID, int64(at))
	if r.commitHook != nil {
		r.commitHook(at, c, status == check.CommitFirst)
	}
	r.store.report(now, at, c, status)
}

// syncCommits makes the checkers, the latency histogram and the time series
// current before the event loop reads them or writes the series itself.
func (r *runner) syncCommits() {
	if r.pipe != nil {
		r.pipe.sync()
	}
}
