package stormack

import (
	"ftbench/engine"
	"ftbench/systems/internal/storm"
	"ftbench/systems/internal/stream"
)

// bolt runs one stage of the plan before the sink. Each output is anchored
// on the input being processed, and the input is acked once its stage
// function has returned, i.e. after all its children were emitted. A keyed
// stage that runs as a bolt keeps its state in memory, which a crash loses:
// plain Storm has no managed state.
type bolt struct {
	t       *topo
	stage   int
	op      *stream.Operator
	router  *stream.Router
	col     storm.Collector
	ctx     engine.Ctx
	cur     *storm.Input
	scratch []engine.ProcID
}

func newBolt(t *topo, stage, i int) *bolt {
	b := &bolt{t: t, stage: stage, router: t.g.Router(stage, i), col: storm.Collector{Ackers: t.ackers}}
	b.op = stream.NewOperator(&t.plan.Stages[stage], b.emit)
	return b
}

func (b *bolt) Init(engine.Ctx)         {}
func (b *bolt) Timer(engine.Ctx, int64) {}

func (b *bolt) Handle(ctx engine.Ctx, _ engine.ProcID, m engine.Msg) {
	if m.Kind != storm.KindTuple {
		return
	}
	rec, ids := storm.Payload(m)
	in := storm.Input{Edges: ids}
	b.ctx, b.cur = ctx, &in
	b.op.Process(ctx, rec)
	b.col.Ack(ctx, &in)
	b.cur = nil
}

func (b *bolt) emit(out engine.Msg) {
	for _, to := range b.t.targets(b.stage, b.router, &out, &b.scratch) {
		b.ctx.Send(to, storm.WithID(out, b.col.Anchor(b.ctx, b.cur)))
	}
}

// sink is the last task: it applies the fused keyed stage (if any) to the
// external store, makes every result visible with ctx.Commit, and then acks
// the input. The store stands for the database a Storm topology writes to
// (Redis INCRBY, an HBase increment): it lives off the workers, so its
// contents survive a crash of the sink task, and an increment applied twice
// stays applied twice — replays show as duplicates and overcounts.
type sink struct {
	t     *topo
	ext   map[uint64]int64 // this instance's partition of the external store
	col   storm.Collector
	ctx   engine.Ctx
	count int // tuples received by this incarnation (failEvery)
}

func newSink(t *topo, ext map[uint64]int64) *sink {
	return &sink{t: t, ext: ext, col: storm.Collector{Ackers: t.ackers}}
}

func (s *sink) Init(engine.Ctx)         {}
func (s *sink) Timer(engine.Ctx, int64) {}

func (s *sink) Handle(ctx engine.Ctx, _ engine.ProcID, m engine.Msg) {
	if m.Kind != storm.KindTuple {
		return
	}
	rec, ids := storm.Payload(m)
	in := storm.Input{Edges: ids}
	s.ctx = ctx
	s.count++
	if s.t.failEvery > 0 && s.count%s.t.failEvery == 0 {
		// The write was refused (the lecture's "database exception"): fail the
		// tree now instead of waiting for the timeout.
		s.col.Fail(ctx, &in)
		return
	}
	if f := s.t.fused; f != nil {
		// This process is the fused keyed stage's instance (count/i), so
		// ctx.Cost() is that operator's model; the write below pays the
		// sink's (sinkCost).
		ctx.Work(f.Cost(ctx.Cost(), rec))
		v := s.ext[rec.Key]
		f.Update(&v, rec, s.write)
		s.ext[rec.Key] = v
	} else {
		s.write(rec)
	}
	s.col.Ack(ctx, &in)
}

func (s *sink) write(out engine.Msg) {
	s.ctx.Work(s.t.sink.Cost(s.t.sinkCost, out))
	s.ctx.Commit(stream.CommitOf(out))
}
