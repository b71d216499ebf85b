package snapshot

import (
	"math/rand/v2"
	"slices"
	"testing"

	"ftbench/engine"
	"ftbench/engine/sim"
	"ftbench/systems"
	"ftbench/systems/internal/checkpoint"
	"ftbench/systems/internal/stream"
	"ftbench/workloads"
)

// fakeCtx is one process's Ctx for hand-stepped dataflow tests.
type fakeCtx struct {
	self    engine.ProcID
	cost    engine.CostModel
	sent    []sent
	store   map[string]any
	commits []engine.Commit
	paused  map[engine.ProcID]bool
}

type sent struct {
	to engine.ProcID
	m  engine.Msg
}

func newFakeCtx(self engine.ProcID) *fakeCtx {
	return &fakeCtx{self: self, cost: engine.DefaultCost(), store: map[string]any{}, paused: map[engine.ProcID]bool{}}
}

func (c *fakeCtx) Self() engine.ProcID                           { return c.self }
func (c *fakeCtx) Now() engine.Time                              { return 0 }
func (c *fakeCtx) Send(to engine.ProcID, m engine.Msg)           { c.sent = append(c.sent, sent{to, m}) }
func (c *fakeCtx) SendOvertaking(to engine.ProcID, m engine.Msg) { c.Send(to, m) }
func (c *fakeCtx) Overtaken() []engine.Msg                       { return nil }
func (c *fakeCtx) After(engine.Time, int64)                      {}
func (c *fakeCtx) Work(engine.Time)                              {}
func (c *fakeCtx) Rand() *rand.Rand                              { return engine.NewRand(1) }
func (c *fakeCtx) Store() engine.Store                           { return c }
func (c *fakeCtx) Record(engine.Event)                           {}
func (c *fakeCtx) Count(string, int64)                           {}
func (c *fakeCtx) Commit(e engine.Commit)                        { c.commits = append(c.commits, e) }
func (c *fakeCtx) Pause(from engine.ProcID)                      { c.paused[from] = true }
func (c *fakeCtx) Resume(from engine.ProcID)                     { delete(c.paused, from) }
func (c *fakeCtx) Restart(engine.ProcID)                         {}
func (c *fakeCtx) Cost() *engine.CostModel                       { return &c.cost }
func (c *fakeCtx) Put(key string, val any, _, _ int64)           { c.store[key] = val }
func (c *fakeCtx) Get(key string) (any, bool)                    { v, ok := c.store[key]; return v, ok }
func (c *fakeCtx) Delete(key string)                             { delete(c.store, key) }

// takeSent returns and clears what the process sent.
func (c *fakeCtx) takeSent() []sent { s := c.sent; c.sent = nil; return s }

func deployMsg(attempt, restore int64) engine.Msg {
	return engine.Msg{Kind: checkpoint.KindDeploy, Ctrl: true, Key: uint64(attempt), Body: checkpoint.Deploy{Attempt: attempt, Restore: restore}}
}

// A count task of wordcount with two inputs, stepped by hand through one
// checkpoint and a restore from it: the state is recorded at the first
// marker, records on a channel whose marker is still to come are channel
// state (and are processed at once: nothing blocks), records on a closed
// channel are not, and a restore re-injects the channel state.
func TestDataflowTaskChannelState(t *testing.T) {
	w, err := workloads.New("wordcount", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	dep := &engine.Deployment{}
	dj := &dagJob{coord: 99}
	newTaskProc := func(g *stream.Graph, s, i int) engine.Process { return newTask(dj, s, i) }
	dj.g = stream.Build(dep, w.Plan(), 2, 2, func(*stream.Graph, int) engine.Process { return nil }, newTaskProc)
	split0, split1 := dj.g.Stages[0][0], dj.g.Stages[0][1]
	count0, sink0 := dj.g.Stages[1][0], dj.g.Stages[2][0]
	word := func(key uint64) engine.Msg { return engine.Msg{Key: key, Val: 1, Size: 12} }
	marker := func(n int64) engine.Msg { return engine.Msg{Kind: kindMarker, Ctrl: true, Key: 0, Val: n} }

	ctx := newFakeCtx(count0)
	tk := newTask(dj, 1, 0)
	tk.Init(ctx)
	if !ctx.paused[split0] || !ctx.paused[split1] {
		t.Fatal("inputs must wait for deployment")
	}
	tk.Handle(ctx, dj.coord, deployMsg(0, -1))
	if len(ctx.paused) != 0 {
		t.Fatal("inputs still paused after deployment")
	}
	tk.Handle(ctx, split0, word(7))
	tk.Handle(ctx, split0, marker(1)) // first marker: record {7:1}, marker to the sink
	out := ctx.takeSent()
	if len(out) != 2 || out[1].to != sink0 || out[1].m.Kind != kindMarker {
		t.Fatalf("want the count for 7 then a marker to the sink, got %+v", out)
	}
	tk.Handle(ctx, split0, word(7)) // closed channel: after the cut, not recorded
	tk.Handle(ctx, split1, word(8)) // open channel: channel state, processed at once
	if tk.op.State.Get(7) != 2 || tk.op.State.Get(8) != 1 {
		t.Fatalf("CL must not block: state %v", tk.op.State)
	}
	tk.Handle(ctx, split1, marker(1)) // last marker: persist
	v, ok := ctx.store[checkpoint.Key(1, count0)]
	if !ok {
		t.Fatal("snapshot not persisted")
	}
	snap := v.(*taskState)
	if !slices.Equal(snap.KV, []stream.KV{{Key: 7, Val: 1}}) || len(snap.Chans[0]) != 0 || len(snap.Chans[1]) != 1 || snap.Chans[1][0].Key != 8 {
		t.Fatalf("snapshot %+v", snap)
	}
	ctx.takeSent()
	tk.Handle(ctx, engine.Runtime, engine.Msg{Kind: engine.KindStoreDone, Ctrl: true, Val: 1})
	ack := ctx.takeSent()
	if len(ack) != 1 || ack[0].to != dj.coord || ack[0].m.Kind != checkpoint.KindAck || ack[0].m.Body.(checkpoint.Ack).ChannelBytes != 12 {
		t.Fatalf("want one ack with 12 bytes of channel state after the write is durable, got %+v", ack)
	}

	// Rollback: a new incarnation restores {7:1} and re-injects word 8.
	tk2 := newTask(dj, 1, 0)
	ctx2 := newFakeCtx(count0)
	ctx2.store = ctx.store
	tk2.Init(ctx2)
	tk2.Handle(ctx2, dj.coord, deployMsg(1, 1))
	if tk2.op.State.Len() != 2 || tk2.op.State.Get(7) != 1 || tk2.op.State.Get(8) != 1 {
		t.Fatalf("restored state %v, want {7:1 8:1}", tk2.op.State)
	}
	if re := ctx2.takeSent(); len(re) != 1 || re[0].m.Key != 8 || re[0].m.Val != 1 {
		t.Fatalf("re-injected output %+v", re)
	}
	// A marker of the old attempt is ignored.
	tk2.Handle(ctx2, split0, marker(2))
	if len(tk2.cuts) != 0 {
		t.Fatal("a marker of attempt 0 opened a cut in attempt 1")
	}
}

// The sink's two-phase commit across a crash: a transaction committed
// before the failure is not committed again, one still pre-committed is
// committed on restore, and restoring twice commits nothing more.
func TestSinkTwoPhaseCommitAcrossCrash(t *testing.T) {
	ctx := newFakeCtx(5)
	s := &sinkTxns{self: 5}
	eff := func(off int64) engine.Commit { return engine.Commit{ID: engine.EffectID{Off: off}, Key: 1, Value: off} }
	s.pending = append(s.pending, eff(0), eff(1))
	if ids := s.precommit(ctx, 1); !slices.Equal(ids, []int64{1}) {
		t.Fatalf("cut 1 lists %v", ids)
	}
	s.pending = append(s.pending, eff(2))
	ids := s.precommit(ctx, 2) // snapshot 2 lists both: neither committed at its cut
	if !slices.Equal(ids, []int64{1, 2}) {
		t.Fatalf("cut 2 lists %v", ids)
	}
	if ids3 := s.precommit(ctx, 3); !slices.Equal(ids3, []int64{1, 2}) {
		t.Fatalf("an empty transaction was created: %v", ids3)
	}
	if len(ctx.commits) != 0 {
		t.Fatal("effects visible before their checkpoint completed")
	}
	s.commit(ctx, 1) // checkpoint 1 completes; then the sink crashes
	if len(ctx.commits) != 2 {
		t.Fatalf("commit(1) made %d effects visible", len(ctx.commits))
	}
	after := newFakeCtx(5)
	after.store = ctx.store
	restored := &sinkTxns{self: 5}
	restored.restore(after, ids) // restore from checkpoint 2
	restored.restore(after, ids) // and once more: idempotent
	if len(after.commits) != 1 || after.commits[0].ID.Off != 2 {
		t.Fatalf("restore committed %+v, want only transaction 2's effect", after.commits)
	}
	if len(after.store) != 0 {
		t.Fatalf("committed transactions left in the store: %v", after.store)
	}
}

// The dataflow audit catches a checkpoint that lost an in-flight record:
// run bank, then drop one recorded credit from a stored checkpoint.
func TestDataflowAuditCatchesLostChannelState(t *testing.T) {
	w, err := workloads.New("bank", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	cost := engine.DefaultCost()
	log := &workloads.Log{Parts: 2, Rate: 50000, End: engine.Second}
	job := systems.Job{Workload: w, Log: log, Parallelism: 2, Workers: 2, Variant: CL, Cost: &cost,
		Opts: systems.Options{flagCheckpoint: "100ms", flagInterval: "1s", flagSnapshots: "0"}}
	dep, err := system{}.Compile(job)
	if err != nil {
		t.Fatal(err)
	}
	obs := &observer{counters: map[string]int64{}}
	s, err := sim.New(dep, sim.Config{Seed: 1, Cost: cost, Workers: 2, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	s.Run(log.End)
	info := systems.RunInfo{Events: obs.events, Counters: obs.counters, Store: s.StoreValue, Workload: w, Log: log, Job: job}
	m := system{}.Summarize(info)
	if m["snapshots_taken"].(int64) < 5 || m["snapshots_inconsistent"].(int64) != 0 || m["safety_violations"].(int64) != 0 {
		t.Fatalf("clean run: %v", m)
	}
	// Find a credit-stage task whose checkpoint recorded a credit in flight.
	tampered := false
	for _, n := range eventIDs(obs.events, "checkpoint_completed") {
		for id := 0; id < len(dep.Procs) && !tampered; id++ {
			v, ok := s.StoreValue(checkpoint.Key(n, engine.ProcID(id)))
			if ts, isTask := v.(*taskState); ok && isTask && ts.Stage == 1 {
				for i, ch := range ts.Chans {
					if k := slices.IndexFunc(ch, func(r engine.Msg) bool { return r.ID.Sub == workloads.SubCredit }); k >= 0 {
						ts.Chans[i] = slices.Delete(slices.Clone(ch), k, k+1)
						tampered = true
						break
					}
				}
			}
		}
	}
	if !tampered {
		t.Skip("no checkpoint recorded a credit in flight; raise the rate")
	}
	m = system{}.Summarize(info)
	c := m["conservation"].(map[string]any)
	if m["snapshots_inconsistent"].(int64) != 1 || c["violated"].(int64) != 1 || m["safety_violations"].(int64) != 1 {
		t.Fatalf("tampered checkpoint not caught: %v", m)
	}
}
