// Package none is the baseline with no fault tolerance: no acks, no
// checkpoints, no durable state. A crash loses the operator state and every
// record in flight, and a restarted source resumes at the log's current end,
// so the system is at-most-once. It is the throughput ceiling the other
// systems are measured against. Its operators chain as barrier's do
// (--chaining, Flink's default; stream.Chain), so that barrier's overhead
// over none is its checkpoints' alone.
package none

import (
	"ftbench/engine"
	"ftbench/systems"
	"ftbench/systems/internal/stream"
	"ftbench/workloads"
)

func init() { systems.Register(system{}) }

type system struct{}

func (system) Name() string { return "none" }
func (system) Describe() string {
	return "no fault tolerance: a crash loses state and in-flight records (the throughput ceiling)"
}
func (system) Variants() []string { return []string{"default"} }

// Flags: operator chaining as barrier has it (Flink's default, with
// checkpointing off or on alike), so that barrier's overhead over none is
// that of its checkpoints alone.
func (system) Flags() []systems.Flag { return stream.ChainingFlags() }

// Claim: a crash loses in-flight records (at most once) and the counted
// state, so a reader sees a count restart from zero (non-monotonic).
func (system) Claim(string, systems.Options) systems.Claim {
	return systems.Claim{Guarantee: systems.AtMostOnce, Monotonic: false}
}

func (system) Compile(job systems.Job) (*engine.Deployment, error) {
	chaining, err := job.Opts.Bool("chaining")
	if err != nil {
		return nil, err
	}
	reuse, err := job.Opts.Bool("object-reuse")
	if err != nil {
		return nil, err
	}
	dep := &engine.Deployment{Coordinator: -1}
	stream.BuildChained(dep, job.Workload.Plan(), job.Parallelism, job.Workers, chaining,
		func(g *stream.Graph, i int) engine.Process {
			s := &source{reader: stream.SourceReader{W: job.Workload, Log: job.Log, Part: int32(i)}, router: g.Router(-1, i)}
			if end := g.ChainEnd(-1); end >= 0 {
				s.chain = stream.NewChain(g, 0, end, i, false, reuse, sinkWrite)
				s.emit = s.chain.Emitter()
			}
			return s
		},
		func(g *stream.Graph, s, i int) engine.Process {
			return &task{chain: stream.NewChain(g, s, g.ChainEnd(s), i, true, reuse, sinkWrite)}
		})
	// No scheduler redeploys the baseline's tasks on other workers: they
	// come back with their own (with spare slots too). A redeployed copy
	// running beside one cut off by a partition would read the same
	// partition twice, which the baseline has nothing to fence.
	for i := range dep.Procs {
		dep.Procs[i].Pinned = true
	}
	return dep, nil
}

const tick = 1

type source struct {
	reader stream.SourceReader
	router *stream.Router
	chain  *stream.Chain // the operators chained to it; nil: none
	emit   func(engine.Msg)
}

func (s *source) Init(ctx engine.Ctx) {
	// Nothing durable: a restarted source starts at the log's current end
	// (Kafka's auto.offset.reset=latest), skipping what was appended while it
	// was down.
	s.reader.Next = s.reader.Log.Appended(ctx.Now())
	ctx.After(0, tick)
}

func (s *source) Handle(engine.Ctx, engine.ProcID, engine.Msg) {}

func (s *source) Timer(ctx engine.Ctx, _ int64) {
	if s.chain == nil {
		s.reader.PollRouted(ctx, s.router, tick)
		return
	}
	s.chain.Bind(ctx)
	if again, done := s.reader.Poll(ctx, s.emit); !done {
		ctx.After(again, tick)
	}
}

// task runs a chain of operators (one without chaining).
type task struct {
	chain *stream.Chain
}

func (t *task) Init(engine.Ctx)         {}
func (t *task) Timer(engine.Ctx, int64) {}

func (t *task) Handle(ctx engine.Ctx, _ engine.ProcID, m engine.Msg) { t.chain.Process(ctx, m) }

// sinkWrite is the sink: every record's effect is visible on arrival.
func sinkWrite(st *workloads.Stage) func(engine.Ctx, engine.Msg, *engine.CostModel) {
	return func(ctx engine.Ctx, m engine.Msg, costs *engine.CostModel) {
		ctx.Work(st.Cost(costs, m))
		ctx.Commit(stream.CommitOf(m))
	}
}

// DescribeMsg names the baseline's messages for a run's trace: it sends
// data records only.
func (system) DescribeMsg(systems.Job) func(engine.Msg) engine.MsgInfo {
	return func(m engine.Msg) engine.MsgInfo {
		if !m.Ctrl {
			return systems.Record
		}
		return engine.MsgInfo{}
	}
}
