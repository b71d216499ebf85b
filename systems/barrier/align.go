package barrier

import (
	"ftbench/engine"
)

// inflight is one checkpoint in progress at a task.
//
// The task's part of the cut is its state at the snapshot plus, per input
// channel, the records that were sent before the upstream's snapshot but
// consumed after this task's snapshot (its channel state):
//
//   - a FIFO barrier arriving before the snapshot: everything before it was
//     consumed before the snapshot and everything after it waits in the
//     paused channel until after it, so the channel state is empty
//     (aligned);
//   - an overtaking barrier: what it jumped (Overtaken) was sent before the
//     upstream's snapshot and will be consumed after ours;
//   - a channel whose barrier has not come by the snapshot: every record
//     consumed from it until its barrier arrives, plus what an overtaking
//     barrier jumps (unaligned, Chandy-Lamport's channel recording);
//   - an announced channel converted at a timeout: the announced records
//     not consumed yet (they precede the queued FIFO barrier).
type inflight struct {
	id          int64
	trigger     engine.Time // when the source injected the barrier
	snapshotted bool
	persisted   bool
	declined    bool        // a write failed: declined, waiting for the abort
	firstAt     engine.Time // first barrier's arrival
	lastAt      engine.Time // last barrier's arrival
	arrived     []bool      // barrier(id) arrived (or was converted) per input
	nArrived    int
	paused      []bool         // inputs paused for alignment
	chans       [][]engine.Msg // channel state per input
	ann         [][]engine.Msg // aligned-timeout: records an announcement overtook
	annRecv     []int64        // recv[i] when the announcement came
	snap        snapshot
	stateBytes  int64
	// channelBytes is the channel state's size once persisted.
	channelBytes int64
	outstanding  int // store writes not yet durable
}

func (cp *inflight) complete() bool { return cp.nArrived == len(cp.arrived) }

// cpFor returns checkpoint n's state here, starting it if it is new; nil
// if n was already finished or given up.
func (t *task) cpFor(n int64, trigger engine.Time) *inflight {
	if cp := t.find(n); cp != nil {
		return cp
	}
	if n <= t.maxSeen {
		return nil
	}
	t.maxSeen = n
	k := len(t.inputs)
	cp := &inflight{id: n, trigger: trigger, arrived: make([]bool, k), paused: make([]bool, k),
		chans: make([][]engine.Msg, k)}
	t.cps = append(t.cps, cp)
	return cp
}

func (t *task) remove(cp *inflight) {
	t.drop(cp)
	t.recount()
}

// recount refreshes the fast-path count of checkpoints recording channel
// state; checkpoint events are rare, data records are not.
func (t *task) recount() {
	t.recording = 0
	for _, cp := range t.cps {
		if cp.snapshotted && !cp.complete() {
			t.recording++
		}
	}
}

// record appends a consumed record to the channel state of every snapshot
// still waiting for input i's barrier.
func (t *task) record(i int, m engine.Msg) {
	for _, cp := range t.cps {
		if cp.snapshotted && !cp.arrived[i] {
			cp.chans[i] = append(cp.chans[i], m)
		}
	}
}

func (t *task) arrive(ctx engine.Ctx, cp *inflight, i int) {
	if cp.nArrived == 0 {
		cp.firstAt = ctx.Now()
		// The checkpoint starts here: Flink's checkpointStartDelayNanos is
		// the time from the trigger to this moment (Summarize joins it with
		// the coordinator's checkpoint_triggered).
		ctx.Record(engine.Event{Kind: "checkpoint_start", ID: cp.id})
	}
	cp.arrived[i] = true
	cp.nArrived++
	cp.lastAt = ctx.Now()
}

func (t *task) onBarrier(ctx engine.Ctx, i int, m engine.Msg, priority bool, ov []engine.Msg) {
	n := m.Val
	if int64(m.Key) != t.part.Attempt || n <= t.lastBarrier[i] {
		return
	}
	t.lastBarrier[i] = n
	// Barriers of one channel come in order, so an older checkpoint still
	// waiting for this channel never gets its barrier: upstream gave it up.
	for j := 0; j < len(t.cps); {
		if old := t.cps[j]; old.id < n && !old.arrived[i] {
			t.giveUp(ctx, old, "subsumed at task") // removes t.cps[j]
			continue
		}
		j++
	}
	cp := t.cpFor(n, m.Born)
	if cp == nil || cp.arrived[i] {
		return // finished, given up, or this channel was converted already
	}
	t.arrive(ctx, cp, i)
	switch {
	case priority:
		cp.chans[i] = append(cp.chans[i], ov...)
		if !cp.snapshotted {
			t.snapshotNow(ctx, cp)
		}
	case !cp.snapshotted:
		// Aligned: stop reading this channel; what follows the barrier
		// stays queued in it (and backpressures upstream) until the
		// snapshot.
		ctx.Pause(t.inputs[i])
		cp.paused[i] = true
		if cp.nArrived == 1 && len(t.inputs) > 1 {
			// Alignment starts: a crash before the snapshot (recorded by
			// alignment, unaligned_switch or task_checkpoint_dropped)
			// lands in it (torture's coverage).
			ctx.Record(engine.Event{Kind: "alignment_start", ID: cp.id})
		}
		if cp.complete() {
			t.snapshotAligned(ctx, cp)
		} else if t.timedOut(ctx, cp) {
			t.snapshotNow(ctx, cp)
		}
	}
	t.recount()
	t.maybePersist(ctx, cp)
}

func (t *task) onAnnounce(ctx engine.Ctx, i int, m engine.Msg, ov []engine.Msg) {
	n := m.Val
	if int64(m.Key) != t.part.Attempt || n <= t.lastBarrier[i] {
		return
	}
	cp := t.cpFor(n, m.Born)
	if cp == nil || cp.arrived[i] {
		return
	}
	if cp.snapshotted {
		// Already unaligned here: the announced records complete this
		// channel's state at once, as an overtaking barrier would.
		cp.chans[i] = append(cp.chans[i], ov...)
		t.arrive(ctx, cp, i)
		t.recount()
		t.maybePersist(ctx, cp)
		return
	}
	if cp.ann == nil {
		cp.ann = make([][]engine.Msg, len(t.inputs))
		cp.annRecv = make([]int64, len(t.inputs))
	}
	cp.ann[i] = append([]engine.Msg{}, ov...) // ov is only valid during this Handle
	cp.annRecv[i] = t.recv[i]
	if t.timedOut(ctx, cp) {
		t.snapshotNow(ctx, cp)
		t.recount()
		t.maybePersist(ctx, cp)
	}
}

func (t *task) timedOut(ctx engine.Ctx, cp *inflight) bool {
	return t.par.mode == modeAlignedTimeout && ctx.Now()-cp.trigger >= t.par.alignTimeout
}

// alignTimeout is the coordinator's notice that checkpoint n has been in
// progress for the aligned-checkpoint-timeout.
func (t *task) alignTimeout(ctx engine.Ctx, n int64) {
	if cp := t.find(n); cp != nil && !cp.snapshotted && t.par.mode == modeAlignedTimeout {
		t.snapshotNow(ctx, cp)
		t.recount()
		t.maybePersist(ctx, cp)
	}
}

// snapshotAligned: barrier(n) arrived on every input in FIFO order. Take
// the snapshot, forward the barrier, then resume the paused channels
// (Flink's order: their records belong after the snapshot).
func (t *task) snapshotAligned(ctx engine.Ctx, cp *inflight) {
	t.measureBuffered(ctx, cp)
	t.takeState(ctx, cp)
	// A late barrier goes on unaligned in the aligned-timeout variant, as
	// Flink's output-side timeout does.
	t.forward(ctx, cp.id, cp.trigger, t.timedOut(ctx, cp))
	t.resumeAll(ctx, cp)
}

// snapshotNow takes the snapshot before every barrier arrived: the first
// overtaking barrier (unaligned), an overtaking barrier from an upstream
// that timed out, or a timeout here (aligned-timeout). Channels still
// without a barrier are converted if announced, else recorded.
func (t *task) snapshotNow(ctx engine.Ctx, cp *inflight) {
	t.measureBuffered(ctx, cp)
	t.takeState(ctx, cp)
	t.forward(ctx, cp.id, cp.trigger, true)
	t.resumeAll(ctx, cp)
	for j := range t.inputs {
		if cp.arrived[j] || cp.ann == nil || cp.ann[j] == nil {
			continue
		}
		// The records consumed since the announcement are its head (FIFO);
		// the rest precede the queued barrier and belong to the cut.
		k := min(t.recv[j]-cp.annRecv[j], int64(len(cp.ann[j])))
		cp.chans[j] = append(cp.chans[j], cp.ann[j][k:]...)
		cp.ann[j] = nil
		t.arrive(ctx, cp, j)
	}
	if t.par.mode == modeAlignedTimeout {
		ctx.Record(engine.Event{Kind: "unaligned_switch", ID: cp.id, Value: int64(ctx.Now() - cp.trigger)})
	}
}

func (t *task) resumeAll(ctx engine.Ctx, cp *inflight) {
	for j, p := range cp.paused {
		if p {
			ctx.Resume(t.inputs[j])
			cp.paused[j] = false
		}
	}
}

// measureBuffered counts the records the paused channels hold back: the
// alignment's buffered records (Flink >= 1.11 leaves them in the network
// stack, as the simulator does, rather than copying them into a buffer).
func (t *task) measureBuffered(ctx engine.Ctx, cp *inflight) {
	q, ok := ctx.(interface {
		InputQueued(from engine.ProcID) (msgs, bytes int)
	})
	if !ok {
		return
	}
	var msgs, bytes int
	for j, p := range cp.paused {
		if p {
			m, b := q.InputQueued(t.inputs[j])
			msgs += m
			bytes += b
		}
	}
	if msgs > 0 {
		ctx.Count("barrier_alignment_buffered_records", int64(msgs))
		ctx.Record(engine.Event{Kind: "alignment_buffered", ID: cp.id, Value: int64(msgs), Bytes: int64(bytes)})
	}
}

func (t *task) maybePersist(ctx engine.Ctx, cp *inflight) {
	if cp.snapshotted && cp.complete() && !cp.persisted {
		t.persist(ctx, cp)
	}
}

// giveUp drops a checkpoint this task will not complete (aborted by the
// coordinator, or skipped by an upstream); its sink pre-commit stays
// pending and commits with the next completed checkpoint.
func (t *task) giveUp(ctx engine.Ctx, cp *inflight, why string) {
	if !cp.snapshotted {
		t.resumeAll(ctx, cp)
	}
	t.remove(cp)
	ctx.Record(engine.Event{Kind: "task_checkpoint_dropped", ID: cp.id, Note: why})
}

func (t *task) abort(ctx engine.Ctx, n int64) {
	if cp := t.find(n); cp != nil {
		t.giveUp(ctx, cp, "aborted")
	}
	t.maxSeen = max(t.maxSeen, n)
}
