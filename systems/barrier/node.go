package barrier

import (
	"slices"

	"ftbench/engine"
	"ftbench/systems/internal/checkpoint"
	"ftbench/systems/internal/stream"
)

// node is what sources and tasks share: the checkpoint participant, the
// output channels barriers go to, and the messages that arrived before the
// coordinator deployed this incarnation.
type node struct {
	par     *params
	part    checkpoint.Participant
	name    string
	outputs []engine.ProcID
	// maxSeen is the highest checkpoint this incarnation has started,
	// finished or given up; older barriers and triggers are stale.
	maxSeen int64
	held    []held
	chain   *chain      // the operators it runs (a source's may be empty)
	cps     []*inflight // checkpoints in progress here, oldest first
}

// held is a message that arrived before deployment. Its channel is paused
// until the task is deployed, so at most one message per channel waits.
type held struct {
	from engine.ProcID
	m    engine.Msg
	ov   []engine.Msg
}

func (nd *node) init(par *params, name string) {
	nd.par = par
	nd.name = name
	nd.part.Coordinator = par.coord
	nd.maxSeen = -1
}

// hold keeps a message that arrived before the coordinator deployed this
// incarnation (a restarted worker's tasks come up before the failover
// redeploys them) and stops its channel, so the data waits, with credit, in
// the channel.
func (nd *node) hold(ctx engine.Ctx, from engine.ProcID, m engine.Msg) {
	h := held{from: from, m: m}
	if ov := ctx.Overtaken(); len(ov) > 0 {
		h.ov = append([]engine.Msg(nil), ov...)
	}
	nd.held = append(nd.held, h)
	ctx.Pause(from)
}

// release resumes the held channels and returns the held messages. The
// channels are resumed first so that handling a held barrier may pause its
// channel again.
func (nd *node) release(ctx engine.Ctx) []held {
	hs := nd.held
	nd.held = nil
	for _, h := range hs {
		ctx.Resume(h.from)
	}
	return hs
}

// forward sends barrier(n) on every output channel: overtaking when
// priority (unaligned), else in FIFO order with the data, followed in the
// aligned-timeout variant by an overtaking announcement.
func (nd *node) forward(ctx engine.Ctx, n int64, trigger engine.Time, priority bool) {
	m := engine.Msg{Kind: kindBarrier, Ctrl: true, Key: uint64(nd.part.Attempt), Val: n, Born: trigger, Size: barrierBytes}
	for _, o := range nd.outputs {
		switch {
		case priority:
			m.Kind = kindPriority
			ctx.SendOvertaking(o, m)
		case nd.par.mode == modeAlignedTimeout:
			ctx.Send(o, m)
			a := m
			a.Kind = kindAnnounce
			ctx.SendOvertaking(o, a)
		default:
			ctx.Send(o, m)
		}
	}
	ctx.Count("barrier_barriers_sent", int64(len(nd.outputs)))
}

// evRestoreFailed: a task found its snapshot of the latest completed
// checkpoint missing (a safety violation).
const evRestoreFailed = "restore_failed"

// load reads this task's snapshot of checkpoint n, charging the read, and
// records the restore. An incremental snapshot's chain is read too, piece
// by piece, and the snapshot returned holds the whole state (a copy: the
// stored one is immutable).
//
// It returns nil when the snapshot is gone because the deploy is
// superseded: a newer checkpoint completed since and retention discarded
// n. Only a stale deploy asks for it — one that waited in a partition's cut
// and reaches the zombie of a task already re-placed, between the heal and
// the zombie's cancellation — and, as a Flink task whose restore finds the
// checkpoint's files deleted, the task fails its restore and does nothing
// more (the JobManager ignores the failure of a superseded attempt).
//
// A missing snapshot (or piece of its chain) of the latest completed
// checkpoint is a lost checkpoint: Flink's restore fails with the file not
// found, and every retry fails the same way. The task records
// restore_failed, which the run counts as a safety violation (the state a
// completed checkpoint promised is gone), and stays idle.
func (nd *node) load(ctx engine.Ctx, n int64) *snapshot {
	start := ctx.Now()
	v, ok := nd.part.Load(ctx, n)
	if !ok {
		if meta, ok := ctx.Store().Get(checkpoint.MetaKey); ok && meta.(checkpoint.Meta).Completed > n {
			ctx.Record(engine.Event{Kind: "restore_superseded", ID: n, Value: meta.(checkpoint.Meta).Completed})
			return nil
		}
		ctx.Record(engine.Event{Kind: evRestoreFailed, ID: n, Note: "snapshot missing"})
		return nil
	}
	snap := v.(*snapshot)
	var bytes int64
	for k, o := range snap.Ops {
		if len(o.Chain) <= 1 {
			bytes += stream.StateBytes(len(o.State))
			continue
		}
		state, ok := chainState(snap, k, func(m int64) *snapshot {
			v, _ := nd.part.Load(ctx, m)
			s, _ := v.(*snapshot)
			return s
		})
		if !ok {
			ctx.Record(engine.Event{Kind: evRestoreFailed, ID: n, Note: "a piece of its incremental chain missing"})
			return nil
		}
		// The snapshot returned holds the whole state: a copy, as the
		// stored one is immutable.
		whole := *snap
		whole.Ops = slices.Clone(snap.Ops)
		whole.Ops[k].State = state
		snap = &whole
		bytes += o.Chain.Bytes()
	}
	ctx.Record(engine.Event{Kind: "restore", ID: n, Value: int64(ctx.Now() - start), Bytes: bytes})
	nd.maxSeen = n
	return snap
}

func (nd *node) find(n int64) *inflight {
	for _, cp := range nd.cps {
		if cp.id == n {
			return cp
		}
	}
	return nil
}

func (nd *node) drop(cp *inflight) {
	for i, c := range nd.cps {
		if c == cp {
			nd.cps = append(nd.cps[:i], nd.cps[i+1:]...)
			return
		}
	}
}

// stored counts a durable write of a checkpoint in progress (its snapshot
// or its pre-commit; a rewritten transaction record marks only the
// transaction) and acknowledges the checkpoints now durable.
func (nd *node) stored(ctx engine.Ctx, token int64) {
	sk := nd.chain.sink()
	if token&1 == 1 && sk != nil {
		sk.txns.Stored(token >> 1)
	}
	if cp := nd.find(token >> 1); cp != nil {
		cp.outstanding--
	}
	var ready []*inflight
	for _, cp := range nd.cps {
		if cp.persisted && cp.outstanding == 0 && !cp.declined && (sk == nil || sk.txns.DurableThrough(cp.id)) {
			ready = append(ready, cp)
		}
	}
	for _, cp := range ready {
		nd.part.Acknowledge(ctx, cp.id, nd.chain.acked(ctx.Self(), cp))
		nd.drop(cp)
	}
}

// storeFailed handles a write the store failed (store-down): the task
// declines the checkpoint the write was for, as a Flink task reports a
// failed snapshot to the CheckpointCoordinator, which aborts it; the task
// keeps its part until the abort arrives. A failed transaction record is
// written again (the sink must not lose the transaction: a later
// checkpoint lists it and commits it).
func (nd *node) storeFailed(ctx engine.Ctx, token int64) {
	n := token >> 1
	if sk := nd.chain.sink(); token&1 == 1 && sk != nil {
		sk.txns.Failed(ctx, n, txnTimer)
	}
	if cp := nd.find(n); cp != nil && !cp.declined {
		cp.declined = true
		nd.part.Decline(ctx, n)
	}
}

// txnTimer is the timer of a sink's transaction rewrites.
const txnTimer = 0

// rewriteTxns is the sink's only timer: write again the transaction
// records the store failed.
func (nd *node) rewriteTxns(ctx engine.Ctx) {
	if sk := nd.chain.sink(); sk != nil {
		sk.txns.Rewrite(ctx, putTxn)
	}
}
