package checkpoint

import (
	"fmt"
	"slices"
	"testing"

	"ftbench/engine"
	"ftbench/engine/sim"
)

// fakeTask snapshots a counter on every trigger (sources) or on the
// forwarded trigger (the downstream task), acking after the write is durable.
type fakeTask struct {
	part     Participant
	next     engine.ProcID // -1: none
	deploy   *[]Deploy
	count    int64
	timeouts []int64 // KindAlignTimeout notices received
	aborts   []int64 // KindAbort notices received
}

func (t *fakeTask) Init(engine.Ctx) {}
func (t *fakeTask) Timer(ctx engine.Ctx, _ int64) {
	t.count++
	ctx.After(engine.Millisecond, 0)
}

func (t *fakeTask) Handle(ctx engine.Ctx, from engine.ProcID, m engine.Msg) {
	switch m.Kind {
	case KindDeploy:
		n := t.part.OnDeploy(m)
		*t.deploy = append(*t.deploy, m.Body.(Deploy))
		if v, ok := t.part.Load(ctx, n); ok {
			t.count = v.(int64)
		}
		ctx.After(engine.Millisecond, 0)
	case KindTrigger:
		if !t.part.Current(m) {
			return
		}
		t.part.Persist(ctx, m.Val, t.count, 8)
		if t.next >= 0 {
			ctx.Send(t.next, engine.Msg{Kind: KindTrigger, Ctrl: true, Key: m.Key, Val: m.Val})
		}
	case engine.KindStoreDone:
		t.part.Acknowledge(ctx, m.Val, Ack{StateBytes: 8})
	case engine.KindStoreFailed:
		t.part.Decline(ctx, m.Val)
	case KindAlignTimeout:
		if t.part.Current(m) {
			t.timeouts = append(t.timeouts, m.Val)
		}
	case KindAbort:
		if t.part.Current(m) {
			t.aborts = append(t.aborts, m.Val)
		}
	}
}

type eventLog struct {
	events []engine.Event
}

func (l *eventLog) Commit(engine.Time, engine.Commit) {}
func (l *eventLog) Event(e engine.Event)              { l.events = append(l.events, e) }
func (l *eventLog) Count(string, int64)               {}
func (l *eventLog) Sample(engine.Time)                {}

func (l *eventLog) kinds(kind string) []engine.Event {
	var out []engine.Event
	for _, e := range l.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

func setup(t *testing.T) (*sim.Sim, *eventLog, *[]Deploy) {
	s, log, deploys, _ := setupWith(t, Config{}, 2)
	return s, log, deploys
}

// setupWith builds coordinator (0), source (1, worker 0) and task (2,
// worker 1) with cfg's Interval, Tasks and Sources filled in; the source
// forwards triggers to forward (-1: nobody, so the task never acks).
func setupWith(t *testing.T, cfg Config, forward engine.ProcID) (*sim.Sim, *eventLog, *[]Deploy, []*fakeTask) {
	t.Helper()
	var deploys []Deploy
	tasks := make([]*fakeTask, 3)
	cfg.Interval = 100 * engine.Millisecond
	cfg.Tasks, cfg.Sources = []engine.ProcID{1, 2}, []engine.ProcID{1}
	dep := &engine.Deployment{}
	dep.Add(engine.ProcSpec{Name: "coordinator", Worker: -1, New: func() engine.Process {
		return NewCoordinator(cfg)
	}})
	dep.Add(engine.ProcSpec{Name: "source/0", Worker: 0, New: func() engine.Process {
		tasks[1] = &fakeTask{part: Participant{Coordinator: 0}, next: forward, deploy: &deploys}
		return tasks[1]
	}})
	dep.Add(engine.ProcSpec{Name: "task/0", Worker: 1, New: func() engine.Process {
		tasks[2] = &fakeTask{part: Participant{Coordinator: 0}, next: -1, deploy: &deploys}
		return tasks[2]
	}})
	dep.Coordinator = 0
	log := &eventLog{}
	s, err := sim.New(dep, sim.Config{Seed: 1, Cost: engine.DefaultCost(), Workers: 2, Observer: log})
	if err != nil {
		t.Fatal(err)
	}
	return s, log, &deploys, tasks
}

func TestCheckpointsCompleteInOrder(t *testing.T) {
	s, log, deploys := setup(t)
	s.Run(engine.Second)
	done := log.kinds("checkpoint_completed")
	if len(done) < 8 {
		t.Fatalf("%d checkpoints completed in 1s at a 100ms interval", len(done))
	}
	for i, e := range done {
		if e.ID != int64(i+1) || e.Bytes != 16 {
			t.Fatalf("completion %d: id %d bytes %d, want id %d and 2 tasks x 8 bytes", i, e.ID, e.Bytes, i+1)
		}
	}
	if len(*deploys) != 2 || (*deploys)[0].Restore != -1 {
		t.Fatalf("initial deploys %+v, want two fresh starts", *deploys)
	}
}

// A crash aborts pending checkpoints, restarts every task, waits for the
// worker and deploys everybody from the last completed checkpoint.
func TestFailureRollsBackToLastCompleted(t *testing.T) {
	s, log, deploys := setup(t)
	if err := s.Crash(1, 450*engine.Millisecond, 2*engine.Second); err != nil {
		t.Fatal(err)
	}
	s.Run(4 * engine.Second)
	completedBefore := int64(-1)
	for _, e := range log.kinds("checkpoint_completed") {
		if e.Time < 450*engine.Millisecond {
			completedBefore = e.ID
		}
	}
	redeploys := append([]Deploy(nil), (*deploys)[2:]...)
	if len(redeploys) != 2 {
		t.Fatalf("redeploys %+v, want both tasks once", redeploys)
	}
	for _, d := range redeploys {
		if d.Attempt != 1 || d.Restore != completedBefore {
			t.Fatalf("redeploy %+v, want attempt 1 restoring checkpoint %d", d, completedBefore)
		}
	}
	deploy := log.kinds("deploy")
	if len(deploy) != 2 || deploy[1].Time < 2450*engine.Millisecond {
		t.Fatalf("deploy events %+v: the redeploy must wait for the worker (back at 2.45s)", deploy)
	}
	for _, e := range log.kinds("checkpoint_completed") {
		if e.Time > 450*engine.Millisecond && e.Time < deploy[1].Time {
			t.Fatalf("checkpoint %d completed at %v while the job was down", e.ID, e.Time)
		}
	}
	if n := len(log.kinds("checkpoint_completed")); n < 10 {
		t.Fatalf("only %d checkpoints completed: checkpointing must resume after recovery", n)
	}
}

// Retain keeps the snapshots of the last n completed checkpoints and
// deletes older ones.
func TestRetainKeepsLastCompleted(t *testing.T) {
	s, log, _, _ := setupWith(t, Config{Retain: 3}, 2)
	s.Run(engine.Second)
	done := log.kinds("checkpoint_completed")
	if len(done) < 5 {
		t.Fatalf("%d checkpoints completed", len(done))
	}
	for i, e := range done {
		_, ok := s.StoreValue(Key(e.ID, 2))
		if want := i >= len(done)-3; ok != want {
			t.Errorf("checkpoint %d (%d of %d completed): stored %v, want %v", e.ID, i+1, len(done), ok, want)
		}
	}
}

// A checkpoint still pending AlignmentTimeout after its trigger is
// announced to every task; without the option nothing is sent.
func TestAlignmentTimeoutNotice(t *testing.T) {
	for _, timeout := range []engine.Time{0, 20 * engine.Millisecond} {
		s, log, _, tasks := setupWith(t, Config{AlignmentTimeout: timeout, Timeout: 50 * engine.Millisecond, Tolerable: -1}, -1)
		s.Run(350 * engine.Millisecond)
		if n := len(log.kinds("checkpoint_completed")); n != 0 {
			t.Fatalf("%d checkpoints completed although task/0 never acks", n)
		}
		for _, task := range tasks[1:] {
			want := 0
			if timeout > 0 {
				want = 3 // checkpoints triggered at 100, 200 and 300 ms
			}
			if len(task.timeouts) != want {
				t.Errorf("timeout %v: notices %v, want %d", timeout, task.timeouts, want)
			}
		}
	}
}

// A checkpoint-store outage: every checkpoint whose snapshot or metadata
// write is in progress during it is aborted (declined by a task, or its
// metadata write failed), none completes meanwhile, and checkpoints complete
// again, with new ids, once the store is back.
func TestStoreOutageAbortsCheckpoints(t *testing.T) {
	const ms = engine.Millisecond
	s, log, _, _ := setupWith(t, Config{Tolerable: -1}, 2)
	if err := s.StoreDown(350*ms, 650*ms); err != nil {
		t.Fatal(err)
	}
	s.Run(engine.Second)
	aborted := map[int64]string{}
	for _, e := range log.kinds("checkpoint_aborted") {
		aborted[e.ID] = e.Note
	}
	// Triggers at 400, 500 and 600 ms write during the outage.
	for _, n := range []int64{4, 5, 6} {
		if note := aborted[n]; note != "declined: snapshot write failed" && note != "metadata write failed" {
			t.Errorf("checkpoint %d: aborted %q, want declined or a failed metadata write", n, note)
		}
	}
	var after int
	for _, e := range log.kinds("checkpoint_completed") {
		if e.Time >= 350*ms && e.Time < 650*ms {
			t.Errorf("checkpoint %d completed at %s, during the outage", e.ID, e.Time)
		}
		if _, ok := aborted[e.ID]; ok {
			t.Errorf("checkpoint %d both aborted and completed", e.ID)
		}
		if e.Time >= 650*ms {
			after++
		}
	}
	if after < 2 || len(log.kinds("snapshot_declined")) == 0 {
		t.Fatalf("%d checkpoints completed after the outage, %d snapshots declined", after, len(log.kinds("snapshot_declined")))
	}
}

// Tolerable: failed checkpoints (declined or metadata write failed during
// a store outage; expired) fail the job over once more than Tolerable fail
// in a row — the whole job, from the last completed checkpoint. The outage
// fails checkpoints 4, 5 and 6; with task/0 never acknowledging, every
// checkpoint expires after 50 ms.
func TestTolerableFailedCheckpoints(t *testing.T) {
	const ms = engine.Millisecond
	tests := []struct {
		name      string
		tolerable int
		expire    bool  // task/0 never acks; checkpoints time out
		first     int64 // checkpoint whose failure fails over first (0: none)
	}{
		{"outage, unlimited", -1, false, 0},
		{"outage, 3 tolerated", 3, false, 0},
		{"outage, 2 tolerated", 2, false, 6},
		{"outage, 0 tolerated", 0, false, 4},
		{"expired, 1 tolerated", 1, true, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, forward := Config{Tolerable: tc.tolerable}, engine.ProcID(2)
			if tc.expire {
				cfg.Timeout, forward = 50*ms, -1
			}
			s, log, deploys, _ := setupWith(t, cfg, forward)
			if !tc.expire {
				if err := s.StoreDown(350*ms, 650*ms); err != nil {
					t.Fatal(err)
				}
			}
			s.Run(engine.Second)
			fo := log.kinds("failover_on_checkpoint_failure")
			if tc.first == 0 {
				if len(fo) != 0 {
					t.Fatalf("failovers on checkpoint failure %+v, want none", fo)
				}
				return
			}
			if len(fo) == 0 || fo[0].ID != tc.first {
				t.Fatalf("failovers on checkpoint failure %+v, want the first at checkpoint %d", fo, tc.first)
			}
			// Every task is redeployed in the new attempt from the last
			// completed checkpoint before the failover.
			var completed int64 = -1
			for _, e := range log.kinds("checkpoint_completed") {
				if e.Time < fo[0].Time {
					completed = e.ID
				}
			}
			var redeployed int
			for _, d := range *deploys {
				if d.Attempt == 1 {
					redeployed++
					if d.Restore != completed {
						t.Errorf("redeploy %+v, want checkpoint %d", d, completed)
					}
				}
			}
			if redeployed != 2 {
				t.Errorf("%d tasks redeployed in attempt 1, want 2", redeployed)
			}
		})
	}
}

// setupPipelines builds two independent pipelines, source 1 -> task 2 on
// worker 0 and source 3 -> task 4 on worker 1, and a worker 2 with no task;
// regions as given (nil: one region, a full restart). deploys[p] lists the
// deployments process p received.
func setupPipelines(t *testing.T, regions [][]engine.ProcID) (*sim.Sim, *eventLog, map[engine.ProcID]*[]Deploy, map[engine.ProcID]*fakeTask) {
	t.Helper()
	cfg := Config{Interval: 100 * engine.Millisecond, Tasks: []engine.ProcID{1, 2, 3, 4},
		Sources: []engine.ProcID{1, 3}, Regions: regions, Placement: map[engine.ProcID]int{1: 0, 2: 0, 3: 1, 4: 1}}
	deploys := map[engine.ProcID]*[]Deploy{}
	tasks := map[engine.ProcID]*fakeTask{}
	dep := &engine.Deployment{}
	dep.Add(engine.ProcSpec{Name: "coordinator", Worker: -1, New: func() engine.Process { return NewCoordinator(cfg) }})
	for _, p := range []struct {
		id, next engine.ProcID
		worker   int
	}{{1, 2, 0}, {2, -1, 0}, {3, 4, 1}, {4, -1, 1}} {
		deploys[p.id] = &[]Deploy{}
		dep.Add(engine.ProcSpec{Name: fmt.Sprintf("p/%d", p.id), Worker: p.worker, New: func() engine.Process {
			tasks[p.id] = &fakeTask{part: Participant{Coordinator: 0}, next: p.next, deploy: deploys[p.id]}
			return tasks[p.id]
		}})
	}
	dep.Coordinator = 0
	log := &eventLog{}
	s, err := sim.New(dep, sim.Config{Seed: 1, Cost: engine.DefaultCost(), Workers: 3, Observer: log})
	if err != nil {
		t.Fatal(err)
	}
	return s, log, deploys, tasks
}

// Region failover, step by step: a crash of worker 0 during checkpoint 4
// aborts it, restarts and redeploys only the region on worker 0 (from the
// last completed checkpoint, in a new attempt), tells the running region
// to drop checkpoint 4, and checkpoints then complete with the running
// region still in its first attempt. A full restart redeploys everybody.
func TestRegionFailoverRestartsOnlyTheFailedRegion(t *testing.T) {
	for _, tc := range []struct {
		name       string
		regions    [][]engine.ProcID
		redeployed []engine.ProcID
	}{
		{"region", [][]engine.ProcID{{1, 2}, {3, 4}}, []engine.ProcID{1, 2}},
		{"full", nil, []engine.ProcID{1, 2, 3, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, log, deploys, tasks := setupPipelines(t, tc.regions)
			if err := s.Crash(0, 401*engine.Millisecond, 500*engine.Millisecond); err != nil {
				t.Fatal(err)
			}
			s.Run(3 * engine.Second) // detected at 1.4 s, redeployed at 1.6 s
			if ab := log.kinds("checkpoint_aborted"); len(ab) != 1 || ab[0].ID != 4 || ab[0].Note != "failure" {
				t.Fatalf("aborted %+v, want checkpoint 4 aborted by the failure", ab)
			}
			fo := log.kinds("failover")
			if len(fo) != 1 || fo[0].Value != int64(len(tc.redeployed)) {
				t.Fatalf("failover events %+v, want one restarting %d tasks", fo, len(tc.redeployed))
			}
			for id := engine.ProcID(1); id <= 4; id++ {
				want := 1
				if slices.Contains(tc.redeployed, id) {
					want = 2
				}
				ds := *deploys[id]
				if len(ds) != want {
					t.Fatalf("process %d deployed %d times (%+v), want %d", id, len(ds), ds, want)
				}
				if want == 2 && (ds[1].Attempt != 1 || ds[1].Restore != 3) {
					t.Fatalf("process %d redeployed as %+v, want attempt 1 from checkpoint 3", id, ds[1])
				}
			}
			if tc.name == "region" {
				if got := tasks[4].aborts; len(got) != 1 || got[0] != 4 {
					t.Fatalf("running task 4 got aborts %v, want [4]", got)
				}
				if tasks[3].part.Attempt != 0 {
					t.Fatalf("running source 3 in attempt %d, want 0", tasks[3].part.Attempt)
				}
			}
			var after int
			for _, e := range log.kinds("checkpoint_completed") {
				if e.ID > 4 {
					after++
				}
			}
			if after < 5 {
				t.Fatalf("%d checkpoints completed after the failover, want checkpointing to resume", after)
			}
		})
	}
}

// A worker that hosts no task triggers no failover, under either strategy.
func TestFailureOfTasklessWorkerRestartsNothing(t *testing.T) {
	for _, regions := range [][][]engine.ProcID{{{1, 2}, {3, 4}}, nil} {
		s, log, deploys, _ := setupPipelines(t, regions)
		if err := s.Crash(2, 401*engine.Millisecond, 500*engine.Millisecond); err != nil {
			t.Fatal(err)
		}
		s.Run(2 * engine.Second)
		if n := len(log.kinds("failure_detected")); n != 1 {
			t.Fatalf("%d failures detected, want 1", n)
		}
		if ab := log.kinds("checkpoint_aborted"); len(ab) != 0 {
			t.Fatalf("aborted %+v: nothing failed", ab)
		}
		for id, ds := range deploys {
			if len(*ds) != 1 {
				t.Fatalf("process %d deployed %d times, want once", id, len(*ds))
			}
		}
		if n := len(log.kinds("checkpoint_completed")); n < 18 {
			t.Fatalf("%d checkpoints completed in 2s at 100ms, want checkpointing undisturbed", n)
		}
	}
}

// A worker that fails while a failover is restarting its tasks (they are
// down, so the failure lists no process) still fails over: the placement,
// not the failure's process list, says which tasks it hosts. Found by
// torture (bank, two crashes, the second 36 ms after the first's
// detection).
func TestFailureDuringTaskRestartFailsOver(t *testing.T) {
	s, log, deploys, _ := setupPipelines(t, nil)
	if err := s.Crash(0, 401*engine.Millisecond, 500*engine.Millisecond); err != nil {
		t.Fatal(err)
	}
	// Detected at 1.401 s; worker 1's tasks restart until 1.601 s.
	if err := s.Crash(1, 1450*engine.Millisecond, 500*engine.Millisecond); err != nil {
		t.Fatal(err)
	}
	s.Run(4 * engine.Second)
	fo := log.kinds("failover")
	if len(fo) != 2 || fo[0].Value != 4 || fo[1].Value != 4 {
		t.Fatalf("failover events %+v, want two restarting all 4 tasks", fo)
	}
	for id, ds := range deploys {
		last := (*ds)[len(*ds)-1]
		if last.Attempt != 2 {
			t.Fatalf("process %d last deployed as %+v, want attempt 2", id, last)
		}
	}
}
