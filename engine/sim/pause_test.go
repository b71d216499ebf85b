package sim

import (
	"testing"

	"ftbench/engine"
)

// notes records what the runtime tells a coordinator.
type notes struct{ got *[]engine.Msg }

func (n *notes) Init(engine.Ctx)         {}
func (n *notes) Timer(engine.Ctx, int64) {}
func (n *notes) Handle(_ engine.Ctx, from engine.ProcID, m engine.Msg) {
	if from == engine.Runtime {
		*n.got = append(*n.got, m)
	}
}

// stamper records the clock of every timer it fires (every millisecond).
type stamper struct{ fired *[]engine.Time }

func (s *stamper) Init(ctx engine.Ctx)                          { ctx.After(engine.Millisecond, 0) }
func (s *stamper) Handle(engine.Ctx, engine.ProcID, engine.Msg) {}
func (s *stamper) Timer(ctx engine.Ctx, _ int64) {
	*s.fired = append(*s.fired, ctx.Now())
	ctx.After(engine.Millisecond, 0)
}

// handling is one record an instConsumer handled: by which instance, when.
type handling struct {
	v, inst int
	at      engine.Time
}

// instConsumer records what it receives, and which of the process's
// instances (1 for the first) handled it when.
type instConsumer struct {
	got     *[]int64
	handled *[]handling
	inst    int
}

func (c *instConsumer) Init(engine.Ctx)         {}
func (c *instConsumer) Timer(engine.Ctx, int64) {}
func (c *instConsumer) Handle(ctx engine.Ctx, _ engine.ProcID, m engine.Msg) {
	*c.got = append(*c.got, m.Val)
	*c.handled = append(*c.handled, handling{v: int(m.Val), inst: c.inst, at: ctx.Now()})
}

// A paused worker runs nothing during its pause and resumes with its state;
// what was sent to it waits. A pause that outlasts the detection delay is a
// failure: the coordinator is notified at pause start + detect-delay; the
// paused incarnation, which nothing could stop, wakes with the worker and
// acts on what was queued for it until the heartbeat answer a round trip
// later cancels it, and fresh incarnations start then.
func TestPause(t *testing.T) {
	const ms = engine.Millisecond
	for _, tc := range []struct {
		name     string
		detect   engine.Time
		declared bool
	}{
		{"shorter than detection", 500 * ms, false},
		{"longer than detection", 50 * ms, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []int64
			var fired []engine.Time
			var rt []engine.Msg
			dep := &engine.Deployment{}
			dep.Add(engine.ProcSpec{Name: "tick", Worker: 0, New: func() engine.Process { return &clockSender{to: 1} }})
			var handled []handling
			var inst int
			dep.Add(engine.ProcSpec{Name: "sink", Worker: 1, New: func() engine.Process {
				inst++
				return &instConsumer{got: &got, handled: &handled, inst: inst}
			}})
			dep.Add(engine.ProcSpec{Name: "stamp", Worker: 1, New: func() engine.Process { return &stamper{fired: &fired} }})
			dep.Coordinator = dep.Add(engine.ProcSpec{Name: "coord", Worker: -1, New: func() engine.Process { return &notes{got: &rt} }})
			cost := engine.DefaultCost()
			cost.DetectDelay = tc.detect
			s, err := New(dep, Config{Seed: 1, Cost: cost, Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Pause(1, 100*ms, 300*ms); err != nil {
				t.Fatal(err)
			}
			s.Run(400 * ms)
			for _, at := range fired {
				if at > 100*ms && at < 300*ms {
					t.Fatalf("a timer of the paused worker fired at %s", at)
				}
			}
			// Records sent during the pause: delivered after it, or lost
			// with the declared-failed incarnation.
			var during int
			for _, v := range got {
				if v >= 100 && v < 300 {
					during++
				}
			}
			if !tc.declared {
				if len(rt) != 0 {
					t.Fatalf("coordinator was notified %v of a pause shorter than detection", rt)
				}
				for i := 1; i < len(got); i++ {
					if got[i] != got[i-1]+1 {
						t.Fatalf("records not delivered in order without gaps: %d after %d", got[i], got[i-1])
					}
				}
				if during < 190 {
					t.Fatalf("only %d of the records sent during the pause arrived after it", during)
				}
				return
			}
			if len(rt) != 2 || rt[0].Kind != engine.KindFailure || rt[1].Kind != engine.KindWorkerUp {
				t.Fatalf("coordinator got %v, want a failure then worker up", rt)
			}
			f := rt[0].Body.(engine.Failure)
			if f.Worker != 1 || f.FailedAt != 100*ms || f.Back || len(f.Procs) != 2 {
				t.Fatalf("failure %+v, want worker 1 failed at 100ms with its 2 processes, not back", f)
			}
			// The stale sink, left in place, handles what was queued for
			// it when the worker wakes, before the heartbeat answer
			// cancels it; nothing sent before the wake reaches the fresh
			// incarnation.
			learned := 300*ms + 2*cost.NetLatency
			var stale, fresh int
			for _, h := range handled {
				switch {
				case h.inst == 1 && h.v >= 100 && h.v < 300:
					if h.at < 300*ms || h.at > learned {
						t.Fatalf("the stale sink handled record %d at %s, outside its wake [300ms, %s]", h.v, h.at, learned)
					}
					stale++
				case h.inst == 1 && h.at > learned:
					t.Fatalf("the stale sink handled record %d at %s, after it learned it was replaced", h.v, h.at)
				case h.inst == 2:
					if h.v < 300 {
						t.Fatalf("record %d, sent before the wake, reached the fresh incarnation", h.v)
					}
					fresh++
				}
			}
			if stale < 190 {
				t.Fatalf("the stale sink handled only %d of the records queued during the pause", stale)
			}
			if fresh < 80 {
				t.Fatalf("the sink's fresh incarnation received %d records after the pause", fresh)
			}
		})
	}
}

// restarter restarts process 1 at 150 ms and, once the restart delay has
// passed, sends it a deployment (a coordinator's failover).
type restarter struct{}

func (r *restarter) Init(ctx engine.Ctx)                          { ctx.After(150*engine.Millisecond, 0) }
func (r *restarter) Handle(engine.Ctx, engine.ProcID, engine.Msg) {}
func (r *restarter) Timer(ctx engine.Ctx, id int64) {
	if id == 0 {
		ctx.Restart(1)
		ctx.After(ctx.Cost().TaskRestart+engine.Millisecond, 1)
		return
	}
	ctx.Send(1, engine.Msg{Kind: 7, Ctrl: true, Val: 42, Size: 16})
}

// deployee records when it ran Init and when it got a message.
type deployee struct{ log *[]string }

func (d *deployee) Init(ctx engine.Ctx) { *d.log = append(*d.log, "init@"+ctx.Now().String()) }
func (d *deployee) Handle(ctx engine.Ctx, _ engine.ProcID, m engine.Msg) {
	*d.log = append(*d.log, "msg@"+ctx.Now().String())
}
func (d *deployee) Timer(engine.Ctx, int64) {}

// A task restarted onto a paused worker (a failover elsewhere while the
// worker is stopped) gets what is sent to it after the restart delay — its
// deployment — when the worker wakes, after its Init: the message waits as
// on a stopped worker's socket instead of being dropped.
func TestRestartOntoPausedWorker(t *testing.T) {
	const ms = engine.Millisecond
	var log []string
	dep := &engine.Deployment{}
	dep.Add(engine.ProcSpec{Name: "coord", Worker: -1, New: func() engine.Process { return &restarter{} }})
	dep.Add(engine.ProcSpec{Name: "task", Worker: 0, New: func() engine.Process { return &deployee{log: &log} }})
	cost := engine.DefaultCost()
	cost.DetectDelay = engine.Second
	s, err := New(dep, Config{Seed: 1, Cost: cost, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Pause(0, 100*ms, 600*ms); err != nil {
		t.Fatal(err)
	}
	s.Run(engine.Second)
	if len(log) != 3 || log[1] != "init@"+(600*ms).String() || log[2][:4] != "msg@" {
		t.Fatalf("task log %v, want its first Init, then at the 600ms wake the restarted Init and the message", log)
	}
}
