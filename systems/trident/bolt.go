package trident

import (
	"ftbench/engine"
	"ftbench/systems/internal/storm"
	"ftbench/systems/internal/stream"
)

// bolt runs one stage of the plan before persistentAggregate (Trident's
// each/filter, a partition of the processing phase). Its outputs belong to
// the input's batch; it counts them per receiving task and reports the
// counts once it has finished the batch (see tracker). A
// keyed stage that runs here (bank's debit) keeps its state in memory, not
// in a Trident state: a crash loses it and a replayed batch is applied to
// it again.
type bolt struct {
	t       *topo
	stage   int
	op      *stream.Operator
	router  *stream.Router
	col     storm.Collector
	trk     tracker
	next    []engine.ProcID       // the next stage's tasks
	index   map[engine.ProcID]int // position in next
	ctx     engine.Ctx
	cur     *tracked
	scratch []engine.ProcID
}

func newBolt(t *topo, stage, i int) *bolt {
	b := &bolt{t: t, stage: stage, router: t.g.Router(stage, i), col: storm.Collector{Ackers: t.ackers}}
	b.next, b.index = t.downstream(stage)
	b.trk = newTracker(t.upstream(stage), len(b.next))
	b.op = stream.NewOperator(&t.plan.Stages[stage], b.emit)
	return b
}

func (b *bolt) Init(engine.Ctx)         {}
func (b *bolt) Timer(engine.Ctx, int64) {}

func (b *bolt) Handle(ctx engine.Ctx, _ engine.ProcID, m engine.Msg) {
	var tb *tracked
	switch m.Kind {
	case storm.KindTuple:
		rec, tx := untag(m)
		if tb = b.trk.get(tx); tb == nil {
			return // an older attempt's tuple
		}
		tb.received++
		b.ctx, b.cur = ctx, tb
		b.op.Process(ctx, rec)
		b.cur = nil
	case kindCount:
		tb = b.trk.count(m.Body.(*countMsg))
	}
	if b.trk.finished(tb) {
		b.trk.finish(ctx, &b.col, tb, b.next)
	}
}

func (b *bolt) emit(out engine.Msg) {
	for _, to := range b.t.targets(b.stage, b.router, &out, &b.scratch) {
		b.ctx.Send(to, withTx(out, b.cur.tx))
		b.cur.sent[b.index[to]]++
	}
}
