package lineage

import (
	"fmt"

	"ftbench/engine"
	"ftbench/workloads"
)

// sstage is one Spark stage: the plan stages that run pipelined in one task,
// between two shuffles. A plan stage whose input is not Forward (the KeyBy's
// Hash, or Rebalance, Broadcast) is a wide dependency and starts a new stage,
// exactly as Spark's DAGScheduler cuts the lineage graph at shuffle
// dependencies (lecture 21.3.2, split_stages).
type sstage struct {
	ops   []int                  // plan stage indices, pipelined in this order
	keyed bool                   // holds keyed state: a state RDD per batch
	sink  bool                   // ends with the sink: the result stage
	out   workloads.Partitioning // how its output is shuffled to the next stage
}

// splitStages cuts a plan into Spark stages. Stage 0 starts at the source.
func splitStages(p *workloads.Plan) ([]sstage, error) {
	st := []sstage{{}}
	for i := range p.Stages {
		ps := &p.Stages[i]
		if ps.Input != workloads.Forward {
			st[len(st)-1].out = ps.Input
			st = append(st, sstage{})
		}
		cur := &st[len(st)-1]
		if cur.sink {
			return nil, fmt.Errorf("lineage: plan stage %q follows the sink", ps.Name)
		}
		cur.ops = append(cur.ops, i)
		cur.keyed = cur.keyed || ps.Keyed()
		cur.sink = ps.Sink
	}
	if !st[len(st)-1].sink {
		return nil, fmt.Errorf("lineage: the plan does not end with a sink")
	}
	return st, nil
}

// names lists a stage's operators: the source for stage 0, then its plan
// stages (for tests and events).
func (e *env) names(s int) []string {
	var n []string
	if s == 0 {
		n = append(n, e.plan.Source)
	}
	for _, op := range e.stages[s].ops {
		n = append(n, e.plan.Stages[op].Name)
	}
	return n
}

// rec is a record at rest in a shuffle block or a task result: the fields of
// engine.Msg a stage function reads, without the 16-byte interface Body, so
// the shuffle data retained since the last checkpoint costs 40 bytes a
// record. Born is not stored: every stage copies the source record's Born,
// which is a pure function of the offset (Log.BornAt).
type rec struct {
	key  uint64
	val  int64
	off  int64
	part int32
	sub  int32
	size int32
}

// recWire is the framing a record adds on the wire inside a block.
const recWire = 4

func toRec(m engine.Msg) rec {
	return rec{key: m.Key, val: m.Val, off: m.ID.Off, part: m.ID.Part, sub: m.ID.Sub, size: m.Size}
}

func (r *rec) msg(log *workloads.Log) engine.Msg {
	return engine.Msg{Key: r.key, Val: r.val, Size: r.size, Born: log.BornAt(r.off),
		ID: engine.EffectID{Part: r.part, Sub: r.sub, Off: r.off}}
}

// blockBytes is the wire size of a block of records.
func blockBytes(rs []rec) int64 {
	var n int64
	for i := range rs {
		n += int64(rs[i].size) + recWire
	}
	return n
}

// env is what every process of a run shares. It is immutable once Compile
// returns (the process ids are filled in before any process starts).
type env struct {
	w      workloads.Workload
	log    *workloads.Log
	plan   *workloads.Plan
	stages []sstage
	parts  []int // partitions per stage: the source's for stage 0, shuffle-partitions after
	cfg    config
	cost   *engine.CostModel
	// opCost[i] is what plan stage i's work costs and srcCost what reading
	// the source costs (CostModel.For): an executor runs every operator's
	// work, so it charges each at that operator's costs.
	opCost  []*engine.CostModel
	srcCost *engine.CostModel
	workers int // executors on the workers: cores per worker x workers
	nodes   int // workers; executor x runs on worker x % nodes
	driver  engine.ProcID
	execs   []engine.ProcID // executors by index: 0..workers-1 on the workers, then the standby
}

// onWorker lists the executors placed on worker w.
func (e *env) onWorker(w int) []int {
	var xs []int
	for x := w; x < e.workers; x += e.nodes {
		xs = append(xs, x)
	}
	return xs
}

func (e *env) last() int { return len(e.stages) - 1 }

// stateCost is the cost model of Spark stage s's first keyed operator,
// whose state a checkpoint of the stage serialises (the run's model for a
// stateless stage).
func (e *env) stateCost(s int) *engine.CostModel {
	for _, op := range e.stages[s].ops {
		if e.plan.Stages[op].Keyed() {
			return e.opCost[op]
		}
	}
	return e.cost
}

// stateful reports whether any stage keeps state, i.e. whether lineage grows
// across batches and checkpoints matter.
func (e *env) stateful() bool {
	for i := range e.stages {
		if e.stages[i].keyed {
			return true
		}
	}
	return false
}

// isCheckpoint reports whether batch b's state RDDs are checkpointed:
// every k-th batch (b = k-1, 2k-1, ...).
func (e *env) isCheckpoint(b int64) bool {
	return e.stateful() && (b+1)%int64(e.cfg.ckptEvery) == 0
}

func ckptKey(s, part int, b int64) string {
	return fmt.Sprintf("lineage/ckpt/%d/%d/%d", s, part, b)
}

func clampSize(n int64) int32 {
	if n > 1<<30 {
		return 1 << 30
	}
	return int32(n)
}
