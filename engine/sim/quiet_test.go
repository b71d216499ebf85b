package sim

import (
	"testing"

	"ftbench/engine"
)

// oneShot arms a single timer at start; periodic re-arms its timer from
// its own handler.
type oneShot struct{ after engine.Time }

func (o *oneShot) Init(ctx engine.Ctx)                          { ctx.After(o.after, 1) }
func (o *oneShot) Handle(engine.Ctx, engine.ProcID, engine.Msg) {}
func (o *oneShot) Timer(engine.Ctx, int64)                      {}

type periodic struct{}

func (periodic) Init(ctx engine.Ctx)                          { ctx.After(engine.Millisecond, 7) }
func (periodic) Handle(engine.Ctx, engine.ProcID, engine.Msg) {}
func (periodic) Timer(ctx engine.Ctx, id int64)               { ctx.After(engine.Millisecond, id) }

// Activity sees, step by step, each thing that keeps a run from being
// quiescent, and only those.
func TestActivity(t *testing.T) {
	mk := func(specs ...engine.ProcSpec) *Sim {
		t.Helper()
		dep := &engine.Deployment{Coordinator: -1}
		for _, sp := range specs {
			dep.Add(sp)
		}
		s, err := New(dep, Config{Seed: 1, Cost: engine.DefaultCost(), Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	deadline := 10 * engine.Second

	s := mk(engine.ProcSpec{Name: "poll", Worker: 0, New: func() engine.Process { return periodic{} }})
	s.Run(50 * engine.Millisecond)
	if a := s.Activity(deadline); !a.Quiet() {
		t.Errorf("only a periodic timer: want quiescent, got %s", a)
	}

	s = mk(engine.ProcSpec{Name: "later", Worker: 0, New: func() engine.Process { return &oneShot{after: engine.Second} }})
	s.Run(50 * engine.Millisecond)
	if a := s.Activity(deadline); a.Timers != 1 || a.Quiet() {
		t.Errorf("a one-shot timer due at 1s: got %s", a)
	}
	if a := s.Activity(500 * engine.Millisecond); !a.Quiet() {
		t.Errorf("a one-shot timer due after the deadline: want quiescent, got %s", a)
	}

	var sent int64
	s = mk(engine.ProcSpec{Name: "p", Worker: 0, New: func() engine.Process { return &producer{to: 1, sent: &sent, size: 100} }},
		engine.ProcSpec{Name: "c", Worker: 1, New: func() engine.Process { return &consumer{cost: 100 * engine.Microsecond} }})
	s.Run(50 * engine.Millisecond)
	if a := s.Activity(deadline); a.DataBytes == 0 || len(a.Channels) != 1 || a.Channels[0] != "p->c" {
		t.Errorf("a backlogged channel: got %s", a)
	}

	s = mk(engine.ProcSpec{Name: "poll", Worker: 1, New: func() engine.Process { return periodic{} }})
	if err := s.Crash(1, 10*engine.Millisecond, engine.Second); err != nil {
		t.Fatal(err)
	}
	s.Run(50 * engine.Millisecond)
	if a := s.Activity(deadline); len(a.Down) != 1 || a.Down[0] != "poll" {
		t.Errorf("a crashed worker waiting for its restart: got %s", a)
	}
	s.Run(2 * engine.Second)
	if a := s.Activity(deadline); !a.Quiet() {
		t.Errorf("the worker is back: want quiescent, got %s", a)
	}
}

// A reader on the client node polls the system forever with one-shot
// timers; that is observation, not activity of the system under test.
func TestActivityIgnoresClients(t *testing.T) {
	dep := &engine.Deployment{Coordinator: -1}
	dep.Add(engine.ProcSpec{Name: "reader", Worker: engine.ClientNode, New: func() engine.Process { return &oneShot{after: engine.Second} }})
	s, err := New(dep, Config{Seed: 1, Cost: engine.DefaultCost(), Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	s.Run(50 * engine.Millisecond)
	if a := s.Activity(10 * engine.Second); !a.Quiet() {
		t.Errorf("only a client's timer: want quiescent, got %s", a)
	}
}
