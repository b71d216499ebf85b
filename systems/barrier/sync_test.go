package barrier

import (
	"slices"
	"testing"

	"ftbench/engine"
	"ftbench/systems/internal/checkpoint"
	"ftbench/systems/internal/stream"
	"ftbench/workloads"
)

// setupSource deploys source/0 of a two-partition grep job in mode m, with
// 1000 records per partition appended in its first second.
func setupSource(t *testing.T, m mode) (*source, *fakeCtx) {
	t.Helper()
	w, err := workloads.New("grep", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	par := &params{mode: m, twoPC: true}
	dep := &engine.Deployment{}
	g := stream.Build(dep, w.Plan(), 2, 2,
		func(*stream.Graph, int) engine.Process { return nil },
		func(*stream.Graph, int, int) engine.Process { return nil })
	par.coord = dep.Add(engine.ProcSpec{Name: "coordinator", Worker: -1})
	par.nprocs = len(dep.Procs)
	src := newSource(par, g, w, &workloads.Log{Parts: 2, Rate: 2000, End: engine.Second}, 0)
	ctx := newFakeCtx(g.Source[0])
	src.Handle(ctx, par.coord, deployMsg(-1))
	return src, ctx
}

// poll fires the source's poll timer at time at and returns how many
// records it sent.
func poll(src *source, ctx *fakeCtx, at engine.Time) int {
	ctx.now = at
	before := len(ctx.sent)
	src.Timer(ctx, pollTimer)
	n := 0
	for _, s := range ctx.sent[before:] {
		if !s.m.Ctrl {
			n++
		}
	}
	return n
}

func coordMsg(kind uint16, n int64) engine.Msg {
	return engine.Msg{Kind: kind, Ctrl: true, Val: n}
}

// The sync variant's source, step by step: on trigger n it snapshots its
// offset, sends barrier(n) and stops reading; polls read nothing until n
// completes (or is aborted), then reading resumes where it stopped. The
// aligned variant's source never stops.
func TestSyncSourceStopsUntilCheckpointEnds(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode mode
		end  uint16 // what ends the checkpoint
		stop bool
	}{
		{"sync/complete", modeSync, checkpoint.KindComplete, true},
		{"sync/abort", modeSync, checkpoint.KindAbort, true},
		{"aligned", modeAligned, checkpoint.KindComplete, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, ctx := setupSource(t, tc.mode)
			if n := poll(src, ctx, 100*engine.Millisecond); n == 0 {
				t.Fatal("read nothing before the checkpoint")
			}
			cut := src.reader.Next
			src.Handle(ctx, src.par.coord, coordMsg(checkpoint.KindTrigger, 1))
			if got := ctx.store[checkpoint.Key(1, ctx.self)].(*snapshot).Offset; got != cut {
				t.Fatalf("snapshot offset %d, want %d", got, cut)
			}
			n := poll(src, ctx, 200*engine.Millisecond)
			if stopped := n == 0; stopped != tc.stop {
				t.Fatalf("read %d records during checkpoint 1; want stopped=%v", n, tc.stop)
			}
			if tc.stop {
				src.Handle(ctx, src.par.coord, coordMsg(tc.end, 0)) // an older checkpoint: still stopped
				if n := poll(src, ctx, 250*engine.Millisecond); n != 0 {
					t.Fatalf("read %d records after the end of checkpoint 0", n)
				}
				if !src.parked {
					t.Fatal("the poll timer fired while stopped but is not parked")
				}
				ctx.now = 300 * engine.Millisecond
				src.Handle(ctx, src.par.coord, coordMsg(tc.end, 1))
				if src.halted != 0 || src.parked {
					t.Fatalf("still stopped after the end of checkpoint 1 (halted %d, parked %v)", src.halted, src.parked)
				}
				if src.reader.Next != cut {
					t.Fatalf("offset moved from %d to %d while stopped", cut, src.reader.Next)
				}
				if n := poll(src, ctx, 300*engine.Millisecond); n == 0 {
					t.Fatal("read nothing after resuming")
				}
			}
		})
	}
}

// Start delay on a known case: checkpoint 1 triggered at 1 s, its first
// barriers reaching three tasks at 1.002 s, 1.010 s and 1.500 s (the last
// behind a backlog), and checkpoint 2 at 2 s reaching one task at 2.004 s.
func TestStartDelays(t *testing.T) {
	ms := engine.Millisecond
	trig := map[int64]engine.Time{1: engine.Second, 2: 2 * engine.Second}
	starts := []engine.Event{
		{Kind: "checkpoint_start", ID: 1, Time: engine.Second + 2*ms},
		{Kind: "checkpoint_start", ID: 1, Time: engine.Second + 10*ms},
		{Kind: "checkpoint_start", ID: 1, Time: engine.Second + 500*ms},
		{Kind: "checkpoint_start", ID: 2, Time: 2*engine.Second + 4*ms},
		{Kind: "checkpoint_start", ID: 3, Time: 3 * engine.Second}, // never triggered: ignored
	}
	all, per := startDelays(trig, starts)
	if want := []float64{2, 10, 500, 4}; !slices.Equal(all, want) {
		t.Fatalf("delays %v, want %v", all, want)
	}
	if !slices.Equal(per[1], []float64{2, 10, 500}) || !slices.Equal(per[2], []float64{4}) || per[3] != nil {
		t.Fatalf("per checkpoint %v", per)
	}
}

// A task records its checkpoint's start at the first barrier only, and an
// aligned task does so even while other inputs' barriers are missing.
func TestTaskRecordsStartAtFirstBarrier(t *testing.T) {
	task, ctx, a, b, _ := setupTask(t, modeAligned)
	ctx.now = 7 * engine.Millisecond
	ctx.enqueue(a, barrierMsg(kindBarrier, 1))
	ctx.drain(task)
	ctx.now = 9 * engine.Millisecond
	ctx.enqueue(b, barrierMsg(kindBarrier, 1))
	ctx.drain(task)
	var at []engine.Time
	for _, e := range ctx.events {
		if e.Kind == "checkpoint_start" {
			at = append(at, e.Time)
		}
	}
	if len(at) != 1 || at[0] != 7*engine.Millisecond {
		t.Fatalf("checkpoint_start at %v, want once at 7ms", at)
	}
}
