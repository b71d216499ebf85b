package sim

import (
	"testing"

	"ftbench/engine"
)

// A partition shorter than the detection delay stalls the channel across
// the cut: nothing arrives during it, everything arrives after the heal,
// in order, and nothing is lost (the sender is backpressured meanwhile).
// One that outlasts the detection delay declares the far worker failed:
// with a spare slot its process is re-placed on the near side and the old
// incarnation runs on as a zombie until the far worker rejoins, a heartbeat
// round trip after the heal, when it is cancelled and the worker comes back.
func TestPartition(t *testing.T) {
	const ms = engine.Millisecond
	for _, tc := range []struct {
		name     string
		detect   engine.Time
		slots    int
		declared bool
	}{
		{"shorter than detection", 500 * ms, 0, false},
		{"declared, re-placed", 50 * ms, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []int64
			var rt []engine.Msg
			dep := &engine.Deployment{}
			dep.Add(engine.ProcSpec{Name: "tick", Worker: 0, New: func() engine.Process { return &clockSender{to: 1} }})
			dep.Add(engine.ProcSpec{Name: "sink", Worker: 1, New: func() engine.Process { return &consumer{got: &got} }})
			dep.Coordinator = dep.Add(engine.ProcSpec{Name: "coord", Worker: -1, New: func() engine.Process { return &notes{got: &rt} }})
			cost := engine.DefaultCost()
			cost.DetectDelay, cost.TaskRestart = tc.detect, 20*ms
			s, err := New(dep, Config{Seed: 1, Cost: cost, Workers: 2, Slots: tc.slots})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Partition([]int{1}, 100*ms, 300*ms); err != nil {
				t.Fatal(err)
			}
			var zombies int
			s.Run(200 * ms)
			zombies = s.Zombies()
			s.Run(400 * ms)
			if !tc.declared {
				if len(rt) != 0 || zombies != 0 {
					t.Fatalf("notices %v, %d zombies: want none", rt, zombies)
				}
				// Every tick arrives once, in order, the cut's after the heal.
				for i, v := range got {
					if i > 0 && v != got[i-1]+1 {
						t.Fatalf("ticks out of order or lost at %d: %d after %d", i, v, got[i-1])
					}
				}
				if len(got) < 350 {
					t.Fatalf("%d ticks arrived, want about 399", len(got))
				}
				return
			}
			if len(rt) < 2 || rt[0].Kind != engine.KindFailure || rt[len(rt)-1].Kind != engine.KindWorkerUp {
				t.Fatalf("coordinator got %v, want a failure and, after the heal, the worker back", rt)
			}
			f := rt[0].Body.(engine.Failure)
			if f.FailedAt != 100*ms || len(f.Moved) != 1 || f.Moved[0].Worker != 0 {
				t.Errorf("failure %+v: want failed at the cut, sink moved to worker 0", f)
			}
			if zombies != 1 || s.Zombies() != 0 {
				t.Errorf("%d zombies during the cut, %d after the rejoin: want 1 and 0", zombies, s.Zombies())
			}
			if s.Worker(1) != 0 {
				t.Errorf("sink on worker %d after the partition, want 0", s.Worker(1))
			}
		})
	}
}

// A partition needs a connection timeout beyond the detection delay.
func TestPartitionNeedsConnTimeoutBeyondDetection(t *testing.T) {
	dep := &engine.Deployment{Coordinator: -1}
	dep.Add(engine.ProcSpec{Name: "a", Worker: 0, New: func() engine.Process { return &idle{inits: new(int)} }})
	cost := engine.DefaultCost()
	cost.ConnTimeout = cost.DetectDelay
	s, err := New(dep, Config{Seed: 1, Cost: cost, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Partition([]int{1}, 0, engine.Second); err == nil {
		t.Fatal("conn-timeout = detect-delay accepted")
	}
}
