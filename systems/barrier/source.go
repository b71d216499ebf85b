package barrier

import (
	"fmt"

	"ftbench/engine"
	"ftbench/systems/internal/checkpoint"
	"ftbench/systems/internal/stream"
	"ftbench/workloads"
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
	bytes := stream.StateBytes(len(snap.State))
	if len(snap.Chain) > 1 {
		state, ok := chainState(snap, func(m int64) *snapshot {
			v, _ := nd.part.Load(ctx, m)
			s, _ := v.(*snapshot)
			return s
		})
		if !ok {
			ctx.Record(engine.Event{Kind: evRestoreFailed, ID: n, Note: "a piece of its incremental chain missing"})
			return nil
		}
		whole := *snap
		whole.State = state
		snap, bytes = &whole, snap.Chain.Bytes()
	}
	ctx.Record(engine.Event{Kind: "restore", ID: n, Value: int64(ctx.Now() - start), Bytes: bytes})
	nd.maxSeen = n
	return snap
}

// source reads one partition of the log. On trigger n it records its
// offset and injects barrier(n) on every output channel.
//
// In the sync variant it is also the stop-the-world switch of the ABS
// paper's synchronous snapshots: it reads nothing from trigger n until n
// completes or is aborted, so the pipeline drains behind barrier(n) and no
// record is read after the cut while the checkpoint is in progress.
type source struct {
	node
	reader stream.SourceReader
	router *stream.Router
	// halted is the checkpoint a sync source stopped for (0: reading).
	halted int64
	// parked: the poll timer fired while halted and was not re-armed.
	parked bool
}

const pollTimer = 1

func newSource(par *params, g *stream.Graph, w workloads.Workload, log *workloads.Log, i int) *source {
	s := &source{
		reader: stream.SourceReader{W: w, Log: log, Part: int32(i)},
		router: g.Router(-1, i),
	}
	s.init(par, fmt.Sprintf("%s/%d", g.Plan.Source, i))
	s.outputs = g.Outputs(-1, i)
	return s
}

// Init does nothing: a source reads only once the coordinator deploys it
// with the offset to start from.
func (s *source) Init(engine.Ctx) {}

func (s *source) Handle(ctx engine.Ctx, from engine.ProcID, m engine.Msg) {
	switch m.Kind {
	case checkpoint.KindDeploy:
		s.deploy(ctx, m)
	case checkpoint.KindTrigger:
		if s.part.Current(m) {
			s.trigger(ctx, m.Val)
		}
	case checkpoint.KindComplete, checkpoint.KindAbort:
		if s.part.Current(m) {
			s.resume(ctx, m.Val)
		}
	case engine.KindStoreDone:
		// A source's snapshot is its offset alone: durable means done.
		n := m.Val >> 1
		s.part.Acknowledge(ctx, n, checkpoint.Ack{StateBytes: 8})
	case engine.KindStoreFailed:
		// The store failed the offset's write: the source declines the
		// checkpoint, as a Flink task reports a failed snapshot and the
		// coordinator aborts the checkpoint.
		s.part.Decline(ctx, m.Val>>1)
	}
}

func (s *source) deploy(ctx engine.Ctx, m engine.Msg) {
	n := s.part.OnDeploy(m)
	s.reader.Next = 0
	if n >= 0 {
		snap := s.load(ctx, n)
		if snap == nil {
			return // the restore failed (superseded, or the checkpoint is lost): the task stays idle
		}
		s.reader.Next = snap.Offset
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
	snap := &snapshot{Offset: s.reader.Next}
	s.forward(ctx, n, ctx.Now(), s.par.mode == modeUnaligned)
	ctx.Store().Put(checkpoint.Key(n, ctx.Self()), snap, 8, snapToken(n))
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

func (s *source) Timer(ctx engine.Ctx, _ int64) {
	if !s.part.Deployed {
		return
	}
	if s.halted != 0 {
		s.parked = true
		return
	}
	if read := s.reader.PollRouted(ctx, s.router, pollTimer); read > 0 {
		ctx.Count("barrier_source_records_read", read)
	}
}
