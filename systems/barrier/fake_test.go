package barrier

import (
	"math/rand/v2"

	"ftbench/engine"
	"ftbench/systems/internal/checkpoint"
	"ftbench/systems/internal/stream"
	"ftbench/workloads"
)

// fakeCtx drives one process by hand: the test puts messages into its
// input channels and steps it; it records what the process sends, stores
// and commits. Paused channels keep their messages, as the simulator's do.
type fakeCtx struct {
	self    engine.ProcID
	now     engine.Time
	cost    engine.CostModel
	inputs  []engine.ProcID // delivery order when draining
	queues  map[engine.ProcID][]engine.Msg
	paused  map[engine.ProcID]bool
	sent    []sent
	store   map[string]any
	puts    []put // not yet durable
	events  []engine.Event
	counts  map[string]int64
	commits []engine.Commit
	over    []engine.Msg
}

type sent struct {
	to         engine.ProcID
	m          engine.Msg
	overtaking bool
}

type put struct {
	key   string
	token int64
}

func newFakeCtx(self engine.ProcID, inputs ...engine.ProcID) *fakeCtx {
	return &fakeCtx{self: self, cost: engine.DefaultCost(), inputs: inputs,
		queues: map[engine.ProcID][]engine.Msg{}, paused: map[engine.ProcID]bool{},
		store: map[string]any{}, counts: map[string]int64{}}
}

func (c *fakeCtx) Self() engine.ProcID                 { return c.self }
func (c *fakeCtx) Now() engine.Time                    { return c.now }
func (c *fakeCtx) Send(to engine.ProcID, m engine.Msg) { c.sent = append(c.sent, sent{to: to, m: m}) }
func (c *fakeCtx) SendOvertaking(to engine.ProcID, m engine.Msg) {
	m.Ctrl = true
	c.sent = append(c.sent, sent{to: to, m: m, overtaking: true})
}
func (c *fakeCtx) Overtaken() []engine.Msg        { return c.over }
func (c *fakeCtx) After(engine.Time, int64)       {}
func (c *fakeCtx) Work(d engine.Time)             { c.now += d }
func (c *fakeCtx) Rand() *rand.Rand               { return rand.New(rand.NewPCG(1, 2)) }
func (c *fakeCtx) Store() engine.Store            { return c }
func (c *fakeCtx) Record(e engine.Event)          { e.Time = c.now; c.events = append(c.events, e) }
func (c *fakeCtx) Count(name string, delta int64) { c.counts[name] += delta }
func (c *fakeCtx) Commit(cm engine.Commit)        { c.commits = append(c.commits, cm) }
func (c *fakeCtx) Pause(from engine.ProcID)       { c.paused[from] = true }
func (c *fakeCtx) Resume(from engine.ProcID)      { c.paused[from] = false }
func (c *fakeCtx) Restart(engine.ProcID)          {}
func (c *fakeCtx) Cost() *engine.CostModel        { return &c.cost }
func (c *fakeCtx) Get(key string) (any, bool)     { v, ok := c.store[key]; return v, ok }
func (c *fakeCtx) Delete(key string)              { delete(c.store, key) }
func (c *fakeCtx) Has(key string) bool            { _, ok := c.store[key]; return ok }
func (c *fakeCtx) InputQueued(from engine.ProcID) (int, int) {
	n := 0
	for _, m := range c.queues[from] {
		if !m.Ctrl {
			n++
		}
	}
	return n, 0
}

// Put is durable at once in the fake's store; the completion waits for
// complete, so a test decides when acks may go out.
func (c *fakeCtx) Put(key string, val any, _ int64, token int64) {
	c.store[key] = val
	c.puts = append(c.puts, put{key: key, token: token})
}

// complete delivers every pending store completion to p.
func (c *fakeCtx) complete(p engine.Process) {
	puts := c.puts
	c.puts = nil
	for _, w := range puts {
		p.Handle(c, engine.Runtime, engine.Msg{Kind: engine.KindStoreDone, Ctrl: true, Val: w.token, Body: w.key})
	}
}

// enqueue appends m to the channel from -> self.
func (c *fakeCtx) enqueue(from engine.ProcID, m engine.Msg) {
	c.queues[from] = append(c.queues[from], m)
}

// overtake hands p an overtaking message from `from`: what it jumps is the
// channel's queued data, which stays queued.
func (c *fakeCtx) overtake(p engine.Process, from engine.ProcID, m engine.Msg) {
	c.over = nil
	for _, q := range c.queues[from] {
		if !q.Ctrl {
			c.over = append(c.over, q)
		}
	}
	m.Ctrl = true
	p.Handle(c, from, m)
	c.over = nil
}

// drain delivers queued messages from unpaused channels, in input order,
// until nothing is deliverable.
func (c *fakeCtx) drain(p engine.Process) {
	for progress := true; progress; {
		progress = false
		for _, in := range c.inputs {
			if c.paused[in] || len(c.queues[in]) == 0 {
				continue
			}
			m := c.queues[in][0]
			c.queues[in] = c.queues[in][1:]
			p.Handle(c, in, m)
			progress = true
		}
	}
}

// traceGraph is the lecture's setting: two sources (channels A and B) feeding
// one keyed counter op2 (every record counts 1 on key 0), then a sink.
// Returns the graph and the ids of A, B, op2/0 and the coordinator.
func traceGraph(par *params) (*stream.Graph, engine.ProcID, engine.ProcID, engine.ProcID) {
	plan := &workloads.Plan{Source: "source", Stages: []workloads.Stage{
		{Name: "op2", Input: workloads.Hash,
			Cost: func(*engine.CostModel, engine.Msg) engine.Time { return engine.Microsecond },
			Update: func(s *int64, m engine.Msg, emit func(engine.Msg)) {
				*s++
				m.Val = *s
				emit(m)
			}},
		{Name: "sink", Input: workloads.Forward, Sink: true,
			Cost: func(*engine.CostModel, engine.Msg) engine.Time { return engine.Microsecond }},
	}}
	dep := &engine.Deployment{}
	g := stream.Build(dep, plan, 2, 2,
		func(*stream.Graph, int) engine.Process { return nil },
		func(*stream.Graph, int, int) engine.Process { return nil })
	par.coord = dep.Add(engine.ProcSpec{Name: "coordinator", Worker: -1})
	par.nprocs = len(dep.Procs)
	return g, g.Source[0], g.Source[1], g.Stages[0][0]
}

func deployMsg(restore int64) engine.Msg {
	return engine.Msg{Kind: checkpoint.KindDeploy, Ctrl: true, Body: checkpoint.Deploy{Attempt: 0, Restore: restore}}
}

func record(part int32, off int64) engine.Msg {
	return engine.Msg{ID: engine.EffectID{Part: part, Off: off}, Size: 16}
}

func barrierMsg(kind uint16, n int64) engine.Msg {
	return engine.Msg{Kind: kind, Ctrl: true, Val: n, Size: barrierBytes}
}
