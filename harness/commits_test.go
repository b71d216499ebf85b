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
		p.add(engine.Time(i), engine.Time(i), engine.Commit{ID: engine.EffectID{Off: i}})
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
