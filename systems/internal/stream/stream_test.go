package stream

import (
	"testing"

	"ftbench/engine"
	"ftbench/workloads"
)

type nop struct{}

func (nop) Init(engine.Ctx)                              {}
func (nop) Handle(engine.Ctx, engine.ProcID, engine.Msg) {}
func (nop) Timer(engine.Ctx, int64)                      {}

func graph(t testing.TB, par, workers int) (*Graph, *engine.Deployment) {
	t.Helper()
	w, err := workloads.New("wordcount", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	dep := &engine.Deployment{Coordinator: -1}
	g := Build(dep, w.Plan(), par, workers,
		func(*Graph, int) engine.Process { return nop{} },
		func(*Graph, int, int) engine.Process { return nop{} })
	return g, dep
}

func TestPlacementAndWiring(t *testing.T) {
	g, dep := graph(t, 4, 2)
	if len(dep.Procs) != 16 {
		t.Fatalf("%d processes, want 4 operators x 4", len(dep.Procs))
	}
	for _, p := range dep.Procs {
		if p.Worker != p.Index%2 {
			t.Fatalf("%s on worker %d, want %d", p.Name, p.Worker, p.Index%2)
		}
	}
	// split (stage 0) is forward from the source: one input, one output per instance.
	if in := g.Inputs(0, 2); len(in) != 1 || in[0] != g.Source[2] {
		t.Fatalf("split/2 inputs %v, want [source/2]", in)
	}
	// count (stage 1) is hash-partitioned: every split feeds every count.
	if in := g.Inputs(1, 3); len(in) != 4 {
		t.Fatalf("count/3 has %d inputs, want 4", len(in))
	}
	if out := g.Outputs(0, 1); len(out) != 4 {
		t.Fatalf("split/1 has %d outputs, want 4", len(out))
	}
	if out := g.Outputs(1, 1); len(out) != 1 || out[0] != g.Stages[2][1] {
		t.Fatalf("count/1 outputs %v, want [sink/1]", out)
	}
	if g.Outputs(2, 0) != nil || g.Router(2, 0) != nil {
		t.Fatalf("the sink has no outputs")
	}
}

func TestHashRoutingIsStable(t *testing.T) {
	g, _ := graph(t, 4, 4)
	r1, r2 := g.Router(0, 0), g.Router(0, 3)
	seen := map[engine.ProcID]bool{}
	for key := uint64(0); key < 100; key++ {
		m := engine.Msg{Key: key}
		a, b := r1.Target(&m), r2.Target(&m)
		if a != b || a != g.Stages[1][KeyPartition(key, 4)] {
			t.Fatalf("key %d routed to %d and %d", key, a, b)
		}
		seen[a] = true
	}
	if len(seen) != 4 {
		t.Fatalf("100 keys reached %d of 4 instances", len(seen))
	}
}

func TestOperatorSnapshotRestore(t *testing.T) {
	g, _ := graph(t, 1, 1)
	var out []engine.Msg
	op := NewOperator(&g.Plan.Stages[1], func(m engine.Msg) { out = append(out, m) })
	ctx := &countingCtx{cost: engine.DefaultCost()}
	for _, k := range []uint64{5, 3, 5, 9, 5} {
		op.Process(ctx, engine.Msg{Key: k, Val: 1})
	}
	if out[4].Val != 3 {
		t.Fatalf("third occurrence of key 5 counted as %d", out[4].Val)
	}
	snap := op.Snapshot()
	if len(snap) != 3 || snap[0].Key != 3 || snap[2].Key != 9 || snap[1].Val != 3 {
		t.Fatalf("snapshot %v, want keys sorted with their counts", snap)
	}
	op.Process(ctx, engine.Msg{Key: 5})
	op.Restore(snap)
	if op.State.Get(5) != 3 {
		t.Fatalf("restore gave %d, want 3", op.State.Get(5))
	}
	if ctx.work != 6*ctx.cost.StateCPU {
		t.Fatalf("charged %v, want 6 x state-cpu", ctx.work)
	}
}

// countingCtx is a minimal Ctx for operator tests.
type countingCtx struct {
	engine.Ctx
	cost engine.CostModel
	work engine.Time
}

func (c *countingCtx) Work(d engine.Time)      { c.work += d }
func (c *countingCtx) Cost() *engine.CostModel { return &c.cost }

// A keyed update allocates nothing once its key is in the state (issue 13:
// a state cell escaping to the heap cost one allocation per record).
func TestOperatorProcessDoesNotAllocate(t *testing.T) {
	g, _ := graph(t, 1, 1)
	n := 0
	op := NewOperator(&g.Plan.Stages[1], func(engine.Msg) { n++ })
	ctx := &countingCtx{cost: engine.DefaultCost()}
	for k := uint64(0); k < 64; k++ {
		op.Process(ctx, engine.Msg{Key: k, Val: 1})
	}
	k := uint64(0)
	if a := testing.AllocsPerRun(1000, func() {
		op.Process(ctx, engine.Msg{Key: k % 64, Val: 1})
		k++
	}); a != 0 {
		t.Errorf("Process allocates %v times per record", a)
	}
}

// BenchmarkOperatorProcess is the keyed update's hot path (run with
// -benchmem: 0 allocs/op).
func BenchmarkOperatorProcess(b *testing.B) {
	g, _ := graph(b, 1, 1)
	op := NewOperator(&g.Plan.Stages[1], func(engine.Msg) {})
	ctx := &countingCtx{cost: engine.DefaultCost()}
	b.ReportAllocs()
	k := uint64(0)
	for b.Loop() {
		op.Process(ctx, engine.Msg{Key: k & 1023, Val: 1})
		k++
	}
}
