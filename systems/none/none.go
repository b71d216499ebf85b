// Package none is the baseline with no fault tolerance: no acks, no
// checkpoints, no durable state. A crash loses the operator state and every
// record in flight, and a restarted source resumes at the log's current end,
// so the system is at-most-once. It is the throughput ceiling the other
// systems are measured against.
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
func (system) Variants() []string    { return []string{"default"} }
func (system) Flags() []systems.Flag { return nil }

// Claim: a crash loses in-flight records (at most once) and the counted
// state, so a reader sees a count restart from zero (non-monotonic).
func (system) Claim(string, systems.Options) systems.Claim {
	return systems.Claim{Guarantee: systems.AtMostOnce, Monotonic: false}
}

func (system) Compile(job systems.Job) (*engine.Deployment, error) {
	dep := &engine.Deployment{Coordinator: -1}
	stream.Build(dep, job.Workload.Plan(), job.Parallelism, job.Workers,
		func(g *stream.Graph, i int) engine.Process {
			return &source{reader: stream.SourceReader{W: job.Workload, Log: job.Log, Part: int32(i)}, router: g.Router(-1, i)}
		},
		func(g *stream.Graph, s, i int) engine.Process {
			t := &task{router: g.Router(s, i), stage: &g.Plan.Stages[s]}
			if !t.stage.Sink {
				t.op = stream.NewOperator(t.stage, t.emit)
			}
			return t
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
}

func (s *source) Init(ctx engine.Ctx) {
	// Nothing durable: a restarted source starts at the log's current end
	// (Kafka's auto.offset.reset=latest), skipping what was appended while it
	// was down.
	s.reader.Next = s.reader.Log.Appended(ctx.Now())
	ctx.After(0, tick)
}

func (s *source) Handle(engine.Ctx, engine.ProcID, engine.Msg) {}

func (s *source) Timer(ctx engine.Ctx, _ int64) { s.reader.PollRouted(ctx, s.router, tick) }

type task struct {
	stage  *workloads.Stage
	op     *stream.Operator // nil for the sink
	router *stream.Router
	ctx    engine.Ctx
}

func (t *task) Init(engine.Ctx)         {}
func (t *task) Timer(engine.Ctx, int64) {}

func (t *task) Handle(ctx engine.Ctx, _ engine.ProcID, m engine.Msg) {
	if t.op == nil {
		ctx.Work(t.stage.Cost(ctx.Cost(), m))
		ctx.Commit(stream.CommitOf(m))
		return
	}
	t.ctx = ctx
	t.op.Process(ctx, m)
}

func (t *task) emit(m engine.Msg) { t.router.Route(t.ctx, m) }
