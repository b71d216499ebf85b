package sim

import (
	"reflect"
	"testing"

	"ftbench/engine"
)

// idle is a process that does nothing; it counts its Inits.
type idle struct{ inits *int }

func (i *idle) Init(engine.Ctx)                              { *i.inits++ }
func (i *idle) Handle(engine.Ctx, engine.ProcID, engine.Msg) {}
func (i *idle) Timer(engine.Ctx, int64)                      {}

// When a failed worker is still down at detection, its unpinned processes
// are re-placed in id order on the lowest-numbered live worker with a free
// slot, start there after task-restart, and the failure notice says where
// they went; a process with no free slot, or a pinned one, waits for its
// worker. With the default slots nothing moves.
func TestReplaceOnFreeSlots(t *testing.T) {
	const ms = engine.Millisecond
	for _, tc := range []struct {
		name    string
		slots   int
		pinned  bool
		moved   []engine.Move
		vacated bool
		home    []int // worker of procs 0-4 after detection
	}{
		{name: "default: no spare", slots: 0, home: []int{0, 0, 1, 1, 2}},
		{name: "room for one", slots: 2, moved: []engine.Move{{Proc: 0, Worker: 2}}, home: []int{2, 0, 1, 1, 2}},
		{name: "room for both", slots: 3, moved: []engine.Move{{Proc: 0, Worker: 1}, {Proc: 1, Worker: 2}},
			vacated: true, home: []int{1, 2, 1, 1, 2}},
		{name: "pinned waits", slots: 3, pinned: true, home: []int{0, 0, 1, 1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inits := make([]int, 5)
			var rt []engine.Msg
			dep := &engine.Deployment{}
			for i, w := range []int{0, 0, 1, 1, 2} {
				dep.Add(engine.ProcSpec{Name: string(rune('a' + i)), Worker: w, Pinned: tc.pinned && w == 0,
					New: func() engine.Process { return &idle{inits: &inits[i]} }})
			}
			dep.Coordinator = dep.Add(engine.ProcSpec{Name: "coord", Worker: -1, New: func() engine.Process { return &notes{got: &rt} }})
			cost := engine.DefaultCost()
			cost.DetectDelay, cost.TaskRestart = 100*ms, 50*ms
			s, err := New(dep, Config{Seed: 1, Cost: cost, Workers: 3, Slots: tc.slots})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Crash(0, 10*ms, engine.Second); err != nil {
				t.Fatal(err)
			}
			s.Run(500 * ms)
			if len(rt) != 1 || rt[0].Kind != engine.KindFailure {
				t.Fatalf("coordinator got %v, want one failure notice", rt)
			}
			f := rt[0].Body.(engine.Failure)
			if !reflect.DeepEqual(f.Moved, tc.moved) || f.Vacated != tc.vacated {
				t.Errorf("moved %v vacated %v, want %v %v", f.Moved, f.Vacated, tc.moved, tc.vacated)
			}
			for id, w := range tc.home {
				if got := s.Worker(engine.ProcID(id)); got != w {
					t.Errorf("process %d on worker %d, want %d", id, got, w)
				}
			}
			// A moved process started again (2 inits); one left on the
			// dead worker did not (1).
			for _, mv := range tc.moved {
				if inits[mv.Proc] != 2 {
					t.Errorf("moved process %d started %d times, want 2", mv.Proc, inits[mv.Proc])
				}
			}
			for id := 0; id < 2; id++ {
				if tc.home[id] == 0 && inits[id] != 1 {
					t.Errorf("process %d waiting for its worker started %d times, want 1", id, inits[id])
				}
			}
		})
	}
}

// A slot count below what the placement puts on a worker is refused.
func TestSlotsBelowPlacement(t *testing.T) {
	dep := &engine.Deployment{Coordinator: -1}
	for i := 0; i < 3; i++ {
		dep.Add(engine.ProcSpec{Name: string(rune('a' + i)), Worker: 0, New: func() engine.Process { return &idle{inits: new(int)} }})
	}
	if _, err := New(dep, Config{Seed: 1, Cost: engine.DefaultCost(), Workers: 1, Slots: 2}); err == nil {
		t.Fatal("3 processes on a worker of 2 slots accepted")
	}
}
