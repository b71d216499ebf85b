// Package stream is the record-at-a-time dataflow machinery that several
// systems share: placing a plan's operator instances on workers, routing
// records between them, running stage functions with their keyed state, and
// reading the source log. Systems add their fault-tolerance protocol around it.
package stream

import (
	"fmt"
	"sort"
	"strings"

	"ftbench/engine"
	"ftbench/keyed"
	"ftbench/workloads"
)

// Graph is a plan compiled to operator instances. Stage -1 is the source.
// With chaining, a stage chained into its predecessor runs in the
// predecessor's processes: Stages lists those same processes for it, so
// Inputs of a chain's head and Outputs of a chain's last stage name the
// neighbouring chains' processes.
type Graph struct {
	Plan   *workloads.Plan
	Par    int
	Source []engine.ProcID
	Stages [][]engine.ProcID
	// head[s+1] is the first stage of the chain stage s runs in (s itself
	// when it heads one); nil: no chaining.
	head []int
}

// Chainable reports whether stage s of plan runs in its predecessor's task
// under Flink's chaining rules (StreamingJobGraphGenerator.isChainable):
// the downstream operator has exactly one input edge, the same parallelism
// and slot-sharing group as its upstream, an operator chaining strategy
// that allows it (sources are HEAD, every other ftbench operator ALWAYS),
// and a forward partitioner. In ftbench's linear plans every operator has
// one input, one parallelism and one slot-sharing group, so the rule is
// the edge's partitioning: a forward edge chains; keyBy (hash), rebalance
// and broadcast edges cross the network.
func Chainable(plan *workloads.Plan, s int) bool {
	return s >= 0 && s < len(plan.Stages) && plan.Stages[s].Input == workloads.Forward
}

// Build adds the source and every stage's instances to dep, one process per
// operator instance, instance i on worker i mod workers (one slice of the
// pipeline per worker, as Flink's slot sharing places it). newSource and
// newTask create the processes on (re)start. Each instance pays its
// operator's costs (ProcSpec.CostOp), so a per-operator override (--cost
// count.state-cpu=8us) reaches every charge its process makes: stage costs,
// sends, snapshot serialisation.
func Build(dep *engine.Deployment, plan *workloads.Plan, par, workers int,
	newSource func(g *Graph, i int) engine.Process,
	newTask func(g *Graph, stage, i int) engine.Process) *Graph {
	return BuildChained(dep, plan, par, workers, false, newSource, newTask)
}

// BuildChained is Build with Flink's operator chaining when chain is set:
// a stage Chainable into its predecessor adds no process of its own but
// runs in its predecessor's (ProcSpec.Chain lists the chain's operators,
// and the process is named after them, "count→sink/0"). newSource builds
// instance i of the chain the source heads; newTask(g, s, i) instance i of
// the chain stage s heads (ChainEnd gives its last stage). A chained
// process pays its head operator's costs (CostOp); its chained operators
// charge their own (engine.CostModel.For).
func BuildChained(dep *engine.Deployment, plan *workloads.Plan, par, workers int, chain bool,
	newSource func(g *Graph, i int) engine.Process,
	newTask func(g *Graph, stage, i int) engine.Process) *Graph {
	g := &Graph{Plan: plan, Par: par}
	if chain {
		g.head = make([]int, len(plan.Stages)+1)
		for s := -1; s < len(plan.Stages); s++ {
			g.head[s+1] = s
			if Chainable(plan, s) {
				g.head[s+1] = g.head[s]
			}
		}
	}
	add := func(head, i int, newProc func() engine.Process) engine.ProcID {
		op := g.opName(head)
		spec := engine.ProcSpec{Name: fmt.Sprintf("%s/%d", op, i), Op: op, CostOp: op, Index: i, Worker: i % workers, New: newProc}
		if end := g.ChainEnd(head); end > head {
			for s := head; s <= end; s++ {
				spec.Chain = append(spec.Chain, g.opName(s))
			}
			spec.Name = fmt.Sprintf("%s/%d", strings.Join(spec.Chain, "→"), i)
		}
		return dep.Add(spec)
	}
	for i := 0; i < par; i++ {
		i := i
		g.Source = append(g.Source, add(-1, i, func() engine.Process { return newSource(g, i) }))
	}
	g.Stages = make([][]engine.ProcID, len(plan.Stages))
	for s := range plan.Stages {
		if h := g.Head(s); h != s {
			g.Stages[s] = g.Instances(h)
			continue
		}
		for i := 0; i < par; i++ {
			s, i := s, i
			g.Stages[s] = append(g.Stages[s], add(s, i, func() engine.Process { return newTask(g, s, i) }))
		}
	}
	return g
}

func (g *Graph) opName(stage int) string {
	if stage < 0 {
		return g.Plan.Source
	}
	return g.Plan.Stages[stage].Name
}

// Head is the first stage of the chain stage runs in (-1: the source's).
func (g *Graph) Head(stage int) int {
	if g.head == nil {
		return stage
	}
	return g.head[stage+1]
}

// ChainEnd is the last stage of the chain headed by stage head.
func (g *Graph) ChainEnd(head int) int {
	end := head
	for end+1 < len(g.Plan.Stages) && g.Head(end+1) == g.Head(head) {
		end++
	}
	return end
}

// Heads lists the stages that head a chain (-1: the source), in plan
// order: one process per instance each.
func (g *Graph) Heads() []int {
	var hs []int
	for s := -1; s < len(g.Plan.Stages); s++ {
		if g.Head(s) == s {
			hs = append(hs, s)
		}
	}
	return hs
}

// Tasks lists every process of the graph once, chain by chain in plan
// order.
func (g *Graph) Tasks() []engine.ProcID {
	var ts []engine.ProcID
	for _, h := range g.Heads() {
		ts = append(ts, g.Instances(h)...)
	}
	return ts
}

// Instances returns the instances of stage (-1: source).
func (g *Graph) Instances(stage int) []engine.ProcID {
	if stage < 0 {
		return g.Source
	}
	return g.Stages[stage]
}

// Outputs lists the instances that instance self of stage may send to.
func (g *Graph) Outputs(stage, self int) []engine.ProcID {
	if stage+1 >= len(g.Stages) {
		return nil
	}
	next := g.Stages[stage+1]
	if g.Plan.Stages[stage+1].Input == workloads.Forward {
		return next[self%len(next) : self%len(next)+1]
	}
	return next
}

// Inputs lists the instances that may send to instance self of stage.
func (g *Graph) Inputs(stage, self int) []engine.ProcID {
	prev := g.Instances(stage - 1)
	if g.Plan.Stages[stage].Input != workloads.Forward {
		return prev
	}
	var in []engine.ProcID
	for i, id := range prev {
		if i%len(g.Stages[stage]) == self {
			in = append(in, id)
		}
	}
	return in
}

// Router sends the outputs of one instance to the next stage.
type Router struct {
	targets []engine.ProcID
	part    workloads.Partitioning
	self    int
	rr      int
}

// Router returns the router for outputs of instance self of stage (-1:
// source); nil for the last stage.
func (g *Graph) Router(stage, self int) *Router {
	if stage+1 >= len(g.Stages) {
		return nil
	}
	return &Router{targets: g.Stages[stage+1], part: g.Plan.Stages[stage+1].Input, self: self}
}

// Target picks the receiver of m (for all but Broadcast).
func (r *Router) Target(m *engine.Msg) engine.ProcID {
	n := len(r.targets)
	switch r.part {
	case workloads.Hash:
		return r.targets[KeyPartition(m.Key, n)]
	case workloads.Rebalance:
		r.rr++
		return r.targets[r.rr%n]
	default:
		return r.targets[r.self%n]
	}
}

// Route sends m to its receiver(s) through ctx.
func (r *Router) Route(ctx engine.Ctx, m engine.Msg) {
	if r.part == workloads.Broadcast {
		for _, t := range r.targets {
			ctx.Send(t, m)
		}
		return
	}
	ctx.Send(r.Target(&m), m)
}

// KeyPartition is the instance of n that owns key.
func KeyPartition(key uint64, n int) int { return workloads.KeyPartition(key, n) }

// Operator runs one non-sink stage's function on records, with its keyed state.
type Operator struct {
	Stage *workloads.Stage
	State *keyed.Table // nil for stateless stages
	// Changed, when not nil, collects the keys updated since it was last
	// replaced or cleared, in first-update order (incremental checkpoints:
	// a RocksDB memtable's keys; Kafka Streams: the record cache's dirty
	// keys).
	Changed *keyed.Set
	// Costs is the model the operator charges; nil: its process's
	// (Ctx.Cost). A chained operator that is not its chain's head pays its
	// own operator's model.
	Costs *engine.CostModel
	emit  func(engine.Msg)
}

// NewOperator makes an operator that hands every output to emit.
func NewOperator(st *workloads.Stage, emit func(engine.Msg)) *Operator {
	o := &Operator{Stage: st, emit: emit}
	if st.Keyed() {
		o.State = keyed.New(0)
	}
	return o
}

// Process charges the stage's CPU cost and applies it to m.
func (o *Operator) Process(ctx engine.Ctx, m engine.Msg) {
	c := o.Costs
	if c == nil {
		c = ctx.Cost()
	}
	ctx.Work(o.Stage.Cost(c, m))
	if o.State != nil {
		// Update works on the key's slot in place: emit only sends, and a
		// plan is acyclic, so nothing inserts into this table meanwhile.
		v, _ := o.State.Ptr(m.Key)
		o.Stage.Update(v, m, o.emit)
		if o.Changed != nil {
			o.Changed.Add(m.Key)
		}
		return
	}
	o.Stage.Fn(m, o.emit)
}

// KV is one key's state, for snapshots.
type KV struct {
	Key uint64
	Val int64
}

// StateBytes is the serialized size of a keyed state of n keys.
func StateBytes(n int) int64 { return int64(n) * 16 }

// Snapshot copies the keyed state in key order (a deterministic, immutable
// copy to hand to the store).
func (o *Operator) Snapshot() []KV {
	kvs := make([]KV, 0, o.State.Len())
	o.State.Range(func(k uint64, v int64) { kvs = append(kvs, KV{k, v}) })
	sort.Slice(kvs, func(i, j int) bool { return kvs[i].Key < kvs[j].Key })
	return kvs
}

// Restore replaces the keyed state with a snapshot.
func (o *Operator) Restore(kvs []KV) {
	o.State = keyed.New(len(kvs))
	for _, kv := range kvs {
		o.State.Set(kv.Key, kv.Val)
	}
}

// Apply overwrites the keys of a delta snapshot (newer values win).
func (o *Operator) Apply(kvs []KV) {
	for _, kv := range kvs {
		o.State.Set(kv.Key, kv.Val)
	}
}

// CommitOf is the effect a sink record makes visible.
func CommitOf(m engine.Msg) engine.Commit {
	return engine.Commit{ID: m.ID, Key: m.Key, Value: m.Val, Born: m.Born}
}

// SourceReader reads one partition of the source log.
type SourceReader struct {
	W     workloads.Workload
	Log   *workloads.Log
	Part  int32
	Next  int64 // next offset to read
	Batch int   // records per poll, so backpressure can stop the source between polls

	// set during PollRouted, so routing needs no closure per poll
	routeCtx engine.Ctx
	router   *Router
}

// PollRouted is the source's timer step: it polls, routes every record read
// through router, and re-arms timer id unless the log is exhausted. It
// returns how many records it read.
func (r *SourceReader) PollRouted(ctx engine.Ctx, router *Router, timer int64) int64 {
	before := r.Next
	r.routeCtx, r.router = ctx, router
	again, done := r.Poll(ctx, r.route)
	r.routeCtx = nil
	if !done {
		ctx.After(again, timer)
	}
	return r.Next - before
}

func (r *SourceReader) route(m engine.Msg) { r.router.Route(r.routeCtx, m) }

// Poll reads up to Batch appended records, charging the source's CPU, and
// hands each to emit. It returns how long to wait before polling again and
// whether the log is exhausted.
//
// While the partition is down (source-down: its leader is gone) the poll
// fetches nothing and asks to be called again when it is back.
func (r *SourceReader) Poll(ctx engine.Ctx, emit func(engine.Msg)) (again engine.Time, done bool) {
	total := r.Log.Total()
	if r.Next >= total {
		return 0, true
	}
	if down, until := workloads.SourceDown(ctx, r.Log, r.Part); down {
		return until - ctx.Now(), false
	}
	avail := r.Log.Appended(ctx.Now())
	batch := r.Batch
	if batch <= 0 {
		batch = 32
	}
	for n := 0; n < batch && r.Next < avail; n++ {
		m := r.W.Record(r.Part, r.Next)
		m.Born = r.Log.BornAt(r.Next)
		r.Next++
		ctx.Work(ctx.Cost().SourceRecord)
		emit(m)
	}
	if r.Next >= total {
		return 0, true
	}
	avail = r.Log.Appended(ctx.Now())
	if r.Next < avail {
		return 0, false
	}
	return max(ctx.Cost().PollInterval, r.Log.BornAt(r.Next)-ctx.Now()), false
}
