package sim

import (
	"testing"
	"unsafe"

	"ftbench/engine"
)

// A queued record costs its buffer slot: keep the slot compact (Msg's
// fields are ordered to share words; see engine.Msg).
func TestItemIsCompact(t *testing.T) {
	if got := unsafe.Sizeof(engine.Msg{}); got != 64 {
		t.Errorf("engine.Msg is %d bytes, want 64", got)
	}
	if got := unsafe.Sizeof(item{}); got != 72 {
		t.Errorf("item is %d bytes, want 72", got)
	}
}

// The receive queue keeps FIFO order across buffers of any size (empty
// ones included), hands each buffer back once its last item is taken, and
// sees every queued item in order.
func TestInQueueFIFO(t *testing.T) {
	s := &Sim{}
	var q inQueue
	next, want := uint64(0), uint64(0)
	recycled := 0
	for round := 0; round < 300; round++ {
		for k := 0; k < round%5; k++ {
			b := s.getNetBuf()
			for i := 0; i < (round+k)%7; i++ {
				b.items = append(b.items, item{seq: next})
				next++
			}
			q.push(b)
		}
		if q.n != int(next-want) {
			t.Fatalf("round %d: n = %d, want %d", round, q.n, next-want)
		}
		seen := want
		q.each(func(it *item) {
			if it.seq != seen {
				t.Fatalf("round %d: each saw %d, want %d", round, it.seq, seen)
			}
			seen++
		})
		for i := 0; i < round%11 && q.n > 0; i++ {
			if h := q.head().seq; h != want {
				t.Fatalf("head %d, want %d", h, want)
			}
			_, done := q.pop()
			want++
			if done != nil {
				recycled++
				s.putNetBuf(done)
			}
		}
	}
	for q.n > 0 {
		if _, done := q.pop(); done != nil {
			recycled++
		}
		want++
	}
	if want != next {
		t.Fatalf("took %d items, pushed %d", want, next)
	}
	if recycled == 0 || len(q.bufs) != 0 {
		t.Fatalf("recycled %d buffers, %d left queued", recycled, len(q.bufs))
	}
}
