package sim

import (
	"testing"

	"ftbench/engine"
)

// spinner wants the CPU all the time: every timer charges one slice of work
// and re-arms at once, so it is always runnable.
type spinner struct {
	work engine.Time
	done *engine.Time // CPU it was granted
}

func (s *spinner) Init(ctx engine.Ctx)                          { ctx.After(0, 0) }
func (s *spinner) Handle(engine.Ctx, engine.ProcID, engine.Msg) {}
func (s *spinner) Timer(ctx engine.Ctx, _ int64) {
	ctx.Work(s.work)
	*s.done += s.work
	ctx.After(0, 0)
}

// Processes on one machine share its cores: n always-runnable processes on
// C cores each get min(1, C/n) of a core, and all of them progress (the run
// queue is round-robin, so none starves). Processes on another machine are
// unaffected.
func TestCoresAreShared(t *testing.T) {
	const run = 1 * engine.Second
	cases := []struct {
		name         string
		cores, procs int
		want         float64 // share of a core each process gets
	}{
		{"fewer processes than cores", 4, 2, 1},
		{"as many as cores", 4, 4, 1},
		{"twice as many", 2, 4, 0.5},
		{"one core, three processes", 1, 3, 1.0 / 3},
		{"a CPU per process (cores 0)", 0, 5, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dep := &engine.Deployment{Coordinator: -1}
			got := make([]engine.Time, tc.procs+1)
			for i := 0; i < tc.procs; i++ {
				i := i
				dep.Add(engine.ProcSpec{Name: "spin", Worker: 0, New: func() engine.Process {
					return &spinner{work: 100 * engine.Microsecond, done: &got[i]}
				}})
			}
			// One more on worker 1, which has its cores to itself.
			dep.Add(engine.ProcSpec{Name: "alone", Worker: 1, New: func() engine.Process {
				return &spinner{work: 100 * engine.Microsecond, done: &got[tc.procs]}
			}})
			cost := engine.DefaultCost()
			cost.Cores = tc.cores
			s, err := New(dep, Config{Seed: 1, Cost: cost, Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			s.Run(run)
			for i, g := range got[:tc.procs] {
				share := float64(g) / float64(run)
				if share < tc.want*0.97 || share > tc.want*1.03 {
					t.Errorf("process %d got %.3f of a core, want %.3f", i, share, tc.want)
				}
			}
			if share := float64(got[tc.procs]) / float64(run); share < 0.99 {
				t.Errorf("the process alone on worker 1 got %.3f of a core, want 1", share)
			}
		})
	}
}

// A crash frees the worker's cores: its restarted processes do not wait for
// slices that died with it.
func TestCrashFreesCores(t *testing.T) {
	dep := &engine.Deployment{Coordinator: -1}
	var got engine.Time
	dep.Add(engine.ProcSpec{Name: "spin", Worker: 0, New: func() engine.Process {
		return &spinner{work: 500 * engine.Millisecond, done: &got}
	}})
	cost := engine.DefaultCost()
	cost.Cores = 1
	s, err := New(dep, Config{Seed: 1, Cost: cost, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	// The first slice runs [0, 500ms); the crash at 100ms kills it and the
	// worker is back at 200ms. With the core freed, the new incarnation's
	// slices start at 200ms and 700ms; had the dead slice kept the core,
	// they would start at 500ms and 1s.
	if err := s.Crash(0, 100*engine.Millisecond, 100*engine.Millisecond); err != nil {
		t.Fatal(err)
	}
	s.Run(750 * engine.Millisecond)
	if got != 1500*engine.Millisecond {
		// Work is credited when a slice starts: 500ms before the crash
		// plus the slices starting at 200ms and 700ms.
		t.Fatalf("granted %v of CPU by 750ms, want 1.5s", got)
	}
}
