package barrier

import (
	"fmt"

	"ftbench/engine"
	"ftbench/systems/internal/checkpoint"
	"ftbench/systems/internal/stream"
	"ftbench/workloads"
)

// task is one instance of a non-source stage: an operator (with keyed state
// if the stage is keyed) or the sink. It takes part in checkpoints as
// align.go describes.
type task struct {
	node
	stage  *workloads.Stage
	op     *stream.Operator             // nil for the sink
	inc    *checkpoint.IncrementalState // incremental checkpoints of op's keyed state
	sink   *sink                        // nil for operators
	router *stream.Router
	ctx    engine.Ctx // valid while handling a message, for emit

	inputs []engine.ProcID
	inIdx  []int32 // input index by ProcID, -1 if not an input
	// recv counts the data records consumed from each input (this
	// incarnation): announcements use it to tell which of the records they
	// overtook have been consumed since.
	recv []int64
	// lastBarrier is the newest barrier consumed from each input, so stale
	// and duplicate barriers are ignored.
	lastBarrier []int64
	cps         []*inflight // checkpoints in progress here, oldest first
	recording   int         // how many cps record channel state (fast path)
}

func newTask(par *params, g *stream.Graph, s, i int) *task {
	t := &task{stage: workloadStage(g, s), router: g.Router(s, i), inputs: g.Inputs(s, i)}
	t.init(par, fmt.Sprintf("%s/%d", t.stage.Name, i))
	t.outputs = g.Outputs(s, i)
	switch {
	case t.stage.Sink:
		t.sink = &sink{twoPC: par.twoPC, stage: t.stage, timeout: par.txnTimeout}
	default:
		t.op = stream.NewOperator(t.stage, t.emit)
		if par.incremental && t.op.State != nil {
			t.inc = checkpoint.NewIncremental(t.op, par.fullEvery)
		}
	}
	t.setInputs(t.inputs)
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
func (t *task) Timer(ctx engine.Ctx, _ int64) {
	if t.sink != nil {
		t.sink.txns.Rewrite(ctx, putTxn)
	}
}

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
		if t.part.Current(m) && t.sink != nil {
			t.sink.commitThrough(ctx, m.Val)
		}
		if t.part.Current(m) && t.inc != nil {
			t.inc.Complete(m.Val)
		}
		return
	case checkpoint.KindAbort:
		if t.part.Current(m) {
			t.abort(ctx, m.Val)
			if t.inc != nil {
				t.inc.Abort(m.Val)
			}
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
		t.process(ctx, m)
	}
}

func (t *task) process(ctx engine.Ctx, m engine.Msg) {
	t.ctx = ctx
	if t.sink != nil {
		t.sink.write(ctx, m)
		return
	}
	t.op.Process(ctx, m)
}

func (t *task) emit(m engine.Msg) { t.router.Route(t.ctx, m) }

func (t *task) deploy(ctx engine.Ctx, m engine.Msg) {
	n := t.part.OnDeploy(m)
	if n >= 0 {
		snap := t.load(ctx, n)
		if snap == nil {
			return // the restore failed (superseded, or the checkpoint is lost): the task stays idle
		}
		if t.op != nil && t.op.State != nil {
			t.op.Restore(snap.State)
			if t.inc != nil {
				t.inc.Restored(snap.Chain)
			}
		}
		if t.sink != nil {
			t.sink.recover(ctx, snap.Pending)
		}
		// Channel state goes in before any new input: those records were
		// in flight at the cut, ahead of everything the rewound sources
		// will send again.
		var replayed int64
		for _, f := range snap.Channel {
			for _, r := range f.Records {
				t.process(ctx, r)
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

// takeState copies the task's state into cp at the moment of its snapshot
// (the synchronous part of Flink's asynchronous snapshot), charging the
// serialisation.
func (t *task) takeState(ctx engine.Ctx, cp *inflight) {
	cp.snapshotted = true
	switch {
	case t.inc != nil:
		cp.snap.State, cp.snap.Chain = t.inc.Take(cp.id)
		cp.stateBytes = stream.StateBytes(len(cp.snap.State))
	case t.op != nil && t.op.State != nil:
		cp.snap.State = t.op.Snapshot()
		cp.stateBytes = stream.StateBytes(len(cp.snap.State))
	case t.sink != nil:
		var bytes int64
		cp.snap.Pending, bytes = t.sink.precommit(ctx, cp.id)
		if bytes > 0 {
			cp.outstanding++
			ctx.Record(engine.Event{Kind: "sink_precommit", ID: cp.id, Bytes: bytes})
		}
		cp.stateBytes = int64(8 * len(cp.snap.Pending))
	}
	ctx.Work(engine.Time(cp.stateBytes) * ctx.Cost().SerdePerByte)
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

// stored counts a durable write of a checkpoint in progress (its snapshot
// or its pre-commit; a rewritten transaction record marks only the
// transaction) and acknowledges the checkpoints now durable.
func (t *task) stored(ctx engine.Ctx, token int64) {
	if token&1 == 1 && t.sink != nil {
		t.sink.txns.Stored(token >> 1)
	}
	if cp := t.find(token >> 1); cp != nil {
		cp.outstanding--
	}
	var ready []*inflight
	for _, cp := range t.cps {
		if cp.persisted && cp.outstanding == 0 && !cp.declined && (t.sink == nil || t.sink.txns.DurableThrough(cp.id)) {
			ready = append(ready, cp)
		}
	}
	for _, cp := range ready {
		a := checkpoint.Ack{StateBytes: cp.stateBytes, ChannelBytes: cp.channelBytes}
		if len(cp.snap.Chain) > 0 {
			a.Refs = chainRefs(cp.snap.Chain, ctx.Self())
			a.RestoreBytes = cp.snap.Chain.Bytes() + cp.channelBytes
		}
		t.part.Acknowledge(ctx, cp.id, a)
		t.remove(cp)
	}
}

// storeFailed handles a write the store failed (store-down): the task
// declines the checkpoint the write was for, as a Flink task reports a
// failed snapshot to the CheckpointCoordinator, which aborts it; the task
// keeps its part until the abort arrives. A failed transaction record is
// written again (the sink must not lose the transaction: a later
// checkpoint lists it and commits it).
func (t *task) storeFailed(ctx engine.Ctx, token int64) {
	n := token >> 1
	if token&1 == 1 && t.sink != nil {
		t.sink.txns.Failed(ctx, n, 0)
	}
	if cp := t.find(n); cp != nil && !cp.declined {
		cp.declined = true
		t.part.Decline(ctx, n)
	}
}
