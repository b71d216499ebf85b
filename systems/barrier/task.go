package barrier

import (
	"fmt"

	"ftbench/engine"
	"ftbench/systems/internal/checkpoint"
	"ftbench/systems/internal/stream"
)

// task is one instance of a chain headed by a non-source stage: its input
// side and the chain of operators behind it (chain.go). It takes part in
// checkpoints as align.go describes: barriers are aligned at the chain's
// inputs only, and its snapshot holds every chained operator's state.
type task struct {
	node

	inputs []engine.ProcID
	inIdx  []int32 // input index by ProcID, -1 if not an input
	// recv counts the data records consumed from each input (this
	// incarnation): announcements use it to tell which of the records they
	// overtook have been consumed since.
	recv []int64
	// lastBarrier is the newest barrier consumed from each input, so stale
	// and duplicate barriers are ignored.
	lastBarrier []int64
	recording   int // how many cps record channel state (fast path)
}

func newTask(par *params, g *stream.Graph, s, i int) *task {
	end := g.ChainEnd(s)
	t := &task{}
	t.init(par, fmt.Sprintf("%s/%d", workloadStage(g, s).Name, i))
	t.chain = newChain(par, g, s, end, i, true)
	t.outputs = g.Outputs(end, i)
	t.setInputs(g.Inputs(s, i))
	return t
}

func (t *task) setInputs(inputs []engine.ProcID) {
	t.inputs = inputs
	size := t.par.nprocs
	for _, in := range inputs {
		size = max(size, int(in)+1)
	}
	t.inIdx = make([]int32, size)
	for i := range t.inIdx {
		t.inIdx[i] = -1
	}
	for i, in := range inputs {
		t.inIdx[in] = int32(i)
	}
	t.recv = make([]int64, len(inputs))
	t.lastBarrier = make([]int64, len(inputs))
	for i := range t.lastBarrier {
		t.lastBarrier[i] = -1
	}
}

// Init does nothing: a task runs only once the coordinator deploys it.
func (t *task) Init(engine.Ctx) {}

// Timer is the sink's only timer: write again the transaction records the
// store failed.
func (t *task) Timer(ctx engine.Ctx, _ int64) { t.rewriteTxns(ctx) }

func (t *task) Handle(ctx engine.Ctx, from engine.ProcID, m engine.Msg) {
	switch m.Kind {
	case checkpoint.KindDeploy:
		t.deploy(ctx, m)
		return
	case engine.KindStoreDone:
		t.stored(ctx, m.Val)
		return
	case engine.KindStoreFailed:
		t.storeFailed(ctx, m.Val)
		return
	case checkpoint.KindComplete:
		if t.part.Current(m) {
			t.chain.complete(ctx, m.Val)
		}
		return
	case checkpoint.KindAbort:
		if t.part.Current(m) {
			t.abort(ctx, m.Val)
			t.chain.abort(m.Val)
		}
		return
	case checkpoint.KindAlignTimeout:
		if t.part.Current(m) {
			t.alignTimeout(ctx, m.Val)
		}
		return
	case checkpoint.KindTrigger, checkpoint.KindAck:
		return
	}
	if from < 0 || int(from) >= len(t.inIdx) || t.inIdx[from] < 0 {
		return
	}
	if !t.part.Deployed {
		t.hold(ctx, from, m)
		return
	}
	t.input(ctx, int(t.inIdx[from]), m, ctx.Overtaken())
}

// input dispatches a message from input i; ov is what an overtaking
// message jumped.
func (t *task) input(ctx engine.Ctx, i int, m engine.Msg, ov []engine.Msg) {
	switch m.Kind {
	case kindBarrier:
		t.onBarrier(ctx, i, m, false, nil)
	case kindPriority:
		t.onBarrier(ctx, i, m, true, ov)
	case kindAnnounce:
		t.onAnnounce(ctx, i, m, ov)
	default:
		t.recv[i]++
		if t.recording > 0 {
			t.record(i, m)
		}
		t.chain.Process(ctx, m)
	}
}

func (t *task) deploy(ctx engine.Ctx, m engine.Msg) {
	n := t.part.OnDeploy(m)
	if n >= 0 {
		snap := t.load(ctx, n)
		if snap == nil {
			return // the restore failed (superseded, or the checkpoint is lost): the task stays idle
		}
		t.chain.restore(ctx, snap)
		// Channel state goes in before any new input: those records were
		// in flight at the cut, ahead of everything the rewound sources
		// will send again.
		var replayed int64
		for _, f := range snap.Channel {
			for _, r := range f.Records {
				t.chain.Process(ctx, r)
			}
			replayed += int64(len(f.Records))
		}
		if replayed > 0 {
			ctx.Count("barrier_channel_state_records_restored", replayed)
		}
	}
	for _, h := range t.release(ctx) {
		t.input(ctx, int(t.inIdx[h.from]), h.m, h.ov)
	}
}

// takeState copies the chain's state into cp at the moment of its
// snapshot (the synchronous part of Flink's asynchronous snapshot).
func (t *task) takeState(ctx engine.Ctx, cp *inflight) {
	cp.snapshotted = true
	cp.stateBytes = t.chain.takeState(ctx, cp)
}

// persist writes the snapshot once the state is taken and every input's
// channel state is known; the ack waits for the write (and the sink's
// pre-commit) to be durable.
func (t *task) persist(ctx engine.Ctx, cp *inflight) {
	cp.persisted = true
	var chBytes int64
	for i, recs := range cp.chans {
		if len(recs) == 0 || mutantUnalignedDropChannelState { // the mutant drops them
			continue
		}
		cp.snap.Channel = append(cp.snap.Channel, inFlight{From: t.inputs[i], Records: recs})
		for _, r := range recs {
			chBytes += int64(ctx.Cost().WireBytes(r.Size))
		}
	}
	cp.chans, cp.ann = nil, nil
	cp.channelBytes = chBytes
	ctx.Work(engine.Time(chBytes) * ctx.Cost().SerdePerByte)
	if len(t.inputs) > 1 {
		ctx.Record(engine.Event{Kind: "alignment", ID: cp.id, Value: int64(cp.lastAt - cp.firstAt)})
	}
	cp.outstanding++
	ctx.Record(engine.Event{Kind: "snapshot_write", ID: cp.id, Bytes: 16 + cp.stateBytes + chBytes})
	ctx.Store().Put(checkpoint.Key(cp.id, ctx.Self()), &cp.snap, 16+cp.stateBytes+chBytes, snapToken(cp.id))
}
