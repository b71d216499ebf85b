package stream

import (
	"strings"
	"testing"

	"ftbench/engine"
	"ftbench/workloads"
)

// Flink's chaining rule on ftbench's plans: every forward edge chains, a
// keyBy (hash) edge does not. Each row is the job graph Flink's web UI
// shows for the job.
func TestChainsFollowFlinksRule(t *testing.T) {
	for _, tc := range []struct {
		workload string
		opts     map[string]string
		tasks    []string // the processes of instance 0, in deployment order
	}{
		{"wordcount", nil, []string{"source→split/0", "count→sink/0"}},
		{"grep", nil, []string{"source→filter→sink/0"}},
		{"bank", nil, []string{"source/0", "debit/0", "credit→sink/0"}},
	} {
		t.Run(tc.workload, func(t *testing.T) {
			w, err := workloads.New(tc.workload, 1, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			dep := &engine.Deployment{Coordinator: -1}
			g := BuildChained(dep, w.Plan(), 4, 4, true,
				func(*Graph, int) engine.Process { return nop{} },
				func(*Graph, int, int) engine.Process { return nop{} })
			var got []string
			for _, p := range dep.Procs {
				if p.Index == 0 {
					got = append(got, p.Name)
				}
			}
			if strings.Join(got, " ") != strings.Join(tc.tasks, " ") {
				t.Fatalf("tasks %v, want %v", got, tc.tasks)
			}
			if n := len(g.Tasks()); n != len(dep.Procs) {
				t.Errorf("Tasks lists %d processes, the deployment has %d", n, len(dep.Procs))
			}
			// Every stage maps to its chain's processes, so the chain's
			// last stage routes to the next chain and a chain's head reads
			// from the previous one.
			for s := range w.Plan().Stages {
				h := g.Head(s)
				if got, want := g.Instances(s)[1], g.Instances(h)[1]; got != want {
					t.Errorf("stage %d runs in %s, its chain head %d in %s", s, dep.Procs[got].Name, h, dep.Procs[want].Name)
				}
				if !dep.Procs[g.Instances(s)[0]].Runs(w.Plan().Stages[s].Name) {
					t.Errorf("stage %s: its process %s does not list it", w.Plan().Stages[s].Name, dep.Procs[g.Instances(s)[0]].Name)
				}
			}
		})
	}
}

// A chained hop is a method call that costs the serializer's copy: the
// receiving operator pays bytes × serde-per-byte, nothing with object
// reuse, and never a send.
func TestChainedHopChargesTheCopy(t *testing.T) {
	w, err := workloads.New("grep", 1, map[string]string{"record-size": "100"})
	if err != nil {
		t.Fatal(err)
	}
	cost := engine.DefaultCost()
	for _, reuse := range []bool{false, true} {
		dep := &engine.Deployment{Coordinator: -1}
		g := BuildChained(dep, w.Plan(), 1, 1, true,
			func(*Graph, int) engine.Process { return nop{} },
			func(*Graph, int, int) engine.Process { return nop{} })
		var committed int
		c := NewChain(g, 0, g.ChainEnd(-1), 0, false, reuse,
			func(st *workloads.Stage) func(engine.Ctx, engine.Msg, *engine.CostModel) {
				return func(ctx engine.Ctx, m engine.Msg, costs *engine.CostModel) {
					ctx.Work(st.Cost(costs, m))
					committed++
				}
			})
		ctx := &workCtx{cost: &cost}
		c.Bind(ctx)
		emit := c.Emitter()
		// Find a record the filter passes, so it takes both hops.
		var m engine.Msg
		for off := int64(0); ; off++ {
			m = w.Record(0, off)
			before := committed
			probe := &workCtx{cost: &cost}
			c.Bind(probe)
			emit(m)
			if committed > before {
				break
			}
		}
		c.Bind(ctx)
		emit(m)
		filter, sink := w.Plan().Stages[0], w.Plan().Stages[1]
		want := filter.Cost(&cost, m) + sink.Cost(&cost, m)
		if !reuse {
			want += 2 * engine.Time(m.Size) * cost.SerdePerByte // source→filter, filter→sink
		}
		if ctx.work != want || ctx.sends != 0 {
			t.Errorf("object reuse %v: charged %v and %d sends for one matching record, want %v and none", reuse, ctx.work, ctx.sends, want)
		}
	}
}

// workCtx records what a chain charges and sends.
type workCtx struct {
	engine.Ctx
	cost  *engine.CostModel
	work  engine.Time
	sends int
}

func (c *workCtx) Work(d engine.Time)                       { c.work += d }
func (c *workCtx) Cost() *engine.CostModel                  { return c.cost }
func (c *workCtx) Send(engine.ProcID, engine.Msg)           { c.sends++ }
func (c *workCtx) Count(string, int64)                      {}
func (c *workCtx) Record(engine.Event)                      {}
func (c *workCtx) Now() engine.Time                         { return 0 }
func (c *workCtx) Commit(engine.Commit)                     {}
func (c *workCtx) Self() engine.ProcID                      { return 0 }
func (c *workCtx) Store() engine.Store                      { return nil }
func (c *workCtx) After(engine.Time, int64)                 {}
func (c *workCtx) SendOvertaking(engine.ProcID, engine.Msg) {}
