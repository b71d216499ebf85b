package harness

import (
	"testing"
	"time"

	"ftbench/engine"
)

// The commit pipe checks every commit in report order, sync returns only
// once every commit queued so far is checked, and the background work runs
// in the gaps between batches and to its end, even when it outlasts the
// commits (the pipe is stopped first).
func TestCommitPipeChecksInOrderAndRunsBackground(t *testing.T) {
	var checked []int64
	left, done := 20000, make(chan struct{})
	p := newCommitPipe(func(q *queuedCommit) { checked = append(checked, q.c.ID.Off) }, func() bool {
		left--
		if left == 0 {
			close(done)
		}
		return left > 0
	}, minPipeQueueBytes)
	const n = 3*pipeBatch + 17
	for i := int64(0); i < n; i++ {
		p.add(engine.Time(i), engine.Time(i), &engine.Commit{ID: engine.EffectID{Off: i}})
		if i == pipeBatch+5 {
			p.sync()
			if len(checked) != pipeBatch+6 {
				t.Fatalf("after sync %d commits checked, want %d", len(checked), pipeBatch+6)
			}
		}
	}
	p.sync()
	if len(checked) != n {
		t.Fatalf("%d commits checked, want %d", len(checked), n)
	}
	for i, off := range checked {
		if off != int64(i) {
			t.Fatalf("commit %d checked as number %d: out of order", off, i)
		}
	}
	p.stop()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("background work stopped with %d steps left", left)
	}
}

// A piece handed over whole is checked in report order with the single
// commits around it, each of its commits at the piece's instants, and once
// checked comes back from buffer instead of a new slice.
func TestCommitPipePiecesInOrderAndReused(t *testing.T) {
	type seen struct {
		off     int64
		now, at engine.Time
	}
	var checked []seen
	p := newCommitPipe(func(q *queuedCommit) { checked = append(checked, seen{q.c.ID.Off, q.now, q.at}) }, nil, minPipeQueueBytes)
	defer p.stop()
	c := func(off int64) engine.Commit { return engine.Commit{ID: engine.EffectID{Off: off}} }
	c0, c4 := c(0), c(4)
	p.add(1, 1, &c0)
	piece := append(p.buffer(3), c(1), c(2), c(3))
	p.addPiece(5, 7, piece)
	p.add(6, 8, &c4)
	big := p.buffer(pipeBatch)
	for i := int64(0); i < pipeBatch; i++ {
		big = append(big, c(5+i))
	}
	p.addPiece(9, 9, big) // fills the batch: it goes over at once
	p.sync()
	if len(checked) != 5+pipeBatch {
		t.Fatalf("%d commits checked, want %d", len(checked), 5+pipeBatch)
	}
	want := []seen{{0, 1, 1}, {1, 5, 7}, {2, 5, 7}, {3, 5, 7}, {4, 6, 8}, {5, 9, 9}}
	for i, w := range want {
		if checked[i] != w {
			t.Errorf("check %d: %+v, want %+v", i, checked[i], w)
		}
	}
	for i, s := range checked {
		if s.off != int64(i) {
			t.Fatalf("commit %d checked as number %d: out of order", s.off, i)
		}
	}
	reused := map[*engine.Commit]bool{&piece[:1][0]: true, &big[:1][0]: true}
	for i := 0; i < 2; i++ {
		if b := p.buffer(3); len(b) != 0 || !reused[&b[:1][0]] {
			t.Errorf("buffer %d: a new slice (len %d), want a checked piece back", i, len(b))
		}
	}
}
