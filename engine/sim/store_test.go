package sim

import (
	"testing"

	"ftbench/engine"
)

// outcomeWriter writes 1 MB at time 0 and records how the write ended.
type outcomeWriter struct {
	kind *uint16
	at   *engine.Time
}

func (w *outcomeWriter) Init(ctx engine.Ctx) { ctx.Store().Put("k", 42, 1_000_000, 9) }
func (w *outcomeWriter) Handle(ctx engine.Ctx, from engine.ProcID, m engine.Msg) {
	if from == engine.Runtime && m.Val == 9 {
		*w.kind, *w.at = m.Kind, ctx.Now()
	}
}
func (w *outcomeWriter) Timer(engine.Ctx, int64) {}

// Storage faults: a slow store stretches a write issued in its window; an
// outage fails a write in progress at any time in its window, reported one
// store latency after the outage reached it, and writes nothing. The 1 MB
// write takes 5 ms of transfer and 5 ms of latency.
func TestStoreFaults(t *testing.T) {
	const ms = engine.Millisecond
	for _, tc := range []struct {
		name    string
		install func(s *Sim) error
		kind    uint16
		at      engine.Time
		written bool
	}{
		{"no fault", func(*Sim) error { return nil }, engine.KindStoreDone, 10 * ms, true},
		{"slow x4", func(s *Sim) error { return s.StoreSlow(0, engine.Second, 4) }, engine.KindStoreDone, 40 * ms, true},
		{"slow after the write was issued", func(s *Sim) error { return s.StoreSlow(ms, engine.Second, 4) }, engine.KindStoreDone, 10 * ms, true},
		{"down from the start", func(s *Sim) error { return s.StoreDown(0, engine.Second) }, engine.KindStoreFailed, 5 * ms, false},
		{"down during the write", func(s *Sim) error { return s.StoreDown(2*ms, 3*ms) }, engine.KindStoreFailed, 7 * ms, false},
		{"down at the last moment", func(s *Sim) error { return s.StoreDown(9*ms, 20*ms) }, engine.KindStoreFailed, 10 * ms, false},
		{"down after the write", func(s *Sim) error { return s.StoreDown(11*ms, 20*ms) }, engine.KindStoreDone, 10 * ms, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var kind uint16
			var at engine.Time = -1
			dep := &engine.Deployment{Coordinator: -1}
			dep.Add(engine.ProcSpec{Name: "w", Worker: 0, New: func() engine.Process { return &outcomeWriter{kind: &kind, at: &at} }})
			obs := &counts{}
			s, err := New(dep, Config{Seed: 1, Cost: engine.DefaultCost(), Workers: 1, Observer: obs})
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.install(s); err != nil {
				t.Fatal(err)
			}
			s.Run(engine.Second)
			if kind != tc.kind || at != tc.at {
				t.Fatalf("write ended with kind %#x at %v, want %#x at %v", kind, at, tc.kind, tc.at)
			}
			if _, ok := s.StoreValue("k"); ok != tc.written {
				t.Fatalf("stored: %v, want %v", ok, tc.written)
			}
			if n, want := obs.n["store_writes_failed"], map[bool]int64{true: 0, false: 1}[tc.written]; n != want {
				t.Fatalf("store_writes_failed = %d, want %d", n, want)
			}
		})
	}
	s := newSim(t, &engine.Deployment{Coordinator: -1})
	if s.StoreSlow(0, 1, 0) == nil || s.StoreDown(2, 1) == nil {
		t.Fatal("a zero factor or an empty window was accepted")
	}
}

// counts is an Observer that keeps the run counters.
type counts struct{ n map[string]int64 }

func (c *counts) Commit(engine.Time, engine.Commit) {}
func (c *counts) Event(engine.Event)                {}
func (c *counts) Sample(engine.Time)                {}
func (c *counts) Count(name string, d int64) {
	if c.n == nil {
		c.n = map[string]int64{}
	}
	c.n[name] += d
}
