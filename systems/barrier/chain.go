package barrier

import (
	"slices"

	"ftbench/engine"
	"ftbench/systems/internal/checkpoint"
	"ftbench/systems/internal/stream"
	"ftbench/workloads"
)

// chain is the operators one barrier task runs in its one thread
// (stream.Chain: Flink's OperatorChain, chained hops copied through the
// serializer unless objects are reused), with what checkpoints need of
// each: a keyed operator's incremental state, the sink's transactions.
//
// Invariant: the links exchange records by method calls, so no barrier can
// come between them: the chain snapshots every link's state at one
// instant (Flink's snapshotState over the whole chain), and a crash, a
// restart and a region failover take the whole chain.
type chain struct {
	*stream.Chain
	links []*link // parallel to Chain.Links
}

// link is one chained operator's checkpointed part.
type link struct {
	*stream.Link
	inc  *checkpoint.IncrementalState // incremental checkpoints of Op's keyed state
	sink *sink                        // nil for operators
}

// newChain builds the links of stages first..last of g for instance i. A
// task's first link is its head; a source's links all follow the reader.
func newChain(par *params, g *stream.Graph, first, last, i int, headed bool) *chain {
	c := &chain{}
	sinks := map[*workloads.Stage]*sink{}
	c.Chain = stream.NewChain(g, first, last, i, headed, par.objectReuse,
		func(st *workloads.Stage) func(engine.Ctx, engine.Msg, *engine.CostModel) {
			sk := &sink{twoPC: par.twoPC, stage: st, timeout: par.txnTimeout}
			sinks[st] = sk
			return sk.write
		})
	for _, sl := range c.Chain.Links {
		l := &link{Link: sl, sink: sinks[sl.Stage]}
		if sl.Op != nil && par.incremental && sl.Op.State != nil {
			l.inc = checkpoint.NewIncremental(sl.Op, par.fullEvery)
		}
		c.links = append(c.links, l)
	}
	return c
}

// sink is the chain's sink, nil if it has none.
func (c *chain) sink() *sink {
	if n := len(c.links); n > 0 {
		return c.links[n-1].sink
	}
	return nil
}

// takeState copies every link's state into cp (the synchronous part of
// Flink's asynchronous snapshot), charging each link's serialisation, and
// pre-commits the sink's transaction. It returns the bytes taken.
func (c *chain) takeState(ctx engine.Ctx, cp *inflight) int64 {
	var total int64
	cp.snap.Ops = make([]opSnapshot, len(c.links))
	for k, l := range c.links {
		s := &cp.snap.Ops[k]
		var bytes int64
		switch {
		case l.inc != nil:
			s.State, s.Chain = l.inc.Take(cp.id)
			bytes = stream.StateBytes(len(s.State))
		case l.Op != nil && l.Op.State != nil:
			s.State = l.Op.Snapshot()
			bytes = stream.StateBytes(len(s.State))
		case l.sink != nil:
			var txn int64
			s.Pending, txn = l.sink.precommit(ctx, cp.id)
			if txn > 0 {
				cp.outstanding++
				ctx.Record(engine.Event{Kind: "sink_precommit", ID: cp.id, Bytes: txn})
			}
			bytes = int64(8 * len(s.Pending))
		}
		ctx.Work(engine.Time(bytes) * l.Model(ctx).SerdePerByte)
		total += bytes
	}
	return total
}

// restore gives every link its state from snap, and the sink its
// pre-committed transactions to commit.
func (c *chain) restore(ctx engine.Ctx, snap *snapshot) {
	for k, l := range c.links {
		if k >= len(snap.Ops) {
			break
		}
		s := &snap.Ops[k]
		if l.Op != nil && l.Op.State != nil {
			l.Op.Restore(s.State)
			if l.inc != nil {
				l.inc.Restored(s.Chain)
			}
		}
		if l.sink != nil {
			l.sink.recover(ctx, s.Pending)
		}
	}
}

// complete is checkpoint n's completion notice (notifyCheckpointComplete):
// the sink commits its transactions through n, incremental state learns
// which chain pieces are final.
func (c *chain) complete(ctx engine.Ctx, n int64) {
	for _, l := range c.links {
		if l.sink != nil {
			l.sink.commitThrough(ctx, n)
		}
		if l.inc != nil {
			l.inc.Complete(n)
		}
	}
}

// abort is checkpoint n's abort notice for incremental state.
func (c *chain) abort(n int64) {
	for _, l := range c.links {
		if l.inc != nil {
			l.inc.Abort(n)
		}
	}
}

// acked is what the task acknowledges for cp: the incremental chains its
// snapshot references (each piece once) and what a restore reads: every
// link's state as taken, except that an incremental link's restore reads
// its whole chain instead of its delta.
func (c *chain) acked(self engine.ProcID, cp *inflight) checkpoint.Ack {
	a := checkpoint.Ack{StateBytes: cp.stateBytes, ChannelBytes: cp.channelBytes}
	restore := cp.stateBytes + cp.channelBytes
	incremental := false
	for _, s := range cp.snap.Ops {
		if len(s.Chain) == 0 {
			continue
		}
		incremental = true
		restore += s.Chain.Bytes() - stream.StateBytes(len(s.State))
		for _, r := range chainRefs(s.Chain, self) {
			if !slices.Contains(a.Refs, r) {
				a.Refs = append(a.Refs, r)
			}
		}
	}
	if incremental {
		a.RestoreBytes = restore
	}
	return a
}
