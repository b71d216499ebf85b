package snapshot

import (
	"ftbench/engine"
	"ftbench/systems"
	"ftbench/systems/internal/checkpoint"
	"ftbench/systems/internal/stream"
	"ftbench/workloads"
)

// On a dataflow, snapshot is a checkpointing scheme: the checkpoint
// coordinator triggers checkpoint n at the sources every --checkpoint-interval;
// a source records its offset and sends a marker on every output; a task
// records its state at the first marker and keeps processing — unlike an
// aligned barrier it blocks nothing — while recording every record that
// arrives on a channel whose marker has not arrived yet (the channel
// state); when every input's marker is in, it persists state and channel
// state and acknowledges. On a failure the coordinator rolls every task
// back to the last completed checkpoint: state is restored, the recorded
// channel state is re-injected (processed again before any new input) and
// the sources rewind. The sink makes effects visible with a two-phase
// commit on checkpoint completion (sink.go), so the run is exactly-once.

// dagJob is what every process of a dataflow deployment shares (read-only).
type dagJob struct {
	g     *stream.Graph
	coord engine.ProcID
}

// maxRetained keeps every completed checkpoint in the store (Flink's
// state.checkpoints.num-retained) so that Summarize can audit each one.
const maxRetained = 1 << 20

func compileDAG(job systems.Job) (*engine.Deployment, error) {
	interval, err := job.Opts.Duration(flagCheckpoint)
	if err != nil {
		return nil, err
	}
	dep := &engine.Deployment{}
	dj := &dagJob{}
	dj.g = stream.Build(dep, job.Workload.Plan(), job.Parallelism, job.Workers,
		func(g *stream.Graph, i int) engine.Process {
			return &source{
				job:    dj,
				reader: stream.SourceReader{W: job.Workload, Log: job.Log, Part: int32(i)},
				router: g.Router(-1, i), outputs: g.Outputs(-1, i),
			}
		},
		func(g *stream.Graph, s, i int) engine.Process { return newTask(dj, s, i) })
	var tasks []engine.ProcID
	for s := -1; s < len(dj.g.Stages); s++ {
		tasks = append(tasks, dj.g.Instances(s)...)
	}
	cfg := checkpoint.Config{Interval: interval, MaxConcurrent: 1, Tasks: tasks, Sources: dj.g.Source, Retain: maxRetained, Tolerable: -1}
	dj.coord = dep.Add(engine.ProcSpec{
		Name: "coordinator", Worker: -1,
		New: func() engine.Process { return checkpoint.NewCoordinator(cfg) },
	})
	dep.Coordinator = dj.coord
	return dep, nil
}

// pendingAcks are snapshots written but not yet acknowledged; the ack is
// sent only once the snapshot is durable (a message that depends on a write
// follows it) and, at a sink, once every transaction it lists is durable
// too: a restore takes a listed transaction whose record is missing for
// committed, so the record must exist before the checkpoint can complete.
type pendingAcks []pendingAck

type pendingAck struct {
	n      int64
	ack    checkpoint.Ack
	stored bool
}

func (a *pendingAcks) add(n int64, ack checkpoint.Ack) {
	*a = append(*a, pendingAck{n: n, ack: ack})
}

// durable marks snapshot n durable and sends every ack that is ready;
// ready(n) says whether what snapshot n depends on besides itself is
// durable (nil: nothing).
func (a *pendingAcks) durable(ctx engine.Ctx, part *checkpoint.Participant, n int64, ready func(int64) bool) {
	for i := range *a {
		if (*a)[i].n == n {
			(*a)[i].stored = true
		}
	}
	a.flush(ctx, part, ready)
}

// flush sends the acks that are ready, in checkpoint order.
func (a *pendingAcks) flush(ctx engine.Ctx, part *checkpoint.Participant, ready func(int64) bool) {
	kept := (*a)[:0]
	for _, x := range *a {
		if x.stored && (ready == nil || ready(x.n)) {
			part.Acknowledge(ctx, x.n, x.ack)
			continue
		}
		kept = append(kept, x)
	}
	*a = kept
}

// failed drops snapshot n, whose write the store failed, and declines the
// checkpoint.
func (a *pendingAcks) failed(ctx engine.Ctx, part *checkpoint.Participant, n int64) {
	for i, x := range *a {
		if x.n == n {
			*a = append((*a)[:i], (*a)[i+1:]...)
			part.Decline(ctx, n)
			return
		}
	}
}

const tick = 1

// sourceState is a source's part of a checkpoint.
type sourceState struct{ Next int64 }

type source struct {
	job     *dagJob
	reader  stream.SourceReader
	router  *stream.Router
	outputs []engine.ProcID
	part    checkpoint.Participant
	acks    pendingAcks
	polling bool
}

func (s *source) Init(engine.Ctx) { s.part.Coordinator = s.job.coord }

func (s *source) Handle(ctx engine.Ctx, _ engine.ProcID, m engine.Msg) {
	switch m.Kind {
	case engine.KindStoreDone:
		s.acks.durable(ctx, &s.part, m.Val, nil)
	case engine.KindStoreFailed:
		s.acks.failed(ctx, &s.part, m.Val)
	case checkpoint.KindDeploy:
		n := s.part.OnDeploy(m)
		s.reader.Next = 0
		if v, ok := s.part.Load(ctx, n); ok {
			s.reader.Next = v.(*sourceState).Next
			ctx.Record(engine.Event{Kind: "restore", ID: n, Value: s.reader.Next})
		}
		if !s.polling {
			s.polling = true
			ctx.After(0, tick)
		}
	case checkpoint.KindTrigger:
		if !s.part.Current(m) {
			return
		}
		// The source is the initiator: record, then markers on every
		// output before any further record. It has no input channels, so
		// its part is complete at once.
		n := m.Val
		sendMarkers(ctx, s.outputs, uint64(s.part.Attempt), func(engine.ProcID) int64 { return n })
		s.part.Persist(ctx, n, &sourceState{Next: s.reader.Next}, 8)
		s.acks.add(n, checkpoint.Ack{StateBytes: 8})
	}
}

func (s *source) Timer(ctx engine.Ctx, _ int64) { s.reader.PollRouted(ctx, s.router, tick) }

// taskState is a task's part of a checkpoint.
type taskState struct {
	Stage int
	KV    []stream.KV    // keyed state (nil for stateless stages and the sink)
	Txns  []int64        // sink: pre-committed transactions not yet committed
	Chans [][]engine.Msg // per input: the recorded channel state
}

type task struct {
	job     *dagJob
	stage   int
	st      *workloads.Stage
	op      *stream.Operator // nil for the sink
	sink    *sinkTxns        // nil except for the sink
	router  *stream.Router
	inputs  []engine.ProcID
	outputs []engine.ProcID
	inIdx   []int // by process id: index into inputs, -1 if not an input (see input)
	part    checkpoint.Participant
	cuts    cuts
	maxCut  int64 // highest checkpoint a cut was opened for
	acks    pendingAcks
	ctx     engine.Ctx
}

func newTask(dj *dagJob, s, i int) *task {
	g := dj.g
	t := &task{job: dj, stage: s, st: &g.Plan.Stages[s], router: g.Router(s, i),
		inputs: g.Inputs(s, i), outputs: g.Outputs(s, i), maxCut: -1}
	hi := engine.ProcID(0)
	for _, in := range t.inputs {
		hi = max(hi, in)
	}
	t.inIdx = make([]int, hi+1)
	for k := range t.inIdx {
		t.inIdx[k] = -1
	}
	for k, in := range t.inputs {
		t.inIdx[in] = k
	}
	if t.st.Sink {
		t.sink = &sinkTxns{}
	} else {
		t.op = stream.NewOperator(t.st, t.emit)
	}
	return t
}

func (t *task) Init(ctx engine.Ctx) {
	t.part.Coordinator = t.job.coord
	if t.sink != nil {
		t.sink.self = ctx.Self()
	}
	// Take no input until deployed: records of a newer attempt that arrive
	// before this task's deploy wait in their channels (using credit).
	for _, in := range t.inputs {
		ctx.Pause(in)
	}
}

func (t *task) Timer(ctx engine.Ctx, id int64) {
	if id == timerTxnRetry && t.sink != nil {
		t.sink.txns.Rewrite(ctx, t.sink.put)
	}
	if mutantSinkDeleteBeforeCommit && t.sink != nil {
		t.sink.mutant.timer(ctx, t.sink.self, id)
	}
}

func (t *task) Handle(ctx engine.Ctx, from engine.ProcID, m engine.Msg) {
	t.ctx = ctx
	switch {
	case m.Kind == engine.KindStoreDone:
		if m.Val < txnToken {
			t.acks.durable(ctx, &t.part, m.Val, t.txnsDurable)
		} else if t.sink != nil {
			t.sink.txns.Stored(m.Val - txnToken)
			t.acks.flush(ctx, &t.part, t.txnsDurable)
		}
	case m.Kind == engine.KindStoreFailed:
		if m.Val < txnToken {
			t.acks.failed(ctx, &t.part, m.Val)
		} else if t.sink != nil {
			t.sink.txns.Failed(ctx, m.Val-txnToken, timerTxnRetry)
		}
	case m.Kind == checkpoint.KindDeploy:
		t.deploy(ctx, m)
	case m.Kind == checkpoint.KindComplete:
		if t.part.Current(m) && t.sink != nil {
			t.sink.commit(ctx, m.Val)
		}
	case m.Kind == checkpoint.KindAbort:
		if t.part.Current(m) {
			if c := t.cuts.find(m.Val); c != nil {
				t.cuts.remove(c)
			}
		}
	case m.Kind == kindMarker:
		if i := t.input(from); i >= 0 && t.part.Deployed && int64(m.Key) == t.part.Attempt {
			t.marker(ctx, i, m.Val)
		}
	case m.Ctrl:
		// Other coordinator traffic (triggers go to sources only).
	default:
		i := t.input(from)
		if !t.part.Deployed || i < 0 {
			return // unreachable: inputs are paused until deployment
		}
		for _, c := range t.cuts {
			c.record(i, m)
		}
		t.process(ctx, m)
	}
}

// txnsDurable says whether every transaction a sink's snapshot n lists is
// durable (true for a task that is not a sink).
func (t *task) txnsDurable(n int64) bool { return t.sink == nil || t.sink.txns.DurableThrough(n) }

func (t *task) input(from engine.ProcID) int {
	if from < 0 || int(from) >= len(t.inIdx) {
		return -1
	}
	return t.inIdx[from]
}

func (t *task) process(ctx engine.Ctx, m engine.Msg) {
	if t.sink != nil {
		ctx.Work(t.st.Cost(ctx.Cost(), m))
		t.sink.pending = append(t.sink.pending, stream.CommitOf(m))
		return
	}
	t.op.Process(ctx, m)
}

func (t *task) emit(m engine.Msg) { t.router.Route(t.ctx, m) }

// marker is checkpoint n's marker arriving on input i.
func (t *task) marker(ctx engine.Ctx, i int, n int64) {
	c := t.cuts.find(n)
	if c == nil {
		if n <= t.maxCut {
			return // the late marker of a checkpoint aborted here
		}
		t.maxCut = n
		c = newCut(n, ctx.Now(), len(t.inputs), i, -1)
		c.snap = &taskState{Stage: t.stage}
		if t.sink != nil {
			c.snap.Txns = t.sink.precommit(ctx, n)
		} else if t.op.State != nil {
			c.snap.KV = t.op.Snapshot()
			ctx.Work(engine.Time(stream.StateBytes(len(c.snap.KV))) * ctx.Cost().SerdePerByte)
		}
		t.cuts = append(t.cuts, c)
		sendMarkers(ctx, t.outputs, uint64(t.part.Attempt), func(engine.ProcID) int64 { return n })
	} else {
		c.close(i)
	}
	if c.open == 0 {
		t.cuts.remove(c)
		t.persist(ctx, c)
	}
}

func (t *task) persist(ctx engine.Ctx, c *cut) {
	if mutantCLDropChannelState && c.id%5 == 0 {
		c.chans = make([][]engine.Msg, len(c.chans)) // the mutant's bug: channel state lost
	}
	c.snap.Chans = c.chans
	state := stream.StateBytes(len(c.snap.KV)) + 8*int64(len(c.snap.Txns))
	chans, _ := c.channelBytes()
	t.part.Persist(ctx, c.id, c.snap, state+chans)
	t.acks.add(c.id, checkpoint.Ack{StateBytes: state, ChannelBytes: chans})
}

// deploy starts the task in a new attempt: restore the checkpoint's state,
// re-inject its channel state, then take input.
func (t *task) deploy(ctx engine.Ctx, m engine.Msg) {
	n := t.part.OnDeploy(m)
	t.cuts, t.maxCut = nil, n
	if v, ok := t.part.Load(ctx, n); ok {
		snap := v.(*taskState)
		if t.sink != nil {
			t.sink.restore(ctx, snap.Txns)
		} else if t.op.State != nil {
			t.op.Restore(snap.KV)
		}
		injected := 0
		for _, ch := range snap.Chans {
			for _, r := range ch {
				t.process(ctx, r)
			}
			injected += len(ch)
		}
		ctx.Count(cntReinjected, int64(injected))
		ctx.Record(engine.Event{Kind: "restore", ID: n, Value: int64(injected)})
	}
	for _, in := range t.inputs {
		ctx.Resume(in)
	}
}
