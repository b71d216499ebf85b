package barrier

import (
	"fmt"

	"ftbench/engine"
	"ftbench/systems/internal/checkpoint"
	"ftbench/systems/internal/stream"
	"ftbench/workloads"
)

// source reads one partition of the log. On trigger n it records its
// offset and injects barrier(n) on every output channel.
//
// In the sync variant it is also the stop-the-world switch of the ABS
// paper's synchronous snapshots: it reads nothing from trigger n until n
// completes or is aborted, so the pipeline drains behind barrier(n) and no
// record is read after the cut while the checkpoint is in progress.
//
// Operators chained to the source (Flink's "Source: source -> split"
// task) run in its thread: each record read goes through the chain
// (chain.go), whose state the source snapshots with its offset, and a
// checkpoint is acknowledged once every write it made (the snapshot, a
// chained sink's pre-commit) is durable.
type source struct {
	node
	reader stream.SourceReader
	router *stream.Router   // the network output when nothing is chained
	emit   func(engine.Msg) // hands a record read to the first chained operator
	// halted is the checkpoint a sync source stopped for (0: reading).
	halted int64
	// parked: the poll timer fired while halted and was not re-armed.
	parked bool
	// early are the triggers that reached the source before its Deploy.
	// With chaining the coordinator's messages overtake queued input
	// (checkpoint.Config.MailToSources), so a trigger can pass a Deploy
	// waiting on a paused worker; the deployment declines those of its
	// attempt, as a Flink task not yet RUNNING declines a trigger
	// (TASK_NOT_READY), rather than leave their checkpoints waiting for
	// this source until they expire (torture barrier seed 7, run 89). A
	// trigger that no Deploy follows (a restarted worker's source before
	// the failure is detected) is dropped: that checkpoint expires.
	early []engine.Msg
}

const pollTimer = 1

func newSource(par *params, g *stream.Graph, w workloads.Workload, log *workloads.Log, i int) *source {
	end := g.ChainEnd(-1)
	s := &source{
		reader: stream.SourceReader{W: w, Log: log, Part: int32(i)},
		router: g.Router(-1, i),
	}
	s.init(par, fmt.Sprintf("%s/%d", g.Plan.Source, i))
	s.chain = newChain(par, g, 0, end, i, false)
	s.emit = s.chain.Emitter()
	s.outputs = g.Outputs(end, i)
	return s
}

// chained reports whether operators run in the source's thread.
func (s *source) chained() bool { return len(s.chain.links) > 0 }

// Init does nothing: a source reads only once the coordinator deploys it
// with the offset to start from.
func (s *source) Init(engine.Ctx) {}

func (s *source) Handle(ctx engine.Ctx, from engine.ProcID, m engine.Msg) {
	switch m.Kind {
	case checkpoint.KindDeploy:
		s.deploy(ctx, m)
	case checkpoint.KindTrigger:
		switch {
		case s.part.Current(m):
			s.trigger(ctx, m.Val)
		case !s.part.Deployed:
			s.early = append(s.early, m)
		}
	case checkpoint.KindComplete:
		if s.part.Current(m) {
			s.chain.complete(ctx, m.Val)
			s.resume(ctx, m.Val)
		}
	case checkpoint.KindAbort:
		if s.part.Current(m) {
			s.abort(m.Val)
			s.resume(ctx, m.Val)
		}
	case engine.KindStoreDone:
		if !s.chained() {
			// A lone source's snapshot is its offset: durable means done.
			s.part.Acknowledge(ctx, m.Val>>1, checkpoint.Ack{StateBytes: 8})
			return
		}
		s.stored(ctx, m.Val)
	case engine.KindStoreFailed:
		if !s.chained() {
			// The store failed the offset's write: the source declines
			// the checkpoint, as a Flink task reports a failed snapshot
			// and the coordinator aborts the checkpoint.
			s.part.Decline(ctx, m.Val>>1)
			return
		}
		s.storeFailed(ctx, m.Val)
	}
}

// abort drops what the source kept of checkpoint n: a chain's declined
// part (a part still writing is acknowledged when durable, as a lone
// source's is; the coordinator ignores it).
func (s *source) abort(n int64) {
	if cp := s.find(n); cp != nil && cp.declined {
		s.drop(cp)
	}
	s.chain.abort(n)
}

func (s *source) deploy(ctx engine.Ctx, m engine.Msg) {
	n := s.part.OnDeploy(m)
	for _, t := range s.early {
		if int64(t.Key) == s.part.Attempt {
			s.part.NotReady(ctx, t)
		}
	}
	s.early = nil
	s.reader.Next = 0
	if n >= 0 {
		snap := s.load(ctx, n)
		if snap == nil {
			return // the restore failed (superseded, or the checkpoint is lost): the task stays idle
		}
		s.reader.Next = snap.Offset
		s.chain.restore(ctx, snap)
		ctx.Record(engine.Event{Kind: "source_rewind", ID: int64(s.reader.Part), Value: s.reader.Next})
	}
	ctx.After(0, pollTimer)
}

func (s *source) trigger(ctx engine.Ctx, n int64) {
	if n <= s.maxSeen {
		return
	}
	s.maxSeen = n
	// A source's checkpoint starts when the trigger reaches it.
	ctx.Record(engine.Event{Kind: "checkpoint_start", ID: n})
	// Everything read so far is before the cut; the barrier follows it.
	if !s.chained() {
		snap := &snapshot{Offset: s.reader.Next}
		s.forward(ctx, n, ctx.Now(), s.par.mode == modeUnaligned)
		ctx.Store().Put(checkpoint.Key(n, ctx.Self()), snap, 8, snapToken(n))
	} else {
		// The chain snapshots with the offset (its operators have
		// processed every record read), then the barrier goes out.
		cp := &inflight{id: n, trigger: ctx.Now(), snapshotted: true, persisted: true}
		cp.snap.Offset = s.reader.Next
		cp.stateBytes = 8 + s.chain.takeState(ctx, cp)
		s.cps = append(s.cps, cp)
		s.forward(ctx, n, ctx.Now(), s.par.mode == modeUnaligned)
		cp.outstanding++
		ctx.Record(engine.Event{Kind: "snapshot_write", ID: n, Bytes: cp.stateBytes})
		ctx.Store().Put(checkpoint.Key(n, ctx.Self()), &cp.snap, cp.stateBytes, snapToken(n))
	}
	if s.par.mode == modeSync {
		s.halted = n
	}
}

// resume restarts a sync source stopped for a checkpoint up to n, which
// completed or was aborted: the world may move again.
func (s *source) resume(ctx engine.Ctx, n int64) {
	if s.halted == 0 || n < s.halted {
		return
	}
	s.halted = 0
	if s.parked {
		s.parked = false
		ctx.After(0, pollTimer)
	}
}

func (s *source) Timer(ctx engine.Ctx, id int64) {
	if id == txnTimer {
		s.rewriteTxns(ctx)
		return
	}
	if !s.part.Deployed {
		return
	}
	if s.halted != 0 {
		s.parked = true
		return
	}
	var read int64
	if !s.chained() {
		read = s.reader.PollRouted(ctx, s.router, pollTimer)
	} else {
		before := s.reader.Next
		s.chain.Bind(ctx)
		again, done := s.reader.Poll(ctx, s.emit)
		if !done {
			ctx.After(again, pollTimer)
		}
		read = s.reader.Next - before
	}
	if read > 0 {
		ctx.Count("barrier_source_records_read", read)
	}
}
