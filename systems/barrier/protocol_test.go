package barrier

import (
	"testing"

	"ftbench/engine"
	"ftbench/systems/internal/checkpoint"
	"ftbench/systems/internal/stream"
)

func setupTask(t *testing.T, m mode) (*task, *fakeCtx, engine.ProcID, engine.ProcID, *params) {
	t.Helper()
	par := &params{mode: m, twoPC: true, alignTimeout: 100 * engine.Millisecond}
	g, a, b, self := traceGraph(par)
	task := newTask(par, g, 0, 0)
	ctx := newFakeCtx(self, a, b)
	task.Handle(ctx, par.coord, deployMsg(-1))
	return task, ctx, a, b, par
}

func stateOf(task *task) int64 { return task.chain.links[0].Op.State.Get(0) }

// An overtaking barrier jumps A's queued records: they are channel state
// and are still processed, after the snapshot.
func TestUnalignedOvertakenIsChannelState(t *testing.T) {
	task, ctx, a, b, _ := setupTask(t, modeUnaligned)
	ctx.enqueue(a, record(0, 1))
	ctx.drain(task)
	ctx.enqueue(a, record(0, 2))
	ctx.enqueue(a, record(0, 3))
	ctx.overtake(task, a, barrierMsg(kindPriority, 1)) // jumps A2, A3
	if stateOf(task) != 1 {
		t.Fatalf("state %d at the snapshot, want 1 (A1)", stateOf(task))
	}
	ctx.enqueue(b, record(1, 1)) // before B's barrier: recorded
	ctx.drain(task)
	ctx.overtake(task, b, barrierMsg(kindPriority, 1))
	ctx.complete(task)
	snap := ctx.store[checkpoint.Key(1, ctx.self)].(*snapshot)
	if len(snap.Ops[0].State) != 1 || snap.Ops[0].State[0].Val != 1 {
		t.Fatalf("snapshot state %v, want key 0 = 1", snap.Ops[0].State)
	}
	got := map[engine.ProcID][]int64{}
	for _, f := range snap.Channel {
		for _, r := range f.Records {
			got[f.From] = append(got[f.From], r.ID.Off)
		}
	}
	if len(got[a]) != 2 || got[a][0] != 2 || got[a][1] != 3 || len(got[b]) != 1 || got[b][0] != 1 {
		t.Fatalf("channel state %v, want A: [2 3], B: [1]", got)
	}
	if stateOf(task) != 4 {
		t.Fatalf("state %d after draining, want 4 (overtaken records processed after the snapshot)", stateOf(task))
	}
	acked := false
	for _, s := range ctx.sent {
		if s.m.Kind == checkpoint.KindAck {
			acked = s.m.Body.(checkpoint.Ack).ChannelBytes > 0
		}
	}
	if !acked {
		t.Fatal("no ack reporting channel-state bytes")
	}
}

// A restore loads the state, re-injects the channel state, and only then
// handles input that arrived before the deployment.
func TestRestoreReinjectsChannelStateFirst(t *testing.T) {
	par := &params{mode: modeUnaligned, twoPC: true}
	g, a, b, self := traceGraph(par)
	task := newTask(par, g, 0, 0)
	ctx := newFakeCtx(self, a, b)
	ctx.store[checkpoint.Key(3, self)] = &snapshot{
		Ops:     []opSnapshot{{State: []stream.KV{{Key: 0, Val: 10}}}},
		Channel: []inFlight{{From: b, Records: []engine.Msg{record(1, 7), record(1, 8)}}},
	}
	ctx.enqueue(a, record(0, 11)) // arrives before the deployment: held
	ctx.drain(task)
	if !ctx.paused[a] || stateOf(task) != 0 {
		t.Fatalf("an undeployed task processed input (paused %v, state %d)", ctx.paused[a], stateOf(task))
	}
	task.Handle(ctx, par.coord, deployMsg(3))
	if ctx.paused[a] {
		t.Fatal("held channel not resumed after deployment")
	}
	var order []int64
	for _, s := range ctx.sent {
		if s.m.Kind == 0 {
			order = append(order, s.m.ID.Off)
		}
	}
	if stateOf(task) != 13 || len(order) != 3 || order[0] != 7 || order[1] != 8 || order[2] != 11 {
		t.Fatalf("state %d, outputs %v: want 13 and the channel state (7 8) before the held record (11)", stateOf(task), order)
	}
}

// A restored 2PC sink commits the pending transactions of its checkpoint
// that were not committed before the failure, and no others.
func TestSinkRecoveryCommitsOnce(t *testing.T) {
	par := &params{mode: modeAligned, twoPC: true}
	g, _, _, _ := traceGraph(par)
	sinkID := g.Stages[1][0]
	task := newTask(par, g, 1, 0)
	ctx := newFakeCtx(sinkID, g.Stages[0][0])
	c := func(off int64) engine.Commit { return engine.Commit{ID: engine.EffectID{Off: off}} }
	// Transaction 4 committed before the failure (its key is gone), 5 did
	// not (its completion notice died with the sink).
	ctx.store[txnKey(sinkID, 5)] = txnRecord{Effects: txnEffects{{c(50)}, {c(51)}}}
	ctx.store[checkpoint.Key(5, sinkID)] = &snapshot{Ops: []opSnapshot{{Pending: []int64{4, 5}}}}
	task.Handle(ctx, par.coord, deployMsg(5))
	if len(ctx.commits) != 2 || ctx.commits[0].ID.Off != 50 {
		t.Fatalf("commits %v, want transaction 5's two effects", ctx.commits)
	}
	if _, ok := ctx.store[txnKey(sinkID, 5)]; ok {
		t.Fatal("committed transaction still pending in the store")
	}
	// A second restore of the same checkpoint commits nothing again.
	again := newTask(par, g, 1, 0)
	again.Handle(ctx, par.coord, deployMsg(5))
	if len(ctx.commits) != 2 {
		t.Fatalf("transaction committed twice: %v", ctx.commits)
	}
}

// 2PC: effects stay invisible until their checkpoint completes.
func TestSinkCommitsOnCompletion(t *testing.T) {
	par := &params{mode: modeAligned, twoPC: true}
	g, _, _, _ := traceGraph(par)
	up := g.Stages[0][0]
	task := newTask(par, g, 1, 0)
	ctx := newFakeCtx(g.Stages[1][0], up)
	task.Handle(ctx, par.coord, deployMsg(-1))
	ctx.enqueue(up, record(0, 1))
	ctx.enqueue(up, barrierMsg(kindBarrier, 1))
	ctx.enqueue(up, record(0, 2))
	ctx.drain(task)
	ctx.complete(task)
	if len(ctx.commits) != 0 {
		t.Fatalf("committed %v before checkpoint 1 completed", ctx.commits)
	}
	task.Handle(ctx, par.coord, engine.Msg{Kind: checkpoint.KindComplete, Ctrl: true, Val: 1})
	if len(ctx.commits) != 1 || ctx.commits[0].ID.Off != 1 {
		t.Fatalf("commits %v, want only epoch 1's record", ctx.commits)
	}
}

// Aligned-timeout: A's barrier arrived (A paused); B's barrier is queued
// behind B2, B3 and announced. At the timeout the task snapshots, resumes A
// and converts B: the announced records not consumed yet are its channel
// state, and the late FIFO barrier is ignored.
func TestAlignedTimeoutConvertsAnnouncedBarrier(t *testing.T) {
	task, ctx, a, b, par := setupTask(t, modeAlignedTimeout)
	ctx.enqueue(a, barrierMsg(kindBarrier, 1))
	ctx.enqueue(a, record(0, 5)) // after A's barrier: held
	ctx.drain(task)
	if !ctx.paused[a] {
		t.Fatal("A not paused after its barrier")
	}
	ctx.enqueue(b, record(1, 1))
	ctx.enqueue(b, record(1, 2))
	ctx.enqueue(b, barrierMsg(kindBarrier, 1))
	ctx.overtake(task, b, barrierMsg(kindAnnounce, 1)) // jumps B1, B2
	// Deliver B1 alone, before the timeout.
	first := ctx.queues[b][0]
	ctx.queues[b] = ctx.queues[b][1:]
	task.Handle(ctx, b, first)
	ctx.now = 200 * engine.Millisecond
	task.Handle(ctx, par.coord, engine.Msg{Kind: checkpoint.KindAlignTimeout, Ctrl: true, Val: 1})
	if ctx.paused[a] {
		t.Fatal("A still paused after switching to unaligned")
	}
	ctx.drain(task) // A5, B2 and the stale FIFO barrier
	ctx.complete(task)
	snap := ctx.store[checkpoint.Key(1, ctx.self)].(*snapshot)
	if snap.Ops[0].State[0].Val != 1 || len(snap.Channel) != 1 || snap.Channel[0].From != b ||
		len(snap.Channel[0].Records) != 1 || snap.Channel[0].Records[0].ID.Off != 2 {
		t.Fatalf("snapshot %+v: want state 1 (B1) and channel state B: [B2]", snap)
	}
	if stateOf(task) != 3 {
		t.Fatalf("state %d, want 3 after A5 and B2", stateOf(task))
	}
	overtaking := 0
	for _, s := range ctx.sent {
		if s.m.Kind == kindPriority && s.overtaking {
			overtaking++
		}
	}
	if overtaking != 1 {
		t.Fatalf("%d overtaking barriers forwarded, want 1", overtaking)
	}
}

// An aborted checkpoint releases the paused channels.
func TestAbortDuringAlignmentResumes(t *testing.T) {
	task, ctx, a, b, par := setupTask(t, modeAligned)
	ctx.enqueue(a, barrierMsg(kindBarrier, 1))
	ctx.enqueue(a, record(0, 1))
	ctx.drain(task)
	task.Handle(ctx, par.coord, engine.Msg{Kind: checkpoint.KindAbort, Ctrl: true, Val: 1})
	ctx.drain(task)
	if ctx.paused[a] || stateOf(task) != 1 {
		t.Fatalf("after abort: A paused %v, state %d", ctx.paused[a], stateOf(task))
	}
	// B's late barrier of the aborted checkpoint neither pauses nor snapshots.
	ctx.enqueue(b, barrierMsg(kindBarrier, 1))
	ctx.drain(task)
	if ctx.paused[b] || len(ctx.puts) != 0 {
		t.Fatalf("stale barrier acted on: B paused %v, puts %v", ctx.paused[b], ctx.puts)
	}
	// The next checkpoint aligns normally.
	ctx.enqueue(a, barrierMsg(kindBarrier, 2))
	ctx.enqueue(b, barrierMsg(kindBarrier, 2))
	ctx.drain(task)
	ctx.complete(task)
	if _, ok := ctx.store[checkpoint.Key(2, ctx.self)]; !ok {
		t.Fatal("checkpoint 2 not snapshotted after the abort of 1")
	}
}
