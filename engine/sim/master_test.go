package sim

import (
	"testing"

	"ftbench/engine"
)

// master is a coordinator on the master node: it remembers when each of
// its incarnations started and what the runtime told it.
type master struct {
	inits *[]engine.Time
	told  *[]engine.Msg
}

func (m *master) Init(ctx engine.Ctx)     { *m.inits = append(*m.inits, ctx.Now()) }
func (m *master) Timer(engine.Ctx, int64) {}
func (m *master) Handle(ctx engine.Ctx, from engine.ProcID, msg engine.Msg) {
	if from == engine.Runtime {
		*m.told = append(*m.told, msg)
	}
}

// A master crash kills only the master node's processes and those bound to
// it, restarts them after the restart delay with a fresh Init (the bound
// ones a task-restart later), notifies nobody, and then tells the new
// coordinator of every worker still down.
func TestMasterCrash(t *testing.T) {
	var sent int64
	var got []int64
	var inits []engine.Time
	var told []engine.Msg
	dep := pipeline(0, &sent, &got)
	bound := dep.Add(engine.ProcSpec{Name: "executor", Worker: 1, MasterBound: true,
		New: func() engine.Process { return &consumer{} }})
	dep.Coordinator = dep.Add(engine.ProcSpec{Name: "coordinator", Worker: engine.MasterNode,
		New: func() engine.Process { return &master{inits: &inits, told: &told} }})
	s := newSim(t, dep)
	var events []engine.Event
	s.obs = eventSink{&events}
	if err := s.Crash(0, 100*engine.Millisecond, 2*engine.Second); err != nil {
		t.Fatal(err)
	}
	if err := s.Crash(engine.MasterNode, 200*engine.Millisecond, 1500*engine.Millisecond); err != nil {
		t.Fatal(err)
	}
	s.Run(1650 * engine.Millisecond)
	if len(inits) != 1 || len(told) != 0 {
		t.Fatalf("by 1.65s: master incarnations started %v, told %v; want 1 and nothing (it is down until 1.7s)", inits, told)
	}
	b, c := s.procs[bound], s.procs[1]
	if b.up || b.inc != 1 || !c.up || c.inc != 0 {
		t.Fatalf("at 1.65s: bound process up %v (incarnation %d), consumer up %v (%d): want the bound one killed once, the consumer untouched",
			b.up, b.inc, c.up, c.inc)
	}
	s.Run(1850 * engine.Millisecond)
	if b.up {
		t.Fatalf("the bound process is up at 1.85s, before the master (1.7s) plus task-restart (200ms)")
	}
	received := len(got)
	s.Run(3 * engine.Second)
	if !b.up || b.inc != 1 {
		t.Fatalf("the bound process is not back after the master: up %v, incarnation %d", b.up, b.inc)
	}
	if len(inits) != 2 || inits[1] != 1700*engine.Millisecond {
		t.Fatalf("master incarnations started at %v, want 0 and 1.7s", inits)
	}
	// The failure of worker 0 (at 100ms) was detected at 1.1s, while the
	// coordinator was down: the new one hears of it when it starts, and
	// of the worker's return at 2.1s.
	if len(told) != 2 || told[0].Kind != engine.KindFailure || told[0].Val != 0 || told[1].Kind != engine.KindWorkerUp {
		t.Fatalf("the new coordinator was told %+v, want worker 0's failure then its return", told)
	}
	if f := told[0].Body.(engine.Failure); f.FailedAt != 100*engine.Millisecond || f.Back {
		t.Errorf("failure %+v, want worker 0 failed at 100ms, not back", f)
	}
	if len(got) <= received {
		t.Errorf("the consumer got nothing after the master crash")
	}
	crashes := 0
	for _, e := range events {
		if e.Kind == "worker_crash" && e.ID == engine.MasterNode && e.Time == 200*engine.Millisecond && e.Value == int64(1500*engine.Millisecond) {
			crashes++
		}
	}
	if crashes != 1 {
		t.Errorf("events %+v: want one worker_crash of the master node at 200ms", events)
	}
}

type eventSink struct{ events *[]engine.Event }

func (e eventSink) Commit(engine.Time, engine.Commit) {}
func (e eventSink) Event(ev engine.Event)             { *e.events = append(*e.events, ev) }
func (e eventSink) Count(string, int64)               {}
func (e eventSink) Sample(engine.Time)                {}
